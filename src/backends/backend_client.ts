/**
 * What every backend kind answers, whatever its API: the chat client of a turn, what it says
 * about a model, the models it serves, and what the server says about itself. The native
 * engine, `ollama_models`, the doctor and the endpoint probes ask a kind through this
 * (kinds.ts picks the kind's module), so none of them branches on the kind.
 */
import type { ChatClientOptions } from "./chat_stream.ts";
import type { ChatBackend } from "./chat_types.ts";

/** One endpoint of a backend, as a client of its kind reaches it. */
export interface BackendTarget {
  /** The endpoint's root URL, without `/v1`. */
  url: string;
  /** Sent to this endpoint only. */
  apiKey?: string;
  /** How messages name it: `Ollama (<url>)`, `backend "gpus" at <url>`. */
  label: string;
}

/** How a turn's chat client behaves: everything but where it goes, which the target says. */
export type ChatOptions = Omit<ChatClientOptions, "baseUrl" | "apiKey" | "label"> & {
  /** Ollama's `keep_alive` for the model; kinds without the idea ignore it. */
  keepAlive?: string;
};

/**
 * A model a server has in memory (Ollama's `GET /api/ps`), with the context it was loaded with
 * (`context_length`, newer Ollama).
 */
export interface LoadedModel {
  name: string;
  contextLength?: number;
}

/** The chat client of one turn and what its endpoint said about the model. */
export interface EndpointModel {
  client: ChatBackend;
  /** Undefined when the backend cannot say: the chat request then reports why. */
  model: { contextLength?: number; capabilities?: string[] } | undefined;
  /**
   * The models the server has loaded now, each with its context (Ollama's `/api/ps`); empty
   * when it cannot say or its kind has no such list. Which of them is the model is a question
   * of names (models/loaded_context.ts), not of the kind.
   */
  loaded: readonly LoadedModel[];
}

/** What a server said about itself when asked, or why it did not answer as its kind does. */
export type Identity =
  | {
    ok: true;
    /** One sentence: "Ollama 0.34.1 at <url>", "<url> lists 3 model(s)". */
    summary: string;
    details: Record<string, unknown>;
  }
  | {
    ok: false;
    /** What went wrong, without advice: the doctor words its own for each backend. */
    summary: string;
    /** It refused the credentials (HTTP 401 or 403). */
    rejected?: boolean;
    /** It answered, but not as a server of this kind would at this URL. */
    foreign?: boolean;
  };

export interface BackendClient {
  /** How advice names the server behind an endpoint: "the Ollama server behind it". */
  readonly serverName: string;
  /** The chat client of one turn. */
  chat(options: ChatOptions): ChatBackend;
  /** The chat client, and what the endpoint says about `model` (never throws for that part). */
  connect(model: string, options: ChatOptions): Promise<EndpointModel>;
  /** The names of the models the endpoint serves; throws when it cannot say. */
  models(timeoutMs: number): Promise<string[]>;
  /** What the server says about itself (`doctor`); never throws. */
  identify(timeoutMs: number): Promise<Identity>;
}

/** A kind's clients, one per endpoint. */
export type BackendFactory = (target: BackendTarget) => BackendClient;

/**
 * What a kind's servers are, for the native engine's context sizing and its failure words;
 * known without loading the kind's module.
 */
export interface BackendKindFacts {
  /** Its chat requests say the context they need (Ollama's num_ctx), so the server sizes it. */
  sizesContext: boolean;
  /** What its chat replies are, for a reply that was not one: "an Ollama chat stream". */
  chatStream: string;
  /** The chat path its servers serve, under the backend's root URL: "/api/chat". */
  chatPath: string;
  /** What to do when no connection could be made. */
  startHint: string;
  /** What to do when the server has no such model (HTTP 404). */
  missingModelHint(model: string): string;
  /** What to do when a request that carried no API key was refused; undefined: give one. */
  refusedHint?: string;
  /**
   * Its servers serve Anthropic's Messages API at `/v1/messages`, which Claude Code speaks:
   * the claude engine can run on a backend of this kind.
   */
  messages: boolean;
  /**
   * Where its servers may expose their queue as Prometheus text (vLLM's and llama-server's
   * `/metrics`), for placing new sessions on the least busy endpoint of a pool; absent: none.
   */
  metricsPath?: string;
}

/** One kind's entry in the table of kinds (kinds.ts). */
export interface BackendKindEntry {
  /**
   * The GET a health probe makes: cheap, answered by any running server of the kind without
   * a model loaded. Known without loading the kind's module.
   */
  probePath: string;
  facts: BackendKindFacts;
  /** The kind's module, loaded at first use: a client for each endpoint. */
  load(): Promise<BackendFactory>;
}
