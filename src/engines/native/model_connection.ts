/**
 * Connecting a native turn to its backend: the chat client for the backend's kind and what
 * the backend says about the model (backends/kinds.ts: each kind knows its API), with the
 * labels and retry reports of this engine, and the effort the model can take.
 */
import type { BackendFactory, EndpointModel } from "../../backends/backend_client.ts";
import { backendFactory } from "../../backends/kinds.ts";
import type { ChatClientOptions } from "../../backends/chat_stream.ts";
import type { ChatBackend, ChatEffort } from "../../backends/chat_types.ts";
import { loadedContextIn } from "../../models/loaded_context.ts";
import type { TurnSink } from "../types.ts";
import { DEFAULT_BACKEND, type ResolvedBackend } from "../../settings/backends.ts";

/** The client of one turn, what its endpoint said about the model, and the context it has it loaded with. */
export interface ModelConnection extends Omit<EndpointModel, "loaded"> {
  /** The context the endpoint has the model loaded with now (Ollama's `/api/ps`), when it says. */
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
  /** The delegate session: its requests say it the ways gateways route by. */
  sessionId?: string;
}

/** The chat clients of `backend`, one per endpoint URL, as this engine labels and watches them. */
export async function chatClients(
  backend: ResolvedBackend,
  options: ConnectOptions,
): Promise<
  (url: string) => { chat(): ChatBackend; connect(model: string): Promise<ModelConnection> }
> {
  const kind: BackendFactory = await backendFactory(backend.kind);
  return (url) => {
    const { sink } = options;
    const where = backend.endpoints.length > 1 ? ` at ${url}` : "";
    const client = kind({
      url,
      label: backend.name === DEFAULT_BACKEND
        ? `Ollama (${url})`
        : `backend "${backend.name}"${where}`,
      ...(backend.apiKey ? { apiKey: backend.apiKey } : {}),
    });
    const chat = {
      ...(options.backoffMs ? { backoffMs: options.backoffMs } : {}),
      ...(options.failover ? { failover: true } : {}),
      ...(options.keepAlive ? { keepAlive: options.keepAlive } : {}),
      ...(options.sessionId ? { session: { id: options.sessionId } } : {}),
      onRetry: ({ attempt, waitMs, reason, status }: Parameters<
        NonNullable<ChatClientOptions["onRetry"]>
      >[0]) => {
        if (status === 429) options.throttled?.(waitMs);
        sink.activity({
          kind: "error",
          text: `${reason} from ${backend.name}${where}; retry ${attempt} in ${waitMs} ms`,
        });
      },
    };
    return {
      chat: () => client.chat(chat),
      connect: async (model) => {
        const { loaded, ...rest } = await client.connect(model, chat);
        return { ...rest, loadedContext: loadedContextIn(loaded, model) };
      },
    };
  };
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
  return await (await chatClients(backend, options))(url).connect(modelName);
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
