/**
 * A reply that looks like an attempted tool call although no call could be read from it: a
 * model's special tokens leaked with nothing readable after them (DeepSeek's begin token
 * repeated: sgl-project/sglang#5224), an imitation of a client's own call text
 * (`[Calling tool: ...]`, NousResearch/hermes-agent#27834), Gemini's internal call syntax
 * (hermes-agent#74771), a JSON object shaped like a call but not one, or a tool's schema
 * echoed back. Such a reply is no answer; the model is told so and asked again. Markers count
 * outside code and thinking; the plain-ASCII ones only where they start a line, so that prose
 * naming a tag is left alone.
 */
import { isObject } from "../../platform/json_object.ts";
import { isToolSchema } from "./call_objects.ts";
import {
  atLineStart,
  offersName,
  type Range,
  readValue,
  type ScanContext,
  skipSpace,
} from "./scan.ts";

/** Tokens no prose contains, in their normalized spelling (scan.ts normalizeMarkers). */
const TOKENS: readonly string[] = [
  "<|tool_call>",
  "<tool_call|>",
  "<|python_tag|>",
  "<|python_start|>",
  "<|channel|>commentary",
  "<|constrain|>",
  "<|call|>",
  "to=functions.",
  "<|tool_calls_begin|>",
  "<|tool_call_begin|>",
  "<|tool_sep|>",
  "<|tool_calls_section_begin|>",
  "<|tool_call_argument_begin|>",
  "|DSML|",
  "<minimax:tool_call>",
  "[TOOL_REQUEST]",
  "[ARGS]",
  "declaration:default_api:",
];

/** Markers that count where they start a line. */
const LINE_MARKERS: readonly string[] = [
  "<tool_call>",
  "</tool_call>",
  "<function=",
  "<invoke ",
  "<function_calls>",
  "<tool_calls>",
  "[Calling tool",
  "[Tool call",
  "[SYSTEM: Tool",
  "commentary to=",
];

/** Keys that name the tool in a call object. */
const NAME_KEYS = /["'](name|toolName|tool_name|function)["']/;

/** Keys that make a JSON object a call rather than data. */
const CALL_KEYS = /["'](arguments|parameters|input|args|toolName|tool_use|tool-call)["']/;

/** What in the reply looks like an attempted call, worded for the model; undefined if none. */
export function attemptSign(ctx: ScanContext, thinking: readonly Range[]): string | undefined {
  const { norm } = ctx;
  for (const token of TOKENS) {
    let at = norm.indexOf(token);
    while (at !== -1 && ctx.skip.has(at)) at = norm.indexOf(token, at + token.length);
    if (at !== -1) return `the special text "${token}" without a call that can be read`;
  }
  for (const marker of LINE_MARKERS) {
    let at = norm.indexOf(marker);
    while (at !== -1 && (ctx.skip.has(at) || !atLineStart(norm, at))) {
      at = norm.indexOf(marker, at + marker.length);
    }
    if (at !== -1) return `a line starting with "${marker}" that is not a call that can be read`;
  }
  const mistral = mistralToken(ctx);
  if (mistral) return mistral;
  return wholeReplySign(ctx, thinking);
}

/** `[TOOL_CALLS]` followed by what can only be a call: a list, an object, `Name[ARGS]`. */
function mistralToken(ctx: ScanContext): string | undefined {
  let at = ctx.norm.indexOf("[TOOL_CALLS]");
  while (at !== -1) {
    const next = skipSpace(ctx.norm, at + 12);
    const rest = ctx.norm.slice(next, next + 120);
    if (!ctx.skip.has(at) && /^(\[|\{|[\w.-]+\s*(\[ARGS\]|\{))/.test(rest)) {
      return "[TOOL_CALLS] followed by a call that cannot be read";
    }
    at = ctx.norm.indexOf("[TOOL_CALLS]", at + 12);
  }
  return undefined;
}

/**
 * A whole reply of JSON shaped like a call that is none (unreadable, or the definition of an
 * offered tool echoed back), or a name line then JSON. JSON that reads as data, a schema of a
 * tool this engine does not offer included, is an answer: a model asked to write one.
 */
function wholeReplySign(ctx: ScanContext, thinking: readonly Range[]): string | undefined {
  let at = skipSpace(ctx.text, 0);
  for (const [a, b] of [...thinking].sort((x, y) => x[0] - y[0])) {
    if (a <= at && b > at) at = skipSpace(ctx.text, b);
  }
  let body = ctx.text.slice(at).trim();
  if (body.startsWith("```")) {
    body = body.slice(body.indexOf("\n") + 1).replace(/`{3,}\s*$/, "").trim();
  }
  const head = body.slice(0, 4000);
  if ((head.startsWith("{") || head.startsWith("[")) && NAME_KEYS.test(head)) {
    if (CALL_KEYS.test(head) || /["']type["']\s*:\s*["']function["']/.test(head)) {
      const read = readValue(body, 0);
      if (!read?.complete || read.value === undefined) {
        return "a JSON object shaped like a tool call that is not one that can be run";
      }
      const items = Array.isArray(read.value) ? read.value : [read.value];
      const echoed = items.find((v) => isToolSchema(v) && offersName(ctx.toolNames, schemaName(v)));
      if (echoed) {
        return `the definition of the tool "${schemaName(echoed)}" instead of a call to it`;
      }
      if (items.some(callWithoutArguments)) return "a tool call without arguments that can be read";
    }
  }
  if (/^[\w.-]{1,100}[ \t]*\r?\n\s*\{/.test(head)) {
    return "a line naming a tool followed by JSON, which is not a call that can be run";
  }
  return undefined;
}

/** A call object (a client's own shape) whose arguments are missing or were elided. */
function callWithoutArguments(value: unknown): boolean {
  if (!isObject(value) || isToolSchema(value)) return false;
  return ["tool_use", "tool-call", "tool_call"].includes(String(value.type)) ||
    "toolCallId" in value || "tool_call_id" in value;
}

function schemaName(value: unknown): string {
  if (!isObject(value)) return "";
  const fn = isObject(value.function) ? value.function : value;
  return typeof fn.name === "string" ? fn.name : "";
}
