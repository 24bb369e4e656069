/**
 * Calls with no marker of their own, which count only when they are the whole reply (after
 * its thinking), so that an answer mentioning a call is never taken for one:
 *
 * - Llama 3.x: nothing but `{"name": ..., "parameters": {...}}` objects (`;`-separated when
 *   several; ollama/ollama#11662 for Qwen3 doing the same).
 * - Llama 3.2: nothing but `[Name(k="v"), ...]` (pythonic).
 * - GLM-4-0414: a line naming an offered tool, then its JSON arguments
 *   (ml-explore/mlx-swift-lm#491).
 * - A line `bash`, then the command: a shell block whose fence the model left out.
 * - A fenced block holding calls (in any format) that closes the reply, unless the words
 *   before it present it as an example.
 */
import { pythonicCalls } from "./literals.ts";
import {
  noteSign,
  offersName,
  type Range,
  readName,
  readValue,
  type ScanContext,
  skipSpace,
} from "./scan.ts";
import { jsonSequence } from "./token_formats.ts";
import type { FoundBlock } from "./types.ts";

/** End-of-turn tokens that leak after a call (Llama, ChatML, harmony, Mistral). */
const END_TOKENS = [
  "<|eom_id|>",
  "<|eot_id|>",
  "<|eom|>",
  "<|end|>",
  "<|im_end|>",
  "<|return|>",
  "</s>",
];

/** Shell names a model puts on the line before a command it meant to run. */
const SHELL_LINES = new Set(["bash", "sh", "shell", "zsh"]);

/** Words that present what follows as an illustration rather than a call. */
const EXAMPLE_WORDS = /\b(example|for instance|e\.g\.|format|syntax)\b/i;

/** The reader of marked formats, for what a closing fence holds. */
export type MarkedReader = (text: string, toolNames: readonly string[]) => FoundBlock[];

/** Calls that are the whole reply, or the fence that closes it. */
export function wholeReplyBlocks(
  ctx: ScanContext,
  thinking: readonly Range[],
  marked: MarkedReader,
): FoundBlock[] {
  const { text } = ctx;
  const start = afterThinking(text, thinking);
  const end = withoutEndTokens(text, start);
  const tail = text.slice(start, end);
  if (tail.trim() === "") return [];
  const lead = start + (tail.length - tail.trimStart().length);
  const body = tail.trim();
  const whole = (format: FoundBlock["format"], calls: FoundBlock["calls"]): FoundBlock[] => [
    { start: lead, end, format, calls },
  ];
  if (body.startsWith("{") || body.startsWith("[{")) {
    const calls = jsonSequence(body);
    if (calls) return whole("llama-json", calls);
  }
  if (/^\[?[\w.-]+\(/.test(body)) {
    const calls = pythonicCalls(body);
    const listed = body.startsWith("[");
    if (calls && (listed || calls.every((c) => offersName(ctx.toolNames, c.name)))) {
      return whole("pythonic", calls.map((c) => ({ name: c.name, args: c.args })));
    }
  }
  const named = namedJson(ctx, body);
  if (named) return whole("glm-markerless", [named]);
  const shell = shellLine(ctx, body);
  if (shell) return whole("bash-line", [shell]);
  return closingFence(ctx, lead, end, marked);
}

/** Where the reply's answer starts: after the thinking that opens it. */
function afterThinking(text: string, thinking: readonly Range[]): number {
  const sorted = [...thinking].sort((a, b) => a[0] - b[0]);
  let at = skipSpace(text, 0);
  for (const [a, b] of sorted) {
    if (a <= at && b > at) at = skipSpace(text, b);
  }
  return at;
}

/** The end of `text` without the end-of-turn tokens and white space that trail it. */
function withoutEndTokens(text: string, start: number): number {
  let end = text.length;
  while (true) {
    while (end > start && /\s/.test(text[end - 1]!)) end--;
    const token = END_TOKENS.find((t) =>
      end - t.length >= start && text.startsWith(t, end - t.length)
    );
    if (!token) return end;
    end -= token.length;
  }
}

/** GLM-4-0414: `Name` alone on the first line, then a JSON object and nothing else. */
function namedJson(ctx: ScanContext, body: string) {
  const name = readName(body, 0);
  if (name === "" || body[name.length] !== "\n" && body[name.length] !== "\r") return undefined;
  const read = readValue(body, name.length);
  if (!read || !read.complete || body.slice(read.end).trim() !== "") return undefined;
  if (!offersName(ctx.toolNames, name)) {
    noteSign(ctx, `a line naming "${name}" followed by JSON arguments`);
    return undefined;
  }
  return read.value === undefined
    ? { name, args: {}, problem: "its JSON arguments could not be read" }
    : { name, args: read.value };
}

/** A line `bash` (or `sh`...), then the command, and Bash offered. */
function shellLine(ctx: ScanContext, body: string) {
  const newline = body.indexOf("\n");
  if (newline === -1) return undefined;
  const first = body.slice(0, newline).trim().toLowerCase().replace(/:$/, "");
  const command = body.slice(newline + 1).trim();
  if (!SHELL_LINES.has(first) || command === "" || command.includes("```")) return undefined;
  const bash = ctx.toolNames.find((n) => n.toLowerCase() === "bash");
  return bash ? { name: bash, args: { command } } : undefined;
}

/**
 * Fenced blocks that close the reply, one after another, each holding calls: those calls,
 * each block replaced whole. Another fence earlier, or words presenting the block as an
 * example, make it an illustration.
 */
function closingFence(
  ctx: ScanContext,
  lead: number,
  end: number,
  marked: MarkedReader,
): FoundBlock[] {
  const fences = closingFences(ctx.text, lead, end);
  if (fences.length === 0) return [];
  const before = ctx.text.slice(lead, fences[0]!.start);
  if (before.includes("```") || before.includes("~~~") || EXAMPLE_WORDS.test(before)) return [];
  const out: FoundBlock[] = [];
  for (const f of fences) {
    const inner = ctx.text.slice(f.innerStart, f.innerEnd);
    const body = inner.trim();
    const json = body.startsWith("{") || body.startsWith("[{") ? jsonSequence(body) : undefined;
    const found = json
      ? [{ start: 0, end: inner.length, format: "fenced-json" as const, calls: json }]
      : marked(inner, ctx.toolNames);
    if (found.length === 0) return [];
    out.push({
      start: f.start,
      end: f.end,
      format: found[0]!.format,
      calls: found.flatMap((b) => b.calls),
    });
  }
  return out;
}

interface Fence {
  start: number;
  end: number;
  innerStart: number;
  innerEnd: number;
}

/** The fenced blocks that end text[lead, end), in reply order. */
function closingFences(text: string, lead: number, end: number): Fence[] {
  const lines: Array<{ start: number; end: number; text: string }> = [];
  let at = lead;
  while (at < end) {
    let e = text.indexOf("\n", at);
    if (e === -1 || e > end) e = end;
    lines.push({ start: at, end: e, text: text.slice(at, e).trim() });
    at = e + 1;
  }
  const out: Fence[] = [];
  let i = lines.length - 1;
  while (i >= 0) {
    while (i >= 0 && lines[i]!.text === "") i--;
    if (i < 0) break;
    const close = lines[i]!;
    if (!/^(`{3,}|~{3,})$/.test(close.text)) break;
    const mark = close.text.slice(0, 3);
    let j = i - 1;
    while (j >= 0 && !lines[j]!.text.startsWith(mark)) j--;
    if (j < 0) break;
    const open = lines[j]!;
    out.unshift({
      start: open.start,
      end: close.end,
      innerStart: Math.min(open.end + 1, close.start),
      innerEnd: close.start,
    });
    i = j - 1;
  }
  return out;
}
