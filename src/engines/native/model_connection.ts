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
import { DEFAULT_BACKEND, type ResolvedBackend } from "../../settings/backends.ts";

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
  /**
   * The backend is a pool: failures of the endpoint itself are thrown at once, for the turn
   * to move (endpoint_failover.ts), and a 429 is reported through `throttled`.
   */
  failover?: boolean;
  /** The endpoint answered 429 and is waited for `ms`. */
  throttled?: (ms: number) => void;
}

/** The chat client for `backend` at `url` (one endpoint of it). */
export function chatClientFor(
  backend: ResolvedBackend,
  url: string,
  options: ConnectOptions,
): ChatBackend {
  const { sink } = options;
  const where = backend.endpoints.length > 1 ? ` at ${url}` : "";
  const common: ChatClientOptions = {
    baseUrl: url,
    label: backend.name === DEFAULT_BACKEND
      ? `Ollama (${url})`
      : `backend "${backend.name}"${where}`,
    ...(backend.apiKey ? { apiKey: backend.apiKey } : {}),
    ...(options.backoffMs ? { backoffMs: options.backoffMs } : {}),
    ...(options.failover ? { failover: true } : {}),
    onRetry: ({ attempt, waitMs, reason, status }) => {
      if (status === 429) options.throttled?.(waitMs);
      sink.activity({
        kind: "error",
        text: `${reason} from ${backend.name}${where}; retry ${attempt} in ${waitMs} ms`,
      });
    },
  };
  if (backend.kind !== "ollama") return new ChatClient(common);
  const keepAlive = options.keepAlive;
  return new OllamaChatClient({ ...common, ...(keepAlive ? { keepAlive } : {}) });
}

/**
 * The chat client for `backend` at `url` (its own URL unless the turn was placed on another
 * endpoint of its pool), and what that endpoint says about `modelName`.
 */
export async function connectModel(
  backend: ResolvedBackend,
  modelName: string,
  options: ConnectOptions,
  url = backend.url,
): Promise<ModelConnection> {
  const client = chatClientFor(backend, url, options);
  let model: { contextLength?: number; capabilities?: string[] } | undefined;
  let loadedContext: number | undefined;
  if (backend.kind === "ollama") {
    const ollama = new OllamaClient(url);
    // Unknown (undefined) when Ollama cannot say: the chat request then reports why.
    [model, loadedContext] = await Promise.all([
      ollama.show(modelName).catch(() => undefined),
      ollama.ps()
        .then((loaded) => loaded.find((m) => sameModel(m.name, modelName))?.contextLength)
        .catch(() => undefined),
    ]);
  } else {
    const contextLength = await (client as ChatClient).contextLength(modelName)
      .catch(() => undefined);
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
