/**
 * A call as a JSON object, in the shapes models write: `{"name", "arguments"}` (Hermes,
 * Mistral), `{"name", "parameters"}` (Llama), `{"type": "function", "function": {...}}`
 * (OpenAI's wire shape copied into text), `{"name", "input"}` (Anthropic's `tool_use`),
 * `{"toolName", "args"}` (the AI SDK's), with the arguments an object or a JSON-encoded string
 * (ollama/ollama#12413: some models send them serialized).
 */
import { isObject } from "../../platform/json_object.ts";
import { parseLoose } from "./scan.ts";
import type { RawCall } from "./types.ts";

type Json = Record<string, unknown>;

const NAME_KEYS = ["name", "toolName", "tool", "function_name"] as const;
const ARG_KEYS = ["arguments", "parameters", "input", "args"] as const;

/** The call `value` holds, or undefined when it is not a call (a manifest, a schema). */
export function callOf(value: unknown): RawCall | undefined {
  if (!isObject(value)) return undefined;
  const fn = isObject(value.function) ? value.function : value;
  const name = NAME_KEYS.map((k) => fn[k]).find((v): v is string => typeof v === "string");
  if (name === undefined || name.trim() === "") return undefined;
  const key = ARG_KEYS.find((k) => k in fn);
  // {"name": "Alice", "age": 30} names something; a call also says what it passes.
  if (key === undefined) return undefined;
  if (isToolSchema(fn)) return undefined;
  const raw = fn[key];
  const args = typeof raw === "string" ? parseLoose(raw) ?? raw : raw ?? {};
  return { name: name.trim(), args };
}

/** The calls `value` holds (one object or a list of them); undefined unless all are calls. */
export function callsOf(value: unknown): RawCall[] | undefined {
  const list = Array.isArray(value) ? value : [value];
  if (list.length === 0) return undefined;
  const calls = list.map(callOf);
  return calls.every((c) => c !== undefined) ? calls as RawCall[] : undefined;
}

/**
 * A tool's definition rather than a call: a description beside parameters that are a JSON
 * Schema. Models sometimes echo the schema they were given instead of calling the tool.
 */
export function isToolSchema(value: unknown): boolean {
  if (!isObject(value)) return false;
  const fn = isObject(value.function) ? value.function : value;
  const params = fn.parameters ?? fn.input_schema;
  return isObject(params) && params.type === "object" && isObject(params.properties) &&
    (typeof fn.description === "string" || value.type === "function" || "input_schema" in fn);
}

/** Why a call's JSON arguments were cut off, for the model. */
export const CUT_OFF = "its JSON arguments were cut off before their end";

/** A call named `name` whose arguments are the JSON value read after it (scan.ts readValue). */
export function callFromValue(
  name: string,
  read: { value: unknown; complete: boolean },
): RawCall {
  if (!read.complete) return { name, args: {}, problem: CUT_OFF };
  if (read.value === undefined) {
    return { name, args: {}, problem: "its JSON arguments could not be read" };
  }
  return { name, args: read.value };
}
