/**
 * Where a reply thinks rather than answers. A model plans its calls while it thinks, often in
 * the very syntax it will use ("I will call <tool_call>..."), and some templates leave the
 * thinking in the content; a call there is a plan, not a call (QwenLM/Qwen3#1459: a parser
 * that read calls inside <think> ran them twice). Read on the text with markers normalized
 * (scan.ts).
 */
import type { Range } from "./scan.ts";

/** Pairs of markers that open and close thinking. */
const PAIRS: ReadonlyArray<readonly [open: string, close: string]> = [
  ["<think>", "</think>"],
  ["<thinking>", "</thinking>"],
  ["[THINK]", "[/THINK]"],
  // Gemma 4's thought channel (its chat template: <|channel>thought\n...<channel|>).
  ["<|channel>thought", "<channel|>"],
];

/** The thinking parts of `text`, as ranges (a part never closed runs to the end). */
export function thinkingRanges(text: string): Range[] {
  const out: Range[] = [];
  for (const [open, close] of PAIRS) {
    // Qwen3's template opens <think> itself: the content starts inside it, and only its end
    // is seen. Everything before a first closer without an opener is thinking.
    const firstClose = text.indexOf(close);
    const firstOpen = text.indexOf(open);
    if (firstClose !== -1 && (firstOpen === -1 || firstClose < firstOpen)) {
      out.push([0, firstClose + close.length]);
    }
    let at = firstOpen;
    while (at !== -1) {
      const end = text.indexOf(close, at + open.length);
      if (end === -1) {
        out.push([at, text.length]);
        break;
      }
      out.push([at, end + close.length]);
      at = text.indexOf(open, end + close.length);
    }
  }
  harmonyAnalysis(text, out);
  return out;
}

/**
 * gpt-oss's harmony format thinks in the analysis channel:
 * `<|channel|>analysis<|message|>...<|end|>`, the message running to `<|end|>`, the next
 * `<|start|>`, or the end.
 */
function harmonyAnalysis(text: string, out: Range[]): void {
  const open = "<|channel|>analysis";
  const next = nextFinder(text);
  let at = text.indexOf(open);
  while (at !== -1) {
    const end = Math.min(
      next("<|end|>", at),
      next("<|start|>", at),
      next("<|channel|>", at + open.length),
    );
    out.push([at, end]);
    at = end >= text.length ? -1 : text.indexOf(open, end);
  }
}

/**
 * `next(marker, from)`: the first index of `marker` at or after `from`, or the text's length.
 * Asked with growing `from`, it remembers each marker's last answer, so that a marker the text
 * lacks is looked for once, not once per question (quadratic on hostile input).
 */
export function nextFinder(text: string): (marker: string, from: number) => number {
  const last = new Map<string, number>();
  return (marker, from) => {
    const known = last.get(marker);
    if (known !== undefined && known >= from) return known;
    const found = text.indexOf(marker, from);
    const at = found === -1 ? text.length : found;
    last.set(marker, at);
    return at;
  };
}
