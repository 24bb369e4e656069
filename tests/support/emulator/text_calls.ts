/**
 * Tool calls written as text, the way local models emit them when Ollama's tool parser misses
 * (the call then arrives as plain `content`, `finish_reason: "stop"`; ollama/ollama#13931,
 * musistudio/claude-code-router#790). An emulated model with `toolCallStyle` other than
 * "structured" answers every scripted tool call in its family's format:
 *
 *   hermes            Hermes / Qwen 2.5: `<tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call>`
 *   qwen3-coder       `<tool_call>\n<function=Bash>\n<parameter=command>\nls\n</parameter>\n</function>\n</tool_call>`
 *   qwen3-coder-bare  the same without the outer `<tool_call>` tags (Qwen3-Coder often drops them)
 *   llama-json        Llama 3.1/3.2: `{"name": ..., "parameters": {...}}`
 *   python-tag        Llama 3.1: `<|python_tag|>{"name": ..., "parameters": {...}}`
 *   mistral           `[TOOL_CALLS] [{"name": ..., "arguments": {...}}]` (all calls in one list)
 *   fenced-json       a fenced ```json block holding `{"name": ..., "arguments": {...}}`
 *
 * Several calls become several blocks (one `<tool_call>` each, one JSON line each, one fence
 * each), except Mistral's single list. Text the script sent before the calls comes first,
 * followed by a blank line.
 */

export type TextCallStyle =
  | "structured"
  | "hermes"
  | "qwen3-coder"
  | "qwen3-coder-bare"
  | "llama-json"
  | "python-tag"
  | "mistral"
  | "fenced-json";

export const TEXT_CALL_STYLES: readonly TextCallStyle[] = [
  "structured",
  "hermes",
  "qwen3-coder",
  "qwen3-coder-bare",
  "llama-json",
  "python-tag",
  "mistral",
  "fenced-json",
];

export interface TextCallSpec {
  name: string;
  arguments: Record<string, unknown>;
}

/** JSON as Python's `json.dumps` writes it (", " and ": " separators), which is what models
 * trained on those chat templates reproduce. Non-ASCII stays as it is. */
export function pyJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(pyJson).join(", ")}]`;
  if (typeof value === "object" && value !== null) {
    const parts = Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}: ${pyJson(v)}`);
    return `{${parts.join(", ")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

function qwen3CoderCall(call: TextCallSpec): string {
  const params = Object.entries(call.arguments).map(([k, v]) =>
    `<parameter=${k}>\n${typeof v === "string" ? v : JSON.stringify(v)}\n</parameter>\n`
  );
  return `<function=${call.name}>\n${params.join("")}</function>`;
}

/** The calls alone, in `style`; throws a RangeError for "structured", which has no text form. */
export function textCallsOf(style: TextCallStyle, calls: TextCallSpec[]): string {
  switch (style) {
    case "hermes":
      return calls.map((c) =>
        `<tool_call>\n${pyJson({ name: c.name, arguments: c.arguments })}\n</tool_call>`
      ).join("\n");
    case "qwen3-coder":
      return calls.map((c) => `<tool_call>\n${qwen3CoderCall(c)}\n</tool_call>`).join("\n");
    case "qwen3-coder-bare":
      return calls.map(qwen3CoderCall).join("\n");
    case "llama-json":
      return calls.map((c) => pyJson({ name: c.name, parameters: c.arguments })).join("\n");
    case "python-tag":
      return calls.map((c) => `<|python_tag|>${pyJson({ name: c.name, parameters: c.arguments })}`)
        .join("\n");
    case "mistral":
      return `[TOOL_CALLS] ${pyJson(calls.map((c) => ({ name: c.name, arguments: c.arguments })))}`;
    case "fenced-json":
      return calls.map((c) =>
        "```json\n" + JSON.stringify({ name: c.name, arguments: c.arguments }, null, 2) + "\n```"
      ).join("\n\n");
    case "structured":
      throw new RangeError('Cannot write tool calls as text in the "structured" style');
  }
}

/** The whole reply a text-calling model writes: its prose (if any), a blank line, the calls. */
export function textReplyOf(
  style: TextCallStyle,
  calls: TextCallSpec[],
  lead: string | undefined,
): string {
  const body = textCallsOf(style, calls);
  return lead ? `${lead}\n\n${body}` : body;
}
