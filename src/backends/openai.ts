/**
 * A client for OpenAI-compatible chat completions (Ollama's `/v1`, vLLM, LM Studio,
 * llama.cpp server, OpenRouter): streaming, tools, retries with backoff. The API key is
 * sent only to this client's own URL.
 */
import { DelegateError } from "../errors.ts";

export interface ChatToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export type ChatMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string }
  | { role: "assistant"; content: string | null; tool_calls?: ChatToolCall[] }
  | { role: "tool"; tool_call_id: string; name?: string; content: string };

export interface ChatTool {
  type: "function";
  function: { name: string; description: string; parameters: unknown };
}

export interface ChatRequest {
  model: string;
  messages: readonly ChatMessage[];
  tools?: readonly ChatTool[];
  temperature?: number;
  max_tokens?: number;
}

export interface ChatUsage {
  promptTokens: number;
  completionTokens: number;
}

/** One assistant reply, assembled from the stream. */
export interface ChatReply {
  content: string;
  toolCalls: ChatToolCall[];
  finishReason: string | null;
  /** Absent when the server sent no usage. */
  usage?: ChatUsage;
}

/** A non-2xx answer, with the server's own message. */
export class ChatHttpError extends DelegateError {
  override name = "ChatHttpError";
  constructor(
    readonly status: number,
    readonly detail: string,
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

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
}

const defaultBackoff = (attempt: number) => Math.min(8000, 500 * 2 ** (attempt - 1));

export class ChatClient {
  constructor(readonly options: ChatClientOptions) {}

  #headers(): Record<string, string> {
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;
    return headers;
  }

  /** `GET /v1/models`: the model ids the backend offers. */
  async models(timeoutMs = 5000): Promise<string[]> {
    const response = await this.#fetch("/v1/models", {
      method: "GET",
      headers: this.#headers(),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const body = await readJson(response);
    if (!response.ok) throw this.#httpError(response, body, "/v1/models");
    const data = isObject(body) && Array.isArray(body.data) ? body.data : [];
    return data.filter(isObject).map((m) => String(m.id ?? "")).filter((id) => id !== "");
  }

  /**
   * Streams one completion and returns the assembled reply. Retries 429/5xx and
   * connection failures up to MAX_ATTEMPTS, honouring Retry-After; an abort stops at once.
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
    const path = "/v1/chat/completions";
    const response = await this.#fetch(path, {
      method: "POST",
      headers: this.#headers(),
      body,
      signal,
    });
    if (!response.ok) throw this.#httpError(response, await readJson(response), path);
    if (!response.body) throw new ConnectionError("the response had no body");
    const reply: ChatReply = { content: "", toolCalls: [], finishReason: null };
    const partial = new Map<number, ChatToolCall>();
    let sawDone = false;
    let streamError: string | undefined;
    try {
      for await (const data of sseData(response.body)) {
        if (data === "[DONE]") {
          sawDone = true;
          break;
        }
        let chunk: unknown;
        try {
          chunk = JSON.parse(data);
        } catch {
          continue;
        }
        if (!isObject(chunk)) continue;
        if (isObject(chunk.error)) {
          streamError = String(chunk.error.message ?? JSON.stringify(chunk.error));
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
          reply.content += delta.content;
          onText?.(delta.content);
        }
        if (Array.isArray(delta.tool_calls)) mergeToolCalls(partial, delta.tool_calls);
      }
    } catch (e) {
      if (signal.aborted) throw e;
      throw new ConnectionError(`the stream broke: ${(e as Error).message}`, { cause: e });
    }
    if (streamError !== undefined) {
      throw new ChatHttpError(
        500,
        streamError,
        `${this.options.label} reported an error mid-stream: ${streamError}`,
      );
    }
    if (!sawDone && reply.finishReason === null) {
      throw new ConnectionError("the stream ended before the reply was complete");
    }
    reply.toolCalls = [...partial.entries()].sort((a, b) => a[0] - b[0]).map(([, c]) => c);
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
      throw new ConnectionError(
        `cannot reach ${this.options.label} at ${this.options.baseUrl} (${why})`,
        { cause },
      );
    }
  }

  #httpError(response: Response, body: unknown, path: string): ChatHttpError {
    const detail = errorDetail(body);
    const retryAfter = parseRetryAfter(response.headers.get("retry-after"));
    return new ChatHttpError(
      response.status,
      detail,
      `${this.options.label} answered ${path} with HTTP ${response.status}: ${detail}`,
      retryAfter,
    );
  }
}

/** A failure to connect or a broken stream: retried like a 5xx. */
export class ConnectionError extends DelegateError {
  override name = "ConnectionError";
  constructor(readonly reason: string, options?: { cause: unknown }) {
    super(`Connection failed: ${reason}`, options);
  }
}

/**
 * Tool calls arrive whole from Ollama, but OpenAI-style servers fragment them by `index`:
 * the first fragment has id and name, later ones append to `arguments`.
 */
function mergeToolCalls(partial: Map<number, ChatToolCall>, deltas: unknown[]): void {
  for (const [i, d] of deltas.entries()) {
    if (!isObject(d)) continue;
    const index = typeof d.index === "number" ? d.index : partial.size + i;
    const fn = isObject(d.function) ? d.function : {};
    const existing = partial.get(index);
    if (!existing) {
      partial.set(index, {
        // Unique across turns: a history with two "call_0" cannot tell which was answered.
        id: typeof d.id === "string" && d.id !== "" ? d.id : `call_${crypto.randomUUID()}`,
        type: "function",
        function: {
          name: typeof fn.name === "string" ? fn.name : "",
          arguments: typeof fn.arguments === "string"
            ? fn.arguments
            : isObject(fn.arguments)
            ? JSON.stringify(fn.arguments)
            : "",
        },
      });
      continue;
    }
    if (typeof fn.name === "string" && existing.function.name === "") {
      existing.function.name = fn.name;
    }
    if (typeof fn.arguments === "string") existing.function.arguments += fn.arguments;
  }
}

/** The `data:` payloads of a server-sent event stream. */
export async function* sseData(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = "";
  let data: string[] = [];
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    let newline: number;
    while ((newline = buffer.indexOf("\n")) !== -1) {
      const line = buffer.slice(0, newline).replace(/\r$/, "");
      buffer = buffer.slice(newline + 1);
      if (line === "") {
        if (data.length > 0) yield data.join("\n");
        data = [];
      } else if (line.startsWith("data:")) {
        data.push(line.slice(line.startsWith("data: ") ? 6 : 5));
      }
    }
  }
  buffer += decoder.decode();
  if (buffer.startsWith("data:")) data.push(buffer.slice(buffer.startsWith("data: ") ? 6 : 5));
  if (data.length > 0) yield data.join("\n");
}

/** Retry-After as seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  // delay-seconds; fractions are not in the RFC but are sent by some servers and are harmless.
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  // Only an HTTP-date (RFC 9110 5.6.7, IMF-fixdate); Date.parse alone reads "-1" as a date.
  if (!/^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/.test(text)) {
    return undefined;
  }
  const when = Date.parse(text);
  return Number.isNaN(when) ? undefined : Math.max(0, when - now);
}

function errorDetail(body: unknown): string {
  if (isObject(body)) {
    if (typeof body.error === "string") return body.error;
    if (isObject(body.error) && typeof body.error.message === "string") return body.error.message;
    if (typeof body.message === "string") return body.message;
  }
  if (typeof body === "string" && body.trim() !== "") return body.trim().slice(0, 300);
  return "(no error message)";
}

async function readJson(response: Response): Promise<unknown> {
  const text = await response.text().catch(() => "");
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}
