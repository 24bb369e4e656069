/**
 * Connecting a native turn to its backend: the chat client for the backend's kind (Ollama's
 * native chat API for Ollama backends, the only one of Ollama's that sets the context per
 * request; OpenAI-compatible chat completions for the others), what the backend says about
 * the model (its context and capabilities, and the context Ollama has it loaded with now), and
 * the effort the model can take.
 */
import { OllamaClient } from "../../backends/ollama.ts";
import { OllamaChatClient } from "../../backends/ollama_chat.ts";
import {
  type ChatBackend,
  ChatClient,
  type ChatClientOptions,
  type ChatEffort,
} from "../../backends/openai.ts";
import type { TurnSink } from "../types.ts";
import { DEFAULT_BACKEND, type ResolvedBackend } from "./backend.ts";

/** The client of one turn and what its backend said about the model. */
export interface ModelConnection {
  client: ChatBackend;
  /** Undefined when the backend cannot say: the chat request then reports why. */
  model: { contextLength?: number; capabilities?: string[] } | undefined;
  /** The context Ollama has the model loaded with (`/api/ps`), when it says. */
  loadedContext: number | undefined;
}

export interface ConnectOptions {
  /** Retry backoff, for tests and benchmarks. */
  backoffMs?: ChatClientOptions["backoffMs"];
  /** Ollama's `keep_alive` for the model; Ollama's default when absent. */
  keepAlive?: string;
  /** Where retries are reported. */
  sink: Pick<TurnSink, "activity">;
}

/** The chat client for `backend`, and what the backend says about `modelName`. */
export async function connectModel(
  backend: ResolvedBackend,
  modelName: string,
  options: ConnectOptions,
): Promise<ModelConnection> {
  const { sink } = options;
  const common: ChatClientOptions = {
    baseUrl: backend.url,
    label: backend.name === DEFAULT_BACKEND
      ? `Ollama (${backend.url})`
      : `backend "${backend.name}"`,
    ...(backend.apiKey ? { apiKey: backend.apiKey } : {}),
    ...(options.backoffMs ? { backoffMs: options.backoffMs } : {}),
    onRetry: ({ attempt, waitMs, reason }) =>
      sink.activity({
        kind: "error",
        text: `${reason} from ${backend.name}; retry ${attempt} in ${waitMs} ms`,
      }),
  };
  let client: ChatBackend;
  let model: { contextLength?: number; capabilities?: string[] } | undefined;
  let loadedContext: number | undefined;
  if (backend.kind === "ollama") {
    const keepAlive = options.keepAlive;
    client = new OllamaChatClient({ ...common, ...(keepAlive ? { keepAlive } : {}) });
    const ollama = new OllamaClient(backend.url);
    // Unknown (undefined) when Ollama cannot say: the chat request then reports why.
    [model, loadedContext] = await Promise.all([
      ollama.show(modelName).catch(() => undefined),
      ollama.ps()
        .then((loaded) => loaded.find((m) => sameModel(m.name, modelName))?.contextLength)
        .catch(() => undefined),
    ]);
  } else {
    const openai = new ChatClient(common);
    client = openai;
    const contextLength = await openai.contextLength(modelName).catch(() => undefined);
    model = contextLength !== undefined ? { contextLength } : undefined;
  }
  return { client, model, loadedContext };
}

/** Ollama names a model without a tag as `:latest`. */
function sameModel(a: string, b: string): boolean {
  const full = (name: string) => (/:[^/]*$/.test(name) ? name : `${name}:latest`);
  return full(a) === full(b);
}

/**
 * The effort to send. A model that Ollama says cannot think gets none but "off": Ollama
 * refuses `think` for it (HTTP 400 "does not support thinking").
 */
export function usableEffort(
  effort: ChatEffort | undefined,
  capabilities: readonly string[] | undefined,
): ChatEffort | undefined {
  if (effort === undefined || effort === "off" || capabilities === undefined) return effort;
  return capabilities.includes("thinking") ? effort : undefined;
}
