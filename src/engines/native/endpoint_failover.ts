/**
 * A native turn on a pool of endpoints: when the endpoint it runs on refuses the connection,
 * answers 5xx, or is found down by the server's probes, the next request of the turn goes to
 * another endpoint of the pool that is up (the job layer frees the slot and takes one there),
 * with the whole conversation, so the turn goes on where it was. The activity says so; a 429
 * is not a failure but the endpoint asking to wait, and the client waits there.
 */
import { endpointFailure } from "../../backends/chat_stream.ts";
import { type ChatBackend, type ChatReply, type ChatRequest } from "../../backends/chat_types.ts";
import { DelegateError } from "../../errors.ts";
import type { FailureWord } from "../backend_failures.ts";
import type { TurnEndpoint } from "../types.ts";
import type { ResolvedBackend } from "../../settings/backends.ts";
import {
  chatClients,
  connectModel,
  type ConnectOptions,
  type ModelConnection,
} from "./model_connection.ts";

/**
 * Connects a turn to the endpoint it was placed on (the backend's own URL when none): on a
 * pool, through a FailoverClient, whose moves go to the activity and to `note`.
 */
export async function connectTurn(
  backend: ResolvedBackend,
  model: string,
  endpoint: TurnEndpoint | undefined,
  options: ConnectOptions,
  note: (text: string) => void,
): Promise<ModelConnection> {
  if (!endpoint?.pooled) return await connectModel(backend, model, options, endpoint?.url);
  const pooled: ConnectOptions = {
    ...options,
    failover: true,
    throttled: (ms) => endpoint.throttled(ms),
  };
  const clients = await chatClients(backend, pooled);
  const connected = await clients(endpoint.url).connect(model);
  const client = new FailoverClient(
    connected.client,
    endpoint,
    (url) => clients(url).chat(),
    (text) => {
      options.sink.activity({ kind: "error", text });
      note(text);
    },
  );
  return { ...connected, client };
}

/** No endpoint of the pool was left to move to: the message is the job's error. */
export class EndpointsDownError extends DelegateError {
  override name = "EndpointsDownError";
  constructor(
    message: string,
    /** The failure's kind, when the move said it (every endpoint down). */
    readonly failure: FailureWord | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Moves of one request at most: each move marks an endpoint down, so a pool runs out first. */
const MAX_MOVES = 32;

export class FailoverClient implements ChatBackend {
  #client: ChatBackend;

  constructor(
    first: ChatBackend,
    private readonly endpoint: TurnEndpoint,
    private readonly connect: (url: string) => ChatBackend,
    private readonly report: (text: string) => void,
  ) {
    this.#client = first;
  }

  get options(): { readonly label: string } {
    return this.#client.options;
  }

  async complete(
    request: ChatRequest,
    signal: AbortSignal,
    onText?: (delta: string) => void,
  ): Promise<ChatReply> {
    for (let moves = 0;; moves++) {
      if (this.endpoint.isDown() && moves < MAX_MOVES) {
        await this.#move("the server's health check of it failed", undefined);
        continue;
      }
      try {
        return await this.#client.complete(request, signal, onText);
      } catch (e) {
        const reason = signal.aborted ? undefined : endpointFailure(e);
        if (reason === undefined || moves >= MAX_MOVES) throw e;
        await this.#move(reason, e);
      }
    }
  }

  async #move(reason: string, cause: unknown): Promise<void> {
    const from = this.endpoint.url;
    const next = await this.endpoint.move(reason);
    if ("errorText" in next) {
      throw new EndpointsDownError(
        next.errorText,
        next.failure,
        cause !== undefined ? { cause } : undefined,
      );
    }
    this.#client = this.connect(next.url);
    this.report(`endpoint ${from} failed (${reason}); the turn moved to ${next.url}`);
  }
}
