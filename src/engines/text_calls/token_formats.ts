/**
 * Calls marked by a model's special tokens, which leak into content as text when the server's
 * parser misses them. Such tokens never occur in prose, so they count wherever they stand
 * outside code and thinking:
 *
 * - gpt-oss (harmony): `<|channel|>commentary to=functions.Name <|constrain|>json<|message|>
 *   {...}<|call|>`, also with the tokens stripped: `commentary to=functions.Name json{...}`
 *   (raullenchai/Rapid-MLX#480).
 * - DeepSeek V3/R1: `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>Name`
 *   and a fenced JSON block; V3.1: `<｜tool▁call▁begin｜>Name<｜tool▁sep｜>{...}`
 *   (google/adk-python#5654).
 * - Kimi K2: `<|tool_calls_section_begin|><|tool_call_begin|>functions.Name:0
 *   <|tool_call_argument_begin|>{...}<|tool_call_end|>`.
 * - Gemma 4: `<|tool_call>call:Name{k:<|"|>v<|"|>}<tool_call|>`, or `call:Name{...}` starting
 *   a line when the opening token is lost (NousResearch/hermes-agent#38376, #48412).
 * - Llama 3.1 `<|python_tag|>{...}` and Llama 4 `<|python_start|>[Name(k=v)]<|python_end|>`.
 * - Mistral: `[TOOL_CALLS][{...}]` (v3, often in Python quotes, prose after it:
 *   vllm-project/vllm#5649) and `[TOOL_CALLS]Name[ARGS]{...}` (v11, Devstral).
 */
import { callFromValue, callsOf } from "./call_objects.ts";
import { LiteralReader, pythonicCalls } from "./literals.ts";
import {
  atLineStart,
  MAX_BLOCKS,
  noteSign,
  readName,
  readValue,
  type ScanContext,
  skipSpace,
} from "./scan.ts";
import { cutOffCall } from "./tagged_formats.ts";
import { nextFinder } from "./thinking.ts";
import type { FoundBlock, RawCall, TextCallFormat } from "./types.ts";

/** gpt-oss's harmony calls: a recipient `to=functions.Name` and a JSON message. */
export function harmonyBlocks(ctx: ScanContext): FoundBlock[] {
  const out: FoundBlock[] = [];
  const { norm, text } = ctx;
  const next = nextFinder(norm);
  const TO = "to=functions.";
  let at = norm.indexOf(TO);
  while (at !== -1 && out.length < MAX_BLOCKS) {
    const again = next(TO, at + TO.length);
    if (!ctx.skip.has(at)) {
      const name = readName(norm, at + TO.length).replace(/[.:]+$/, "");
      const after = at + TO.length + name.length;
      const message = next("<|message|>", after);
      const argsAt = message < again && message - after < 200 ? message + 11 : after;
      const start = harmonyStart(norm, at);
      const read = name === "" ? undefined : harmonyArgs(text, argsAt, again);
      if (read) {
        let end = read.end;
        const tail = skipSpace(norm, end);
        if (norm.startsWith("<|call|>", tail)) end = tail + 8;
        out.push({ start, end, format: "harmony", calls: [read.call(name)] });
      } else {
        noteSign(ctx, `a harmony call to "${name}" with no JSON arguments after it`);
      }
    }
    at = again < norm.length ? again : -1;
  }
  return out;
}

function harmonyArgs(text: string, from: number, limit: number) {
  let at = skipSpace(text, from);
  // Without its tokens the header reads `... json{...}`; with them, `<|constrain|>json`.
  for (const word of ["<|constrain|>", "json", "<|message|>"]) {
    if (text.startsWith(word, at)) at = skipSpace(text, at + word.length);
  }
  const read = readValue(text, at, limit);
  if (!read) return undefined;
  return {
    end: read.end,
    call: (name: string): RawCall => callFromValue(name, read),
  };
}

/**
 * Where the header of the harmony message holding `to=` at `at` starts: its `<|channel|>` (and
 * a `<|start|>assistant` right before), or the word `commentary` when the tokens were lost.
 */
function harmonyStart(norm: string, at: number): number {
  const window = norm.slice(Math.max(0, at - 80), at);
  const base = Math.max(0, at - 80);
  const lastMessage = window.lastIndexOf("<|message|>");
  const candidates = ["<|start|>", "<|channel|>"]
    .map((t) => window.lastIndexOf(t))
    .filter((i) => i > lastMessage);
  let start = candidates.length > 0 ? base + Math.min(...candidates) : at;
  if (candidates.length === 0) {
    const word = window.lastIndexOf("commentary");
    if (word !== -1 && !window.slice(word).includes("\n")) start = base + word;
  }
  const assistant = "<|start|>assistant";
  if (norm.slice(Math.max(0, start - assistant.length), start) === assistant) {
    start -= assistant.length;
  }
  return start;
}

/** DeepSeek's and Kimi K2's calls, between `<|tool_call_begin|>` and `<|tool_call_end|>`. */
export function deepseekBlocks(ctx: ScanContext): FoundBlock[] {
  const out: FoundBlock[] = [];
  const { norm, text } = ctx;
  const next = nextFinder(norm);
  const BEGIN = "<|tool_call_begin|>";
  let at = norm.indexOf(BEGIN);
  while (at !== -1 && out.length < MAX_BLOCKS) {
    const again = next(BEGIN, at + BEGIN.length);
    const close = next("<|tool_call_end|>", at);
    const sectionEnd = Math.min(
      next("<|tool_calls_end|>", at),
      next("<|tool_calls_section_end|>", at),
    );
    const bodyEnd = Math.min(again, close, sectionEnd);
    if (!ctx.skip.has(at)) {
      // The full-width spelling is DeepSeek's; Kimi writes the same tokens in ASCII.
      const format: TextCallFormat = text[at + 1] === "|" ? "kimi-k2" : "deepseek";
      const call = deepseekCall(norm, text, at + BEGIN.length, bodyEnd);
      if (call) {
        let start = at;
        for (const section of ["<|tool_calls_begin|>", "<|tool_calls_section_begin|>"]) {
          const s = precedingToken(norm, start, section);
          if (s !== undefined) start = s;
        }
        let end = close === bodyEnd && close < norm.length ? close + 17 : bodyEnd;
        for (const section of ["<|tool_calls_end|>", "<|tool_calls_section_end|>"]) {
          const tail = skipSpace(norm, end);
          if (norm.startsWith(section, tail)) end = tail + section.length;
        }
        out.push({ start, end, format, calls: [call] });
      } else {
        noteSign(ctx, "a tool-call token with no call that can be read after it");
      }
    }
    at = again < norm.length ? again : -1;
  }
  return out;
}

function precedingToken(norm: string, at: number, token: string): number | undefined {
  let i = at - 1;
  while (i >= 0 && /\s/.test(norm[i]!)) i--;
  const start = i - token.length + 1;
  return start >= 0 && norm.startsWith(token, start) ? start : undefined;
}

function deepseekCall(norm: string, text: string, from: number, to: number): RawCall | undefined {
  const body = norm.slice(from, to);
  let head: string;
  let argsAt: number;
  const sep = body.indexOf("<|tool_sep|>");
  const argTok = body.indexOf("<|tool_call_argument_begin|>");
  if (argTok !== -1) {
    head = body.slice(0, argTok);
    argsAt = from + argTok + 28;
  } else if (sep !== -1) {
    const left = body.slice(0, sep).trim();
    if (left === "function") {
      // V3/R1: `function<|tool_sep|>Name\n```json\n{...}\n````
      const line = body.indexOf("\n", sep);
      head = body.slice(sep + 12, line === -1 ? body.length : line);
      argsAt = line === -1 ? to : from + line;
    } else {
      head = left;
      argsAt = from + sep + 12;
    }
  } else {
    // Kimi without the argument token: `functions.Name:0 {...}`.
    const brace = body.indexOf("{");
    head = body.slice(0, brace === -1 ? body.length : brace);
    argsAt = brace === -1 ? to : from + brace;
  }
  const name = head.trim().replace(/^functions\./, "").replace(/:\d+$/, "");
  if (!/^[\w.-]{1,100}$/.test(name)) return undefined;
  let at = skipSpace(text, argsAt);
  if (text.startsWith("```", at)) at = text.indexOf("\n", at) + 1 || to;
  const read = readValue(text, at, to);
  if (!read) return { name, args: {}, problem: "the call has no JSON arguments" };
  return callFromValue(name, read);
}

/** Gemma 4: `<|tool_call>call:Name{...}<tool_call|>`, or `call:Name{...}` starting a line. */
export function gemmaBlocks(ctx: ScanContext): FoundBlock[] {
  const out: FoundBlock[] = [];
  const { norm, text } = ctx;
  const next = nextFinder(norm);
  const CALL = "call:";
  const OPEN = "<|tool_call>";
  const CLOSE = "<tool_call|>";
  let at = norm.indexOf(CALL);
  while (at !== -1 && out.length < MAX_BLOCKS) {
    const again = next(CALL, at + CALL.length);
    const opened = norm.startsWith(OPEN, at - OPEN.length);
    if ((opened || atLineStart(norm, at)) && !ctx.skip.has(at)) {
      const name = readName(norm, at + CALL.length).replace(/:+$/, "");
      const open = at + CALL.length + name.length;
      const bracket = norm[open];
      const close = next(CLOSE, open);
      const limit = Math.min(close, again);
      if (name !== "" && (bracket === "{" || bracket === "(") && (opened || name.length > 0)) {
        const reader = new LiteralReader(text, open + 1, limit);
        const args = reader.named(bracket === "{" ? "}" : ")");
        let end = args ? reader.at : limit;
        const tail = skipSpace(norm, end);
        if (norm.startsWith(CLOSE, tail)) end = tail + CLOSE.length;
        const call: RawCall = args
          ? { name, args: args.value }
          : { name, args: {}, problem: "its arguments could not be read" };
        out.push({ start: opened ? at - OPEN.length : at, end, format: "gemma4", calls: [call] });
      } else if (opened) {
        noteSign(ctx, "Gemma's <|tool_call> token without a call:Name{...} after it");
      }
    }
    at = again < norm.length ? again : -1;
  }
  return out;
}

/** Llama 3.1's `<|python_tag|>` and Llama 4's `<|python_start|>`, then JSON or pythonic calls. */
export function pythonTagBlocks(ctx: ScanContext): FoundBlock[] {
  const out: FoundBlock[] = [];
  const { norm, text } = ctx;
  for (
    const [tag, format] of [["<|python_tag|>", "python-tag"], [
      "<|python_start|>",
      "llama4-python",
    ]] as const
  ) {
    const next = nextFinder(norm);
    let at = norm.indexOf(tag);
    while (at !== -1 && out.length < MAX_BLOCKS) {
      const again = next(tag, at + tag.length);
      const stop = Math.min(
        again,
        next("<|python_end|>", at),
        next("<|eom_id|>", at),
        next("<|eot_id|>", at),
      );
      if (!ctx.skip.has(at)) {
        const body = text.slice(at + tag.length, stop);
        const calls = bodyCalls(body);
        if (calls) {
          let end = stop;
          for (const endTag of ["<|python_end|>", "<|eom_id|>", "<|eot_id|>"]) {
            if (norm.startsWith(endTag, end)) end += endTag.length;
          }
          out.push({ start: at, end, format, calls });
        } else {
          noteSign(ctx, `${tag} without a call that can be read after it`);
        }
      }
      at = again < norm.length ? again : -1;
    }
  }
  return out;
}

/** JSON call objects (`;`- or `,`-separated, or a list) or pythonic calls, and nothing else. */
export function bodyCalls(body: string): RawCall[] | undefined {
  const trimmed = body.trim();
  if (trimmed.startsWith("{") || trimmed.startsWith("[{")) return jsonSequence(trimmed);
  const pythonic = pythonicCalls(trimmed);
  return pythonic?.map((c) => ({ name: c.name, args: c.args }));
}

/**
 * Call objects one after another, separated by `;`, `,` or white space, or in one list, and
 * nothing else: Llama's bare JSON calls. A last object cut off is a call that was cut off.
 */
export function jsonSequence(text: string): RawCall[] | undefined {
  const list = text.startsWith("[") ? readValue(text, 0) : undefined;
  if (list?.complete && text.slice(list.end).trim() === "") return callsOf(list.value);
  const out: RawCall[] = [];
  let at = 0;
  while (true) {
    at = skipSpace(text, at);
    if (at >= text.length) break;
    const read = readValue(text, at);
    if (!read || read.value === undefined && read.complete) return undefined;
    if (!read.complete) {
      const cut = cutOffCall(text.slice(at));
      if (!cut) return undefined;
      out.push(cut);
      break;
    }
    const calls = callsOf(read.value);
    if (!calls) return undefined;
    out.push(...calls);
    at = skipSpace(text, read.end);
    if (text[at] === ";" || text[at] === ",") at++;
  }
  return out.length > 0 ? out : undefined;
}

/** Mistral's `[TOOL_CALLS]`, then a JSON list (v3) or `Name[ARGS]{...}` (v11). */
export function mistralBlocks(ctx: ScanContext): FoundBlock[] {
  const out: FoundBlock[] = [];
  const { norm, text } = ctx;
  const next = nextFinder(norm);
  const TOKEN = "[TOOL_CALLS]";
  let at = norm.indexOf(TOKEN);
  while (at !== -1 && out.length < MAX_BLOCKS) {
    const again = next(TOKEN, at + TOKEN.length);
    if (!ctx.skip.has(at)) {
      const found = mistralCalls(text, at + TOKEN.length, again);
      if (found?.calls.length) {
        out.push({ start: at, end: found.end, format: "mistral", calls: found.calls });
      } else if (found) {
        noteSign(ctx, "[TOOL_CALLS] followed by a call that cannot be read");
      }
    }
    at = again < norm.length ? again : -1;
  }
  return [...out, ...argsBlocks(ctx)];
}

/**
 * `Name[ARGS]{...}` starting a line without its `[TOOL_CALLS]` (a server that strips special
 * tokens: ml-explore/mlx-lm#1374); inside a `[TOOL_CALLS]` block it is that block's.
 */
function argsBlocks(ctx: ScanContext): FoundBlock[] {
  const out: FoundBlock[] = [];
  const { norm, text } = ctx;
  const ARGS = "[ARGS]";
  let at = norm.indexOf(ARGS);
  while (at !== -1 && out.length < MAX_BLOCKS) {
    let start = at;
    while (start > 0 && /[\w.-]/.test(norm[start - 1]!) && at - start < 100) start--;
    if (start < at && atLineStart(norm, start) && !ctx.skip.has(start)) {
      const next = norm.indexOf(ARGS, at + ARGS.length);
      const read = readValue(text, at + ARGS.length, next === -1 ? text.length : next);
      if (read) {
        out.push({
          start,
          end: read.end,
          format: "mistral",
          calls: [callFromValue(text.slice(start, at), read)],
        });
      }
    }
    at = norm.indexOf(ARGS, at + ARGS.length);
  }
  return out;
}

function mistralCalls(text: string, from: number, limit: number) {
  const at = skipSpace(text, from);
  if (text[at] === "[" || text[at] === "{") {
    const read = readValue(text, at, limit)!;
    if (!read.complete) {
      const cut = cutOffCall(text.slice(at, limit));
      return { calls: cut ? [cut] : [], end: read.end };
    }
    return { calls: callsOf(read.value) ?? [], end: read.end };
  }
  const name = readName(text, at).replace(/:+$/, "");
  if (name === "") return undefined;
  let argsAt = at + name.length;
  // v11 writes `Name[ARGS]{...}`; Magistral puts `[CALL_ID]id` before `[ARGS]`.
  if (text.startsWith("[CALL_ID]", argsAt)) {
    argsAt = skipSpace(text, argsAt + 9);
    argsAt += readName(text, argsAt).length;
  }
  if (text.startsWith("[ARGS]", argsAt)) argsAt += 6;
  const read = readValue(text, argsAt, limit);
  // `[TOOL_CALLS] followed by prose` names the token; it is not a call.
  if (!read) return undefined;
  return { calls: [callFromValue(name, read)], end: read.end };
}
