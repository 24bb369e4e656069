/**
 * What tests/support/hostile_backend.ts says in each chat protocol the native engine speaks:
 * OpenAI-compatible chat completions (server-sent events) and Ollama's own /api/chat (NDJSON).
 * A mode of the hostile backend is written once in terms of these pieces, so that both chat
 * clients meet the same flood.
 */

export type Protocol = "openai" | "ollama";

export interface ToolCallSpec {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

export interface Dialect {
  /** The path of a chat request. */
  chat: string;
  /** GET paths answered normally while a chat flood goes on, so that listings keep working. */
  listings(claimedContext?: number): Record<string, unknown>;
  /** The content type of a chat stream. */
  stream: string;
  /** What opens a stream ("" when nothing does). */
  open: string;
  /** One frame of text. */
  content(text: string): string;
  /** One frame with nothing in it. */
  empty(): string;
  /** One frame of thinking text, where the protocol has it. */
  thinking?(text: string): string;
  /** One frame with one whole tool call. */
  toolCall(index: number, call: ToolCallSpec): string;
  /** The end of a stream. */
  end(reason: "stop" | "tool_calls"): string;
  /** A reply whose arguments never end: the frame before, each frame of the flood, after. */
  endlessArguments(filler: string): { head: string; body: () => string; tail: string };
  /** What comes before and after an endless run of filler in one line. */
  endlessLine: { head: string; tail: string };
  /** What comes before and after an endless run of filler in an HTTP 500's JSON body. */
  errorBody: { head: string; tail: string };
}

const MiB = 1024 * 1024;
const MODEL = "qwen3:8b";

const sse = (data: unknown) => `data: ${JSON.stringify(data)}\n\n`;
const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
  id: "chatcmpl-hostile",
  object: "chat.completion.chunk",
  created: 0,
  model: MODEL,
  choices: [{ index: 0, delta, finish_reason: finish }],
});

const openai: Dialect = {
  chat: "/v1/chat/completions",
  listings: (claimedContext) => ({
    "/v1/models": {
      object: "list",
      data: [{
        id: MODEL,
        object: "model",
        ...(claimedContext !== undefined ? { context_length: claimedContext } : {}),
      }],
    },
    "/api/version": { version: "0.0.0-hostile" },
  }),
  stream: "text/event-stream",
  open: sse(chunk({ role: "assistant", content: "" })),
  content: (text) => sse(chunk({ content: text })),
  empty: () => sse(chunk({})),
  // Ollama's /v1 sends a thinking model's reasoning as `reasoning` (vLLM: `reasoning_content`).
  thinking: (text) => sse(chunk({ reasoning: text })),
  toolCall: (index, call) =>
    sse(chunk({
      tool_calls: [{
        index,
        id: call.id,
        type: "function",
        function: { name: call.name, arguments: JSON.stringify(call.args) },
      }],
    })),
  end: (reason) => sse(chunk({}, reason)) + "data: [DONE]\n\n",
  // One call whose arguments come in fragments, as vLLM and OpenAI send them.
  endlessArguments: (filler) => ({
    head: sse(chunk({
      tool_calls: [{
        index: 0,
        id: "call_hostile",
        type: "function",
        function: { name: "Write", arguments: '{"file_path":"x","content":"' },
      }],
    })),
    body: () => sse(chunk({ tool_calls: [{ index: 0, function: { arguments: filler } }] })),
    tail: sse(chunk({ tool_calls: [{ index: 0, function: { arguments: '"}' } }] })) +
      sse(chunk({}, "tool_calls")) + "data: [DONE]\n\n",
  }),
  endlessLine: { head: 'data: {"choices":[{"index":0,"delta":{"content":"', tail: '"}}]}\n\n' },
  errorBody: { head: '{"error":{"message":"', tail: '"}}' },
};

const line = (message: Record<string, unknown>) =>
  JSON.stringify({ model: MODEL, message: { role: "assistant", ...message }, done: false }) +
  "\n";

const ollama: Dialect = {
  chat: "/api/chat",
  listings: (claimedContext) => ({
    "/api/tags": { models: [{ name: MODEL, model: MODEL }] },
    "/api/version": { version: "0.0.0-hostile" },
    ...(claimedContext !== undefined
      ? { "/api/show": { model_info: { "qwen3.context_length": claimedContext } } }
      : {}),
  }),
  stream: "application/x-ndjson",
  open: "",
  content: (text) => line({ content: text }),
  empty: () => line({ content: "" }),
  thinking: (text) => line({ content: "", thinking: text }),
  toolCall: (index, call) =>
    line({
      content: "",
      tool_calls: [{ function: { index, name: call.name, arguments: call.args } }],
    }),
  // Ollama ends a reply with tool calls as "stop" too.
  end: () => JSON.stringify({ model: MODEL, done: true, done_reason: "stop" }) + "\n",
  // Ollama sends each tool call whole: endless calls of a MiB of arguments each.
  endlessArguments: () => {
    let index = 0;
    return {
      head: "",
      body: () =>
        line({
          content: "",
          tool_calls: [{
            function: {
              index: index++,
              name: "Write",
              arguments: { file_path: "x", content: "y".repeat(MiB) },
            },
          }],
        }),
      tail: JSON.stringify({ model: MODEL, done: true, done_reason: "stop" }) + "\n",
    };
  },
  endlessLine: { head: '{"message":{"role":"assistant","content":"', tail: '"}}\n' },
  errorBody: { head: '{"error":"', tail: '"}' },
};

export const DIALECTS: Record<Protocol, Dialect> = { openai, ollama };
