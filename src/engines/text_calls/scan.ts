/**
 * The low-level reading of a reply that may hold tool calls written as text: where code and
 * thinking are (a call there is an example or a plan, never a call), the special tokens in
 * one spelling, and JSON values read from a position with their true end. Everything here
 * is a single pass over the text, with no regular expression that can backtrack over it: it
 * runs on every reply a model sends, and a reply is whatever the model wrote (4 MB of `{` or
 * of unclosed fences must cost milliseconds, not seconds).
 */
import { jsonrepair } from "jsonrepair";

export type Range = readonly [start: number, end: number];

/**
 * The most calls read from one reply: no model makes more at once, and a reply of thousands
 * of call-shaped fragments must not cost thousands of parses.
 */
export const MAX_BLOCKS = 64;

/** Sorted, non-overlapping ranges, asked by binary search. */
export class Ranges {
  readonly #starts: number[] = [];
  readonly #ends: number[] = [];

  /** From ranges in any order. */
  static of(ranges: readonly Range[]): Ranges {
    const out = new Ranges();
    for (const [a, b] of [...ranges].sort((x, y) => x[0] - y[0])) out.add(a, b);
    return out;
  }

  /**
   * Adds [a, b), which must not start before the last range added: merged with it when they
   * touch. Numbers in two arrays, no object per range: a reply may hold a million code spans.
   */
  add(a: number, b: number): void {
    if (b <= a) return;
    const last = this.#ends.length - 1;
    if (last >= 0 && a <= this.#ends[last]!) {
      this.#ends[last] = Math.max(this.#ends[last]!, b);
    } else {
      this.#starts.push(a);
      this.#ends.push(b);
    }
  }

  get size(): number {
    return this.#starts.length;
  }

  /** Whether `at` lies in one of the ranges. */
  has(at: number): boolean {
    let lo = 0;
    let hi = this.#starts.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (at < this.#starts[mid]!) hi = mid - 1;
      else if (at >= this.#ends[mid]!) lo = mid + 1;
      else return true;
    }
    return false;
  }
}

/**
 * The same text with DeepSeek's full-width bars and word marks (`<｜tool▁calls▁begin｜>`, and
 * the `‖` some servers print) in ASCII (`<|tool_calls_begin|>`). Each replaced character is
 * one UTF-16 unit, as is its replacement, so positions in one are positions in the other;
 * values are always read from the original.
 */
export function normalizeMarkers(text: string): string {
  // U+FF5C fullwidth vertical line, U+2016 double vertical line, U+2581 lower one eighth block
  return MARKER_CHARS.test(text)
    ? text.replaceAll("\uff5c", "|").replaceAll("\u2016", "|").replaceAll("\u2581", "_")
    : text;
}

const MARKER_CHARS = /[\uff5c\u2016\u2581]/;

/** True when only spaces and tabs stand between the line's start and `at`. */
export function atLineStart(text: string, at: number): boolean {
  for (let i = at - 1; i >= 0; i--) {
    const c = text[i];
    if (c === "\n") return true;
    if (c !== " " && c !== "\t") return false;
  }
  return true;
}

/** The index of the first character at or after `at` that is not white space. */
export function skipSpace(text: string, at: number): number {
  let i = at;
  while (i < text.length && /\s/.test(text[i]!)) i++;
  return i;
}

/**
 * Fenced code blocks (``` or ~~~, up to the matching fence or the end) and inline code spans,
 * read line by line. A call there is shown, not made.
 */
export function codeRanges(text: string): Ranges {
  const out = new Ranges();
  let open: { fence: string; start: number } | undefined;
  let lineStart = 0;
  // The next backtick, found once for all the lines before it.
  let tick = text.indexOf("`");
  const tickFrom = (at: number) => {
    if (tick !== -1 && tick < at) tick = text.indexOf("`", at);
    return tick;
  };
  while (lineStart <= text.length) {
    let lineEnd = text.indexOf("\n", lineStart);
    if (lineEnd === -1) lineEnd = text.length;
    const first = skipBlank(text, lineStart, lineEnd);
    if (open) {
      if (text.startsWith(open.fence, first) && onlyFence(text, first, lineEnd)) {
        out.add(open.start, lineEnd);
        open = undefined;
      }
    } else if (text.startsWith("```", first) || text.startsWith("~~~", first)) {
      open = { fence: text.slice(first, first + 3), start: lineStart };
    } else {
      let i = tickFrom(lineStart);
      while (i !== -1 && i < lineEnd) {
        const close = tickFrom(i + 1);
        if (close === -1 || close >= lineEnd) break;
        if (close > i + 1) out.add(i, close + 1);
        i = tickFrom(close + 1);
      }
    }
    lineStart = lineEnd + 1;
  }
  if (open) out.add(open.start, text.length);
  return out;
}

/** Whether text[from, to) is a fence closer: its fence character repeated, then blanks. */
function onlyFence(text: string, from: number, to: number): boolean {
  const c = text[from];
  let i = from;
  while (i < to && text[i] === c) i++;
  while (i < to && /\s/.test(text[i]!)) i++;
  return i === to;
}

/** The first index in [from, to) that is not a space or tab, or `to`. */
function skipBlank(text: string, from: number, to: number): number {
  let i = from;
  while (i < to && (text[i] === " " || text[i] === "\t")) i++;
  return i;
}

/**
 * Where the JSON-like value that opens at `start` (`{` or `[`) ends: the index after its
 * closing bracket, counting strings in double or single quotes (models write Python dicts);
 * `complete: false` when the text ends first (the value was cut off).
 */
export function valueEnd(
  text: string,
  start: number,
  limit = text.length,
): { end: number; complete: boolean } {
  let depth = 0;
  let quote = "";
  for (let i = start; i < limit; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === "\\") i++;
      else if (c === quote) quote = "";
      continue;
    }
    if (c === '"' || c === "'") quote = c;
    else if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") {
      depth--;
      if (depth <= 0) return { end: i + 1, complete: true };
    }
  }
  return { end: limit, complete: false };
}

/** Parses JSON, repairing it when it is malformed; undefined when even that fails. */
export function parseLoose(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    try {
      return JSON.parse(jsonrepair(text));
    } catch {
      return undefined;
    }
  }
}

/**
 * The JSON value that opens at `at` (after white space), looked for before `limit`: parsed
 * loosely, its end, and whether it was whole. Undefined when no `{` or `[` opens there.
 */
export function readValue(
  text: string,
  at: number,
  limit = text.length,
): { value: unknown; end: number; complete: boolean } | undefined {
  const start = skipSpace(text, at);
  const c = text[start];
  if (start >= limit || (c !== "{" && c !== "[")) return undefined;
  const { end, complete } = valueEnd(text, start, limit);
  return { value: complete ? parseLoose(text.slice(start, end)) : undefined, end, complete };
}

/** A name as models write it: letters, digits, `_`, `-`, `.`, `:`; at most 100 characters. */
export function readName(text: string, at: number): string {
  let i = at;
  while (i < text.length && i - at < 100 && /[\w.:-]/.test(text[i]!)) i++;
  return text.slice(at, i);
}

/** What every format's reader gets: the reply, its markers normalized, where not to look. */
export interface ScanContext {
  /** The reply as received: values are read from it. */
  text: string;
  /** The same with markers in one spelling (normalizeMarkers): markers are found in it. */
  norm: string;
  /** Code and thinking: nothing there is a call. */
  skip: { has(at: number): boolean };
  /** The tools offered, for formats that are only a call when they name one. */
  toolNames: readonly string[];
  /** What looked like an attempted call but could not be read, worded for the model. */
  signs: string[];
}

/** Notes what looked like an attempted call; only the first is ever said, so only it is kept. */
export function noteSign(ctx: ScanContext, sign: string): void {
  if (ctx.signs.length === 0) ctx.signs.push(sign);
}

/** Positions in any of several sets of ranges. */
export function anyOf(...sets: Ranges[]): { has(at: number): boolean } {
  return { has: (at) => sets.some((s) => s.has(at)) };
}

/** Whether `name` is one of `names`, letter case aside. */
export function offersName(names: readonly string[], name: string): boolean {
  const lower = name.toLowerCase();
  return names.some((n) => n.toLowerCase() === lower);
}
