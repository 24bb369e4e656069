/**
 * Tool calls a model wrote as text. Local models often emit a call in their own chat format
 * when the server's parser misses it, and the reply then arrives as plain content with no
 * structured call (ollama/ollama#13931; claude-code-router's tool-call repair exists for the
 * same complaint). Recognised formats:
 *
 * - Hermes / Qwen 2.5: `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`
 * - Qwen3-Coder: `<function=Name><parameter=p>value</parameter></function>`, with or without
 *   the `<tool_call>` tags around it
 * - Llama 3.x: a reply that is only `{"name": ..., "parameters": {...}}`, or `<|python_tag|>`
 *   followed by one
 * - Mistral: `[TOOL_CALLS] [{"name": ..., "arguments": {...}}]`
 * - a reply that ends in one fenced JSON block holding one call
 *
 * A call counts only for a tool actually offered, and only where the text is a call rather
 * than an example: tags must start a line outside code, a bare JSON call must be the whole
 * reply, a fenced call must close the reply. Malformed JSON is repaired with `jsonrepair`;
 * arguments are then checked against the tool's schema, and what still fails is returned as
 * an error for the model to correct.
 *
 * The formats are read in formats.ts, the arguments parsed and checked in
 * arguments.ts; this module puts them together into the calls of one reply.
 */
import { checkArguments, isObject, type OfferedTool } from "./arguments.ts";
import { findTextCalls, type TextCallFormat } from "./formats.ts";

/** A call recovered from a reply's text. */
export interface TextCall {
  name: string;
  /** The arguments, as parsed (and repaired); meaningful only when `error` is absent. */
  arguments: Record<string, unknown>;
  format: TextCallFormat;
  /** Why the arguments cannot be used: goes back to the model as the tool's error. */
  error?: string;
}

export interface Recovered {
  calls: TextCall[];
  /** The reply without the calls: what the model said around them. */
  text: string;
}

/** Replies longer than this are not searched: no model writes a call into a novel. */
const MAX_SCAN_CHARS = 200_000;

/**
 * The calls written as text in `content`, for the tools in `offered`; undefined when the
 * reply holds none (then it is an ordinary answer).
 */
export function recoverTextCalls(
  content: string,
  offered: readonly OfferedTool[],
): Recovered | undefined {
  if (offered.length === 0 || content.length > MAX_SCAN_CHARS) return undefined;
  const found = findTextCalls(content, [...offered]);
  const calls: TextCall[] = [];
  for (const f of found) {
    for (const c of f.calls) {
      const tool = offered.find((t) => t.name === c.name);
      // A name we do not offer is not a call to us: the text stays an answer.
      if (!tool) return undefined;
      const error = checkArguments(tool, c.args);
      calls.push({
        name: c.name,
        arguments: isObject(c.args) ? c.args : {},
        format: f.format,
        ...(error ? { error } : {}),
      });
    }
  }
  if (calls.length === 0) return undefined;
  let rest = "";
  let at = 0;
  for (const f of found) {
    rest += content.slice(at, f.start);
    at = f.end;
  }
  rest += content.slice(at);
  return { calls, text: rest.trim() };
}
