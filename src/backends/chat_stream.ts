/**
 * What the chat clients share, whatever the wire format (server-sent events in openai/chat.ts,
 * Ollama's NDJSON in ollama/chat.ts): one POST per attempt, retries of 429/5xx, broken
 * connections and cut streams with backoff and Retry-After, abort handling, error
 * classification, and every body read under the same caps (REPLY_LIMITS).
 */
import { isObject } from "../platform/json_object.ts";
import { errorMessage } from "../errors.ts";
import {
  BackendReplyError,
  readBounded,
  REPLY_LIMITS,
  type ReplyLimits,
  sample,
  sizeText,
} from "./bounded.ts";
import {
  type ChatBackend,
  ChatHttpError,
  type ChatReply,
  type ChatRequest,
  ConnectionError,
} from "./chat_types.ts";
import { errorDetail, fetchFailure, parseJson, parseRetryAfter } from "./http_util.ts";
import { ReplyDraft, type StreamEnd } from "./reply_draft.ts";
import { sessionEcho, sessionHeaders } from "./session_headers.ts";
import { type SseEvent, sseEvents } from "./sse.ts";
import { sleep } from "../platform/sleep.ts";

/** Statuses worth another attempt: rate limits and transient server trouble. */
const RETRY_STATUSES = new Set([429, 500, 502, 503, 504]);
export const MAX_ATTEMPTS = 3;
/** Longest wait we honour from Retry-After; longer ones fail the call instead. */
const MAX_RETRY_WAIT_MS = 60_000;

export interface ChatClientOptions {
  /** The backend's root URL, without `/v1` (see normalizeBaseUrl). */
  baseUrl: string;
  /** Name for messages, e.g. `ollama` or a configured backend name. */
  label: string;
  apiKey?: string;
  /** Backoff before attempt n (1-based) when no Retry-After is given. */
  backoffMs?: (attempt: number) => number;
  /** Called before each retry, for the job's activity; `status` when the server answered. */
  onRetry?: (info: { attempt: number; waitMs: number; reason: string; status?: number }) => void;
  /**
   * The endpoint is one of a pool: no connection and 5xx answers are not retried here but
   * thrown at once (endpointFailure), for the caller to move to another endpoint.
   */
  failover?: boolean;
  /** Caps on what one reply may make us hold; REPLY_LIMITS where not given. */
  limits?: Partial<ReplyLimits>;
  /**
   * The delegate session the requests belong to: said in the headers gateways key on, and
   * what they hand back echoed (session_headers.ts).
   */
  session?: { id: string };
}

const defaultBackoff = (attempt: number) => Math.min(8000, 500 * 2 ** (attempt - 1));

/**
 * Why a request's failure is the endpoint's (no connection made, or a 5xx answer), so that
 * another endpoint of a pool may serve the request; undefined for any other failure (a 4xx,
 * a 429, which is the endpoint asking to wait, a reply cut or over the caps).
 */
export function endpointFailure(e: unknown): string | undefined {
  if (e instanceof ConnectionError && e.kind === "unreachable") return e.reason;
  if (e instanceof ChatHttpError && e.status >= 500) return `HTTP ${e.status}: ${e.detail}`;
  return undefined;
}

/** A chat client over one streaming HTTP API; subclasses know the body and the framing. */
export abstract class StreamingChatClient implements ChatBackend {
  readonly limits: Readonly<ReplyLimits>;
  /** Where completions are posted, e.g. `/v1/chat/completions`. */
  protected abstract readonly chatPath: string;
  /** What the reply should have been, for protocol errors: "a chat completion stream". */
  protected abstract readonly streamName: string;

  constructor(readonly options: ChatClientOptions) {
    this.limits = { ...REPLY_LIMITS, ...options.limits };
  }

  /** The JSON body of one completion request. */
  protected abstract requestBody(request: ChatRequest): string;

  /**
   * Reads the events of one streamed reply (the body of a 200 response) into `draft`, until
   * the stream ends or reports an error. Reading stops when `fetchSignal` aborts.
   */
  protected abstract readEvents(
    body: ReadableStream<Uint8Array>,
    fetchSignal: AbortSignal,
    draft: ReplyDraft,
  ): Promise<StreamEnd>;

  protected headers(): Record<string, string> {
    const session = this.options.session?.id;
    const headers: Record<string, string> = {
      "content-type": "application/json",
      ...(session ? { ...sessionHeaders(session), ...sessionEcho.headers(session) } : {}),
    };
    if (this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;
    return headers;
  }

  /**
   * Streams one completion and returns the assembled reply. Retries 429/5xx, connection
   * failures and cut streams up to MAX_ATTEMPTS, honouring Retry-After; an abort stops at
   * once. A reply over a cap or outside the protocol (BackendReplyError) is not retried.
   */
  async complete(
    request: ChatRequest,
    signal: AbortSignal,
    onText?: (delta: string) => void,
  ): Promise<ChatReply> {
    const body = this.requestBody(request);
    for (let attempt = 1;; attempt++) {
      try {
        return await this.#attempt(body, signal, onText);
      } catch (e) {
        if (signal.aborted) throw e;
        if (this.options.failover && endpointFailure(e) !== undefined) throw e;
        const retry = this.#retryable(e);
        if (!retry || attempt >= MAX_ATTEMPTS) throw e;
        const waitMs = retry.waitMs ?? (this.options.backoffMs ?? defaultBackoff)(attempt);
        if (waitMs > MAX_RETRY_WAIT_MS) throw e;
        this.options.onRetry?.({
          attempt,
          waitMs,
          reason: retry.reason,
          ...(e instanceof ChatHttpError ? { status: e.status } : {}),
        });
        await sleep(waitMs, signal);
        if (signal.aborted) throw e;
      }
    }
  }

  #retryable(e: unknown): { waitMs?: number; reason: string } | undefined {
    if (e instanceof ChatHttpError) {
      if (!RETRY_STATUSES.has(e.status)) return undefined;
      return {
        ...(e.retryAfterMs !== undefined ? { waitMs: e.retryAfterMs } : {}),
        reason: `HTTP ${e.status}`,
      };
    }
    if (e instanceof ConnectionError) return { reason: e.reason };
    return undefined;
  }

  async #attempt(
    body: string,
    signal: AbortSignal,
    onText?: (delta: string) => void,
  ): Promise<ChatReply> {
    // Aborted when the caller aborts and when the attempt ends, however it ends: whatever
    // the backend still sends is dropped with the connection instead of being read. Not
    // AbortSignal.any: its combined signal is held weakly and can be collected mid-stream,
    // and then an abort never reaches the body.
    const local = new AbortController();
    const forward = () => local.abort(signal.reason);
    if (signal.aborted) forward();
    signal.addEventListener("abort", forward, { once: true });
    try {
      return await this.#post(body, signal, local.signal, onText);
    } finally {
      signal.removeEventListener("abort", forward);
      local.abort();
    }
  }

  async #post(
    body: string,
    signal: AbortSignal,
    fetchSignal: AbortSignal,
    onText?: (delta: string) => void,
  ): Promise<ChatReply> {
    const path = this.chatPath;
    const response = await this.fetchPath(path, {
      method: "POST",
      headers: this.headers(),
      body,
      signal: fetchSignal,
    });
    if (this.options.session) sessionEcho.remember(this.options.session.id, response.headers);
    if (!response.ok) throw await this.httpError(response, path);
    if (!response.body) throw this.cut("the response had no body");
    const type = response.headers.get("content-type") ?? "";
    if (/^\s*(application\/json|text\/html)/i.test(type)) throw await this.notStream(response);
    try {
      return await this.#readReply(response.body, fetchSignal, onText);
    } catch (e) {
      if (
        signal.aborted || e instanceof BackendReplyError || e instanceof ChatHttpError ||
        e instanceof ConnectionError
      ) throw e;
      throw this.cut(`the stream broke: ${errorMessage(e)}`, e);
    }
  }

  /** One reply from its stream, or the error of a stream that ended early or reported one. */
  async #readReply(
    body: ReadableStream<Uint8Array>,
    fetchSignal: AbortSignal,
    onText?: (delta: string) => void,
  ): Promise<ChatReply> {
    const draft = new ReplyDraft(this.limits, (reason) => this.overCap(reason), onText);
    const end = await this.readEvents(body, fetchSignal, draft);
    if ("error" in end) throw this.streamError(end.error);
    if (!end.complete) throw this.cut("the stream ended before the reply was complete");
    return draft.reply();
  }

  protected async fetchPath(path: string, init: RequestInit): Promise<Response> {
    try {
      return await fetch(this.options.baseUrl + path, init);
    } catch (cause) {
      if ((init.signal as AbortSignal | undefined)?.aborted) throw cause;
      const reason = `connection failed (${fetchFailure(cause)})`;
      throw new ConnectionError(reason, {
        kind: "unreachable",
        message: `Cannot reach ${this.options.label} at ${this.options.baseUrl}: ${reason}`,
        cause,
      });
    }
  }

  /** Up to `max` bytes of a body as text; a body that breaks while read is a cut reply. */
  protected async readText(
    response: Response,
    max: number,
  ): Promise<{ text: string; complete: boolean }> {
    try {
      const { bytes, complete } = await readBounded(response.body, max);
      return { text: new TextDecoder().decode(bytes), complete };
    } catch (e) {
      throw this.cut(`the answer broke off: ${errorMessage(e)}`, e);
    }
  }

  /** A GET of a JSON answer under the JSON cap, e.g. a model list. */
  protected async getJson(path: string, timeoutMs: number): Promise<unknown> {
    const response = await this.fetchPath(path, {
      method: "GET",
      headers: this.headers(),
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!response.ok) throw await this.httpError(response, path);
    const read = await this.readText(response, this.limits.jsonBodyBytes);
    if (!read.complete) {
      throw this.overCap(`over ${sizeText(this.limits.jsonBodyBytes)} in answer to ${path}`);
    }
    return parseJson(read.text);
  }

  /** An HTTP error from at most errorBodyBytes of its body; the rest is never read. */
  protected async httpError(response: Response, path: string): Promise<ChatHttpError> {
    let detail: string;
    try {
      const { text, complete } = await this.readText(response, this.limits.errorBodyBytes);
      detail = errorDetail(parseJson(text)) +
        (complete ? "" : ` [error body over ${sizeText(this.limits.errorBodyBytes)}, not read]`);
    } catch (e) {
      detail = `(the error body broke off: ${errorMessage(e)})`;
    }
    const retryAfter = parseRetryAfter(response.headers.get("retry-after"));
    return new ChatHttpError(
      response.status,
      detail,
      `${this.options.label} answered ${path} with HTTP ${response.status}: ${detail}`,
      retryAfter,
    );
  }

  /** A 200 that is a whole JSON or HTML body where a stream was asked for. */
  protected async notStream(response: Response): Promise<BackendReplyError> {
    const type = (response.headers.get("content-type") ?? "").split(";")[0]!.trim();
    const { text } = await this.readText(response, this.limits.errorBodyBytes);
    const body = parseJson(text);
    const what = isObject(body) && body.error !== undefined
      ? `an error: ${errorDetail(body)}`
      : sample(text.trim());
    return this.protocol(`it answered with ${type} instead of an event stream, ${what}`);
  }

  /** The server reported an error inside a stream that had begun: retried like a 500. */
  protected streamError(detail: string): ChatHttpError {
    return new ChatHttpError(
      500,
      detail,
      `${this.options.label} reported an error mid-stream: ${detail}`,
    );
  }

  protected overCap(reason: string): BackendReplyError {
    return new BackendReplyError(
      "limit",
      reason,
      `${this.options.label} sent ${reason}; reading stopped`,
    );
  }

  /** The server-sent events of a reply, each line capped at the reply limits' line size. */
  protected events(
    body: ReadableStream<Uint8Array>,
    signal: AbortSignal,
  ): AsyncGenerator<SseEvent> {
    const limits = this.limits;
    return sseEvents(body, {
      maxBytes: limits.lineBytes,
      tooLong: () =>
        this.overCap(`a line or event over ${sizeText(limits.lineBytes)} (the cap for one)`),
      notSse: (what) => this.protocol(what),
      signal,
    });
  }

  protected protocol(reason: string): BackendReplyError {
    return new BackendReplyError(
      "protocol",
      reason,
      `${this.options.label} did not send ${this.streamName}: ${reason}`,
    );
  }

  protected cut(reason: string, cause?: unknown): ConnectionError {
    return new ConnectionError(reason, {
      kind: "cut",
      message: `${this.options.label} broke off its reply: ${reason}`,
      ...(cause !== undefined ? { cause } : {}),
    });
  }
}
