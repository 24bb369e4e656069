/**
 * Calls between XML-like tags, each starting a line outside code and thinking:
 *
 * - Hermes / Qwen 2.5 and 3: `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`, the
 *   closer often missing; Qwen2.5-Coder also writes `<tools>` or `<function_call>` around it.
 * - GLM 4.5+: `<tool_call>Name<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>`.
 * - LM Studio's own: `[TOOL_REQUEST]{...}[END_TOOL_REQUEST]` (lmstudio-bug-tracker#456).
 * - Qwen3-Coder: `<function=Name><parameter=k>v</parameter></function>`, with or without
 *   `<tool_call>` around it, closers sometimes missing (continuedev/continue#13057); Llama
 *   3.1's `<function=Name>{json}</function>` (meta-llama/llama-models#169).
 * - MiniMax, Claude-style and DeepSeek's DSML: `<invoke name="Name"><parameter name="k">v
 *   </parameter></invoke>` inside `<minimax:tool_call>`, `<function_calls>` or
 *   `<｜DSML｜tool_calls>` (NousResearch/hermes-agent#27834, TokenRhythm/opensquilla#985).
 */
import { callFromValue, callsOf, isToolSchema } from "./call_objects.ts";
import { pythonicCalls } from "./literals.ts";
import {
  atLineStart,
  MAX_BLOCKS,
  noteSign,
  parseLoose,
  readName,
  readValue,
  type ScanContext,
  skipSpace,
} from "./scan.ts";
import { nextFinder } from "./thinking.ts";
import type { FoundBlock, RawCall, TextCallFormat } from "./types.ts";

const TAGS: ReadonlyArray<{ open: string; close: string; format: TextCallFormat }> = [
  { open: "<tool_call>", close: "</tool_call>", format: "hermes" },
  { open: "<tools>", close: "</tools>", format: "hermes" },
  { open: "<function_call>", close: "</function_call>", format: "hermes" },
  { open: "<tool_calls>", close: "</tool_calls>", format: "hermes" },
  { open: "[TOOL_REQUEST]", close: "[END_TOOL_REQUEST]", format: "lmstudio" },
];

/** A call that was cut off: its name when the text still shows it. */
export function cutOffCall(body: string): RawCall | undefined {
  const m = /["']name["']\s*:\s*["']([\w.:-]{1,100})["']/.exec(body.slice(0, 2000));
  return m ? { name: m[1]!, args: {}, problem: "the call was cut off before its end" } : undefined;
}

/** Hermes-like tags whose body is JSON, GLM's key/value pairs or a pythonic call. */
export function taggedBlocks(ctx: ScanContext): FoundBlock[] {
  const out: FoundBlock[] = [];
  for (const tag of TAGS) {
    const next = nextFinder(ctx.norm);
    let at = ctx.norm.indexOf(tag.open);
    while (at !== -1 && out.length < MAX_BLOCKS) {
      const bodyStart = at + tag.open.length;
      const close = next(tag.close, bodyStart);
      const again = next(tag.open, bodyStart);
      const bodyEnd = Math.min(close, again);
      const end = close === bodyEnd && close < ctx.norm.length ? close + tag.close.length : bodyEnd;
      if (!ctx.skip.has(at) && atLineStart(ctx.norm, at)) {
        const calls = tagBody(ctx, bodyStart, bodyEnd, tag.open);
        if (calls) {
          out.push({ start: at, end, format: calls.format ?? tag.format, calls: calls.calls });
        }
      }
      at = again < ctx.norm.length ? again : -1;
    }
  }
  return out;
}

function tagBody(
  ctx: ScanContext,
  from: number,
  to: number,
  open: string,
): { calls: RawCall[]; format?: TextCallFormat } | undefined {
  const start = skipSpace(ctx.text, from);
  const body = ctx.text.slice(start, to).trim();
  // Qwen3-Coder's own body: functionTagBlocks reads it, with these tags around it.
  if (body.startsWith("<function=")) return undefined;
  if (body.startsWith("{") || body.startsWith("[")) {
    const read = readValue(ctx.text, start, to)!;
    if (!read.complete) {
      const cut = cutOffCall(body);
      if (cut) return { calls: [cut] };
      noteSign(ctx, `a ${open} block that was cut off before its end`);
      return undefined;
    }
    const calls = callsOf(read.value);
    if (calls) return { calls };
    noteSign(
      ctx,
      isToolSchema(read.value)
        ? `a ${open} block holding a tool's definition instead of a call to it`
        : `a ${open} block whose JSON is not a call ({"name": ..., "arguments": {...}})`,
    );
    return undefined;
  }
  const glm = glmCall(body);
  if (glm) return { calls: [glm], format: "glm" };
  const pythonic = pythonicCalls(body);
  if (pythonic) return { calls: pythonic.map((c) => ({ name: c.name, args: c.args })) };
  if (body !== "") {
    noteSign(ctx, `a ${open} block whose content is not a call`);
  }
  return undefined;
}

/** GLM 4.5+: `Name` then `<arg_key>k</arg_key><arg_value>v</arg_value>` pairs, or `Name`. */
function glmCall(body: string): RawCall | undefined {
  const name = readName(body, 0);
  if (name === "" || name.includes(":")) return undefined;
  const rest = body.slice(name.length).trim();
  if (rest !== "" && !rest.startsWith("<arg_key>")) return undefined;
  const args: Record<string, unknown> = {};
  let at = 0;
  while (at < rest.length) {
    const k = rest.indexOf("<arg_key>", at);
    if (k === -1) break;
    const kEnd = rest.indexOf("</arg_key>", k);
    const v = rest.indexOf("<arg_value>", kEnd);
    const vEnd = rest.indexOf("</arg_value>", v);
    if (kEnd === -1 || v === -1 || vEnd === -1) {
      return { name, args, problem: "an <arg_key> without its <arg_value>" };
    }
    args[rest.slice(k + 9, kEnd).trim()] = rest.slice(v + 11, vEnd);
    at = vEnd + 12;
  }
  return { name, args, textValues: true };
}

/**
 * `<function=Name>` starting a line, or right after `<tool_call>`: Qwen3-Coder's parameters,
 * or Llama 3.1's JSON body. The block takes in the `<tool_call>` tags around it.
 */
export function functionTagBlocks(ctx: ScanContext): FoundBlock[] {
  const out: FoundBlock[] = [];
  const { norm, text } = ctx;
  const next = nextFinder(norm);
  const OPEN = "<function=";
  let at = norm.indexOf(OPEN);
  while (at !== -1 && out.length < MAX_BLOCKS) {
    const gt = next(">", at);
    const nameEnd = gt < norm.length ? gt : -1;
    const again = next(OPEN, at + OPEN.length);
    const name = nameEnd === -1 ? "" : text.slice(at + OPEN.length, nameEnd).trim();
    const before = precedingTag(norm, at, "<tool_call>");
    const placed = before !== undefined || atLineStart(norm, at);
    if (placed && !ctx.skip.has(at) && /^[\w.:-]{1,100}$/.test(name) && nameEnd < again) {
      const close = next("</function>", nameEnd);
      const outer = next("</tool_call>", nameEnd);
      const bodyEnd = Math.min(close, again, outer);
      let end = close === bodyEnd && close < norm.length ? close + 11 : bodyEnd;
      const tail = skipSpace(norm, end);
      if (norm.startsWith("</tool_call>", tail)) end = tail + 12;
      const body = text.slice(nameEnd + 1, bodyEnd);
      out.push({ start: before ?? at, end, ...functionBody(name, body, text, nameEnd + 1) });
    }
    at = again < norm.length ? again : -1;
  }
  return out;
}

/** Where `tag` opens right before `at` (only white space between), if it does. */
function precedingTag(norm: string, at: number, tag: string): number | undefined {
  let i = at - 1;
  while (i >= 0 && /\s/.test(norm[i]!)) i--;
  const start = i - tag.length + 1;
  return start >= 0 && norm.startsWith(tag, start) ? start : undefined;
}

function functionBody(
  name: string,
  body: string,
  text: string,
  bodyAt: number,
): { format: TextCallFormat; calls: RawCall[] } {
  if (body.trim().startsWith("{")) {
    const read = readValue(text, bodyAt, bodyAt + body.length)!;
    return {
      format: "qwen3-coder",
      calls: [callFromValue(name, read)],
    };
  }
  const args: Record<string, unknown> = {};
  const OPEN = "<parameter=";
  const next = nextFinder(body);
  let at = body.indexOf(OPEN);
  while (at !== -1) {
    const keyEnd = next(">", at);
    if (keyEnd >= body.length) break;
    const key = body.slice(at + OPEN.length, keyEnd).trim();
    const nextOpen = next(OPEN, keyEnd);
    const valueEnd = Math.min(nextOpen, next("</parameter>", keyEnd));
    args[key] = trimValue(body.slice(keyEnd + 1, valueEnd));
    at = nextOpen < body.length ? nextOpen : -1;
  }
  return { format: "qwen3-coder", calls: [{ name, args, textValues: true }] };
}

/**
 * A parameter's text without the line breaks the format puts around it
 * (`<parameter=k>\nvalue\n</parameter>`) and the space some models put after `>`.
 */
export function trimValue(raw: string): string {
  return raw.replace(/^[ \t]*\r?\n?/, "").replace(/\r?\n$/, "");
}

/** The opening tags that may wrap `<invoke>` calls, and the format each means. */
const INVOKE_PREFIXES: ReadonlyArray<readonly [string, TextCallFormat]> = [
  ["<", "minimax"],
  ["<|DSML|", "dsml"],
  ["<||DSML||", "dsml"],
];

/** `<invoke name="Name">` calls (MiniMax, Claude-style XML, DeepSeek's DSML). */
export function invokeBlocks(ctx: ScanContext): FoundBlock[] {
  const out: FoundBlock[] = [];
  const { norm, text } = ctx;
  const next = nextFinder(norm);
  const WORD = "invoke name=";
  let at = norm.indexOf(WORD);
  while (at !== -1 && out.length < MAX_BLOCKS) {
    const again = next(WORD, at + WORD.length);
    const prefix = INVOKE_PREFIXES.find(([p]) => norm.startsWith(p, at - p.length));
    const start = prefix ? at - prefix[0].length : at;
    const q = norm[at + WORD.length];
    const quoteEnd = q === '"' || q === "'" ? next(q, at + WORD.length + 1) : norm.length;
    const nameEnd = quoteEnd < norm.length ? quoteEnd : -1;
    const gt = nameEnd === -1 ? norm.length : next(">", nameEnd);
    const tagEnd = gt < norm.length ? gt : -1;
    const placed = atLineStart(norm, start) || norm[skipBack(norm, start)] === ">";
    if (prefix && placed && !ctx.skip.has(start) && tagEnd !== -1 && tagEnd < again) {
      const name = text.slice(at + WORD.length + 1, nameEnd).trim();
      const closer = prefix[0].replace("<", "</") + "invoke>";
      const close = next(closer, tagEnd);
      const bodyEnd = Math.min(close, again);
      const end = close === bodyEnd && close < norm.length ? close + closer.length : bodyEnd;
      const args = invokeParameters(norm, text, tagEnd + 1, bodyEnd);
      out.push({
        start: WRAPPERS.reduce((s, [open]) => precedingTag(norm, s, open) ?? s, start),
        end: WRAPPERS.reduce((e, [, close]) => followingTag(norm, e, close) ?? e, end),
        format: prefix[1],
        calls: [{ name, args, textValues: true }],
      });
    }
    at = again < norm.length ? again : -1;
  }
  return out;
}

/** The tags that wrap `<invoke>` calls, opening and closing. */
const WRAPPERS: ReadonlyArray<readonly [string, string]> = [
  ["<minimax:tool_call>", "</minimax:tool_call>"],
  ["<function_calls>", "</function_calls>"],
  ["<|DSML|tool_calls>", "</|DSML|tool_calls>"],
  ["<|DSML|function_calls>", "</|DSML|function_calls>"],
  ["<||DSML||tool_calls>", "</||DSML||tool_calls>"],
];

/** Where `tag` ends when it follows `at` with only white space between, if it does. */
function followingTag(norm: string, at: number, tag: string): number | undefined {
  const i = skipSpace(norm, at);
  return norm.startsWith(tag, i) ? i + tag.length : undefined;
}

/** The index of the last non-space character before `at`, or -1. */
function skipBack(text: string, at: number): number {
  let i = at - 1;
  while (i >= 0 && /\s/.test(text[i]!)) i--;
  return i;
}

/** `<parameter name="k">v</parameter>` pairs; DSML's `string="false"` values are JSON. */
function invokeParameters(norm: string, text: string, from: number, to: number) {
  const args: Record<string, unknown> = {};
  const body = norm.slice(from, to);
  const values = text.slice(from, to);
  const next = nextFinder(body);
  const WORD = "parameter name=";
  let at = body.indexOf(WORD);
  while (at !== -1) {
    const q = body[at + WORD.length];
    const nameEnd = q === '"' || q === "'" ? next(q, at + WORD.length + 1) : body.length;
    const tagEnd = nameEnd < body.length ? next(">", nameEnd) : body.length;
    if (tagEnd >= body.length) break;
    const key = values.slice(at + WORD.length + 1, nameEnd).trim();
    const attrs = body.slice(nameEnd + 1, tagEnd);
    const nextParam = next(WORD, tagEnd);
    const closeAt = next("parameter>", tagEnd);
    // The closer is `</parameter>` or DSML's `</｜DSML｜parameter>`: cut at its `</`, which
    // stands at most 9 characters before `parameter>`.
    const window = Math.max(tagEnd, closeAt - 11);
    const lead = closeAt < nextParam ? body.slice(window, closeAt).lastIndexOf("</") : -1;
    const valueEnd = lead === -1 ? nextParam : window + lead;
    const raw = trimValue(values.slice(tagEnd + 1, valueEnd));
    args[key] = /string\s*=\s*["']false["']/.test(attrs) ? parseLoose(raw) ?? raw : raw;
    at = nextParam < body.length ? nextParam : -1;
  }
  return args;
}
