/**
 * Where a reply holds tool calls written as text, format by format (Hermes, Qwen3-Coder,
 * Mistral, Llama's python tag and bare JSON, a fenced JSON block at the end), and only where
 * the text is a call rather than an example: tags must start a line outside code, a bare JSON
 * call must be the whole reply, a fenced call must close the reply.
 */
import { isObject, type Json, type OfferedTool, parseLoose } from "./arguments.ts";

export type TextCallFormat =
  | "hermes"
  | "qwen3-coder"
  | "llama-json"
  | "python-tag"
  | "mistral"
  | "fenced-json";

/** Where in the reply calls were found, in which format. */
export interface FoundCalls {
  start: number;
  end: number;
  calls: Array<{ name: string; args: unknown }>;
  format: TextCallFormat;
}

/**
 * The calls written as text in `text`, in reply order: the tagged formats (Hermes and
 * Qwen3-Coder) together, else the others one by one from the most explicit to the least (a
 * fenced block), the first that finds any winning.
 */
export function findTextCalls(text: string, tools: OfferedTool[]): FoundCalls[] {
  const code = codeRanges(text);
  let found = [...hermes(text, code), ...qwenCoder(text, code, tools)];
  if (found.length === 0) found = mistral(text, code);
  if (found.length === 0) found = pythonTag(text, code);
  if (found.length === 0) found = wholeReply(text);
  if (found.length === 0) found = fencedAtEnd(text);
  return found.sort((a, b) => a.start - b.start);
}

/** Ranges of fenced code blocks and inline code spans, where a call is only an example. */
function codeRanges(text: string): Array<[number, number]> {
  const ranges: Array<[number, number]> = [];
  const fence = /^[ \t]*(```|~~~)[^\n]*\n[\s\S]*?^[ \t]*\1[ \t]*$/gm;
  for (const m of text.matchAll(fence)) ranges.push([m.index!, m.index! + m[0].length]);
  const inline = /`[^`\n]+`/g;
  for (const m of text.matchAll(inline)) {
    if (!ranges.some(([a, b]) => m.index! >= a && m.index! < b)) {
      ranges.push([m.index!, m.index! + m[0].length]);
    }
  }
  return ranges;
}

const inCode = (ranges: Array<[number, number]>, at: number) =>
  ranges.some(([a, b]) => at >= a && at < b);

/** True when `at` starts a line (only spaces before it on that line). */
function atLineStart(text: string, at: number): boolean {
  const lineStart = text.lastIndexOf("\n", at - 1) + 1;
  return text.slice(lineStart, at).trim() === "";
}

/** `{name, arguments|parameters}` from a parsed call object, or undefined. */
function callOf(value: unknown): { name: string; args: unknown } | undefined {
  if (!isObject(value)) return undefined;
  const fn = isObject(value.function) ? value.function : value;
  const name = fn.name;
  if (typeof name !== "string") return undefined;
  const args = fn.arguments ?? fn.parameters ?? {};
  return { name, args: typeof args === "string" ? parseLoose(args) ?? args : args };
}

/** Converts a Qwen3-Coder parameter's text to the type the schema asks for. */
function typedValue(raw: string, schema: Json | undefined): unknown {
  const text = raw.replace(/^\n/, "").replace(/\n$/, "");
  switch (schema?.type) {
    case "integer":
    case "number": {
      const n = Number(text.trim());
      return Number.isFinite(n) ? n : text;
    }
    case "boolean":
      return text.trim() === "true" ? true : text.trim() === "false" ? false : text;
    case "object":
    case "array":
      return parseLoose(text) ?? text;
    default:
      return text;
  }
}

function hermes(text: string, code: Array<[number, number]>): FoundCalls[] {
  const out: FoundCalls[] = [];
  for (const m of text.matchAll(/<tool_call>\s*([\s\S]*?)\s*(?:<\/tool_call>|$)/g)) {
    if (inCode(code, m.index!) || !atLineStart(text, m.index!)) continue;
    const body = m[1]!.trim();
    if (body.startsWith("<function=")) continue; // Qwen3-Coder's own body, read below
    const call = callOf(parseLoose(body));
    if (call) {
      out.push({ start: m.index!, end: m.index! + m[0].length, calls: [call], format: "hermes" });
    }
  }
  return out;
}

function qwenCoder(
  text: string,
  code: Array<[number, number]>,
  tools: OfferedTool[],
): FoundCalls[] {
  const out: FoundCalls[] = [];
  const pattern =
    /(?:<tool_call>\s*)?<function=([\w.-]+)>([\s\S]*?)<\/function>(?:\s*<\/tool_call>)?/g;
  for (const m of text.matchAll(pattern)) {
    if (inCode(code, m.index!) || !atLineStart(text, m.index!)) continue;
    const name = m[1]!;
    const schema = tools.find((t) => t.name === name)?.parameters.properties;
    const args: Json = {};
    for (const p of m[2]!.matchAll(/<parameter=([\w.-]+)>([\s\S]*?)<\/parameter>/g)) {
      args[p[1]!] = typedValue(p[2]!, schema?.[p[1]!]);
    }
    out.push({
      start: m.index!,
      end: m.index! + m[0].length,
      calls: [{ name, args }],
      format: "qwen3-coder",
    });
  }
  return out;
}

function mistral(text: string, code: Array<[number, number]>): FoundCalls[] {
  const at = text.indexOf("[TOOL_CALLS]");
  if (at === -1 || inCode(code, at) || !atLineStart(text, at)) return [];
  const rest = text.slice(at + "[TOOL_CALLS]".length).trim();
  const parsed = parseLoose(rest);
  const list = Array.isArray(parsed) ? parsed : [parsed];
  const calls = list.map(callOf).filter((c) => c !== undefined);
  return calls.length > 0 ? [{ start: at, end: text.length, calls, format: "mistral" }] : [];
}

/** Llama's end-of-message tokens, which leak into content after a call. */
const END_TOKENS = /(?:\s*<\|(?:eom_id|eot_id|eom|end)\|>)+\s*$/;

/**
 * Top-level JSON objects in `text`, which must hold nothing else but separators (`;`, `,`,
 * white space) and an optional enclosing list; undefined when anything else is there.
 */
function objectSequence(text: string): string[] | undefined {
  let body = text.trim();
  if (body.startsWith("[") && body.endsWith("]")) body = body.slice(1, -1);
  const out: string[] = [];
  let depth = 0;
  let inString = false;
  let start = -1;
  for (let i = 0; i < body.length; i++) {
    const ch = body[i]!;
    if (inString) {
      if (ch === "\\") i++;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') {
      if (depth === 0) return undefined;
      inString = true;
    } else if (ch === "{") {
      if (depth++ === 0) start = i;
    } else if (ch === "}") {
      if (--depth < 0) return undefined;
      if (depth === 0) out.push(body.slice(start, i + 1));
    } else if (depth === 0 && !/[\s;,]/.test(ch)) {
      return undefined;
    }
  }
  if (depth !== 0) out.push(body.slice(start)); // cut short: jsonrepair may close it
  return out.length > 0 ? out : undefined;
}

function callSequence(text: string): Array<{ name: string; args: unknown }> | undefined {
  const objects = objectSequence(text.replace(END_TOKENS, ""));
  if (!objects) return undefined;
  const calls = objects.map((o) => callOf(parseLoose(o)));
  return calls.every((c) => c !== undefined)
    ? calls as Array<{ name: string; args: unknown }>
    : undefined;
}

/** Llama 3.x: `<|python_tag|>` starting a line, the call (or calls) after it. */
function pythonTag(text: string, code: Array<[number, number]>): FoundCalls[] {
  const at = text.indexOf("<|python_tag|>");
  if (at === -1 || inCode(code, at) || !atLineStart(text, at)) return [];
  const calls = callSequence(text.slice(at + "<|python_tag|>".length));
  return calls ? [{ start: at, end: text.length, calls, format: "python-tag" }] : [];
}

/** Llama 3.x: a reply that is nothing but call objects (`;`-separated when several). */
function wholeReply(text: string): FoundCalls[] {
  const calls = callSequence(text);
  return calls ? [{ start: 0, end: text.length, calls, format: "llama-json" }] : [];
}

/** A reply that ends with fenced JSON blocks holding one call each, one after another. */
function fencedAtEnd(text: string): FoundCalls[] {
  const blocks = [...text.matchAll(/```(?:json)?[ \t]*\n([\s\S]*?)\n[ \t]*```/g)];
  const found: FoundCalls[] = [];
  let end = text.trimEnd().length;
  // Walk back from the end while blocks follow each other with only white space between.
  for (let i = blocks.length - 1; i >= 0; i--) {
    const m = blocks[i]!;
    if (text.slice(m.index! + m[0].length, end).trim() !== "") break;
    const call = callOf(parseLoose(m[1]!.trim()));
    if (!call) return [];
    found.unshift({
      start: m.index!,
      end: m.index! + m[0].length,
      calls: [call],
      format: "fenced-json",
    });
    end = m.index!;
  }
  if (found.length === 0) return [];
  const before = text.slice(0, found[0]!.start);
  // Another block, or prose that presents the block as an example, makes it illustration.
  if (before.includes("```") || /\b(example|for instance|e\.g\.|format|syntax)\b/i.test(before)) {
    return [];
  }
  return found;
}
