/**
 * A client for OpenAI-compatible chat completions (Ollama's `/v1`, vLLM, LM Studio,
 * llama.cpp server, OpenRouter): streaming, tools, retries with backoff. The API key is
 * sent only to this client's own URL. What a backend sends is read under REPLY_LIMITS.
 */
import { errorMessage } from "../errors.ts";
import {
  BackendReplyError,
  readBounded,
  REPLY_LIMITS,
  type ReplyLimits,
  sample,
  sizeText,
} from "./bounded.ts";
import { ChatHttpError, type ChatReply, type ChatRequest, ConnectionError } from "./chat_types.ts";
import { errorDetail, isObject, num, parseJson, parseRetryAfter, sleep } from "./http_util.ts";
import { sseEvents } from "./sse.ts";
import { ToolCallAssembler } from "./tool_calls.ts";

export * from "./chat_types.ts";
export { parseRetryAfter } from "./http_util.ts";
export { BackendReplyError, REPLY_LIMITS, type ReplyLimits };

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
  /** Called before each retry, for the job's activity. */
  onRetry?: (info: { attempt: number; waitMs: number; reason: string }) => void;
  /** Caps on what one reply may make us hold; REPLY_LIMITS where not given. */
  limits?: Partial<ReplyLimits>;
}

const defaultBackoff = (attempt: number) => Math.min(8000, 500 * 2 ** (attempt - 1));

export class ChatClient {
  readonly limits: Readonly<ReplyLimits>;

  constructor(readonly options: ChatClientOptions) {
    this.limits = { ...REPLY_LIMITS, ...options.limits };
  }

  #headers(): Record<string, string> {
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;
    return headers;
  }

  /** `GET /v1/models`: the model ids the backend offers. */
  async models(timeoutMs = 5000): Promise<string[]> {
    const path = "/v1/models";
    const response = await this.#fetch(path, {
      method: "GET",
      headers: this.#headers(),
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!response.ok) throw await this.#httpError(response, path);
    const read = await this.#read(response, this.limits.jsonBodyBytes);
    if (!read.complete) {
      throw this.#overCap(`over ${sizeText(this.limits.jsonBodyBytes)} in answer to ${path}`);
    }
    const body = parseJson(read.text);
    const data = isObject(body) && Array.isArray(body.data) ? body.data : [];
    return data.filter(isObject).map((m) => String(m.id ?? "")).filter((id) => id !== "");
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
    const body = JSON.stringify({
      ...request,
      stream: true,
      stream_options: { include_usage: true },
    });
    for (let attempt = 1;; attempt++) {
      try {
        return await this.#attempt(body, signal, onText);
      } catch (e) {
        if (signal.aborted) throw e;
        const retry = this.#retryable(e);
        if (!retry || attempt >= MAX_ATTEMPTS) throw e;
        const waitMs = retry.waitMs ?? (this.options.backoffMs ?? defaultBackoff)(attempt);
        if (waitMs > MAX_RETRY_WAIT_MS) throw e;
        this.options.onRetry?.({ attempt, waitMs, reason: retry.reason });
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
      return await this.#stream(body, signal, local.signal, onText);
    } finally {
      signal.removeEventListener("abort", forward);
      local.abort();
    }
  }

  async #stream(
    body: string,
    signal: AbortSignal,
    fetchSignal: AbortSignal,
    onText?: (delta: string) => void,
  ): Promise<ChatReply> {
    const path = "/v1/chat/completions";
    const limits = this.limits;
    const response = await this.#fetch(path, {
      method: "POST",
      headers: this.#headers(),
      body,
      signal: fetchSignal,
    });
    if (!response.ok) throw await this.#httpError(response, path);
    if (!response.body) throw this.#cut("the response had no body");
    const type = response.headers.get("content-type") ?? "";
    if (/^\s*(application\/json|text\/html)/i.test(type)) throw await this.#notStream(response);
    const reply: ChatReply = { content: "", toolCalls: [], finishReason: null };
    const calls = new ToolCallAssembler(limits, (reason) => this.#overCap(reason));
    let sawDone = false;
    let streamError: string | undefined;
    const events = sseEvents(response.body, {
      maxBytes: limits.lineBytes,
      tooLong: () =>
        this.#overCap(`a line or event over ${sizeText(limits.lineBytes)} (the cap for one)`),
      notSse: (what) => this.#protocol(what),
      signal: fetchSignal,
    });
    try {
      for await (const event of events) {
        if (event.event === "error") {
          streamError = errorDetail(parseJson(event.data));
          break;
        }
        if (event.data === "[DONE]") {
          sawDone = true;
          break;
        }
        if (event.data.trim() === "") continue;
        let chunk: unknown;
        try {
          chunk = JSON.parse(event.data);
        } catch {
          throw this.#protocol(`an event whose data is not JSON: ${sample(event.data)}`);
        }
        if (!isObject(chunk)) continue;
        if (isObject(chunk.error) || typeof chunk.error === "string") {
          streamError = errorDetail(chunk);
          break;
        }
        if (isObject(chunk.usage)) {
          reply.usage = {
            promptTokens: num(chunk.usage.prompt_tokens),
            completionTokens: num(chunk.usage.completion_tokens),
          };
        }
        const choice = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
        if (!isObject(choice)) continue;
        if (typeof choice.finish_reason === "string") reply.finishReason = choice.finish_reason;
        const delta = isObject(choice.delta) ? choice.delta : {};
        if (typeof delta.content === "string" && delta.content !== "") {
          if (reply.content.length + delta.content.length > limits.contentChars) {
            throw this.#overCap(
              `over ${sizeText(limits.contentChars, "characters")} of text in one reply ` +
                `(the cap)`,
            );
          }
          reply.content += delta.content;
          onText?.(delta.content);
        }
        if (Array.isArray(delta.tool_calls)) calls.add(delta.tool_calls);
      }
    } catch (e) {
      if (signal.aborted || e instanceof BackendReplyError) throw e;
      throw this.#cut(`the stream broke: ${errorMessage(e)}`, e);
    }
    if (streamError !== undefined) {
      throw new ChatHttpError(
        500,
        streamError,
        `${this.options.label} reported an error mid-stream: ${streamError}`,
      );
    }
    if (!sawDone && reply.finishReason === null) {
      throw this.#cut("the stream ended before the reply was complete");
    }
    reply.toolCalls = calls.calls();
    return reply;
  }

  async #fetch(path: string, init: RequestInit): Promise<Response> {
    try {
      return await fetch(this.options.baseUrl + path, init);
    } catch (cause) {
      if ((init.signal as AbortSignal | undefined)?.aborted) throw cause;
      const inner = (cause as { cause?: { code?: string; message?: string } }).cause;
      const why = (cause as Error).name === "TimeoutError"
        ? "no answer in time"
        : inner?.code ?? inner?.message ?? (cause as Error).message;
      const reason = `connection failed (${why})`;
      throw new ConnectionError(reason, {
        kind: "unreachable",
        message: `Cannot reach ${this.options.label} at ${this.options.baseUrl}: ${reason}`,
        cause,
      });
    }
  }

  /** Up to `max` bytes of a body as text; a body that breaks while read is a cut reply. */
  async #read(response: Response, max: number): Promise<{ text: string; complete: boolean }> {
    try {
      const { bytes, complete } = await readBounded(response.body, max);
      return { text: new TextDecoder().decode(bytes), complete };
    } catch (e) {
      throw this.#cut(`the answer broke off: ${errorMessage(e)}`, e);
    }
  }

  /** An HTTP error from at most errorBodyBytes of its body; the rest is never read. */
  async #httpError(response: Response, path: string): Promise<ChatHttpError> {
    let detail: string;
    try {
      const { text, complete } = await this.#read(response, this.limits.errorBodyBytes);
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

  /** A 200 that is a whole JSON or HTML body where an event stream was asked for. */
  async #notStream(response: Response): Promise<BackendReplyError> {
    const type = (response.headers.get("content-type") ?? "").split(";")[0]!.trim();
    const { text } = await this.#read(response, this.limits.errorBodyBytes);
    const body = parseJson(text);
    const what = isObject(body) && body.error !== undefined
      ? `an error: ${errorDetail(body)}`
      : sample(text.trim());
    return this.#protocol(`it answered with ${type} instead of an event stream, ${what}`);
  }

  #overCap(reason: string): BackendReplyError {
    return new BackendReplyError(
      "limit",
      reason,
      `${this.options.label} sent ${reason}; reading stopped`,
    );
  }

  #protocol(reason: string): BackendReplyError {
    return new BackendReplyError(
      "protocol",
      reason,
      `${this.options.label} did not send a chat completion stream: ${reason}`,
    );
  }

  #cut(reason: string, cause?: unknown): ConnectionError {
    return new ConnectionError(reason, {
      kind: "cut",
      message: `${this.options.label} broke off its reply: ${reason}`,
      ...(cause !== undefined ? { cause } : {}),
    });
  }
}
