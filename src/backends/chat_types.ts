/**
 * The shapes of a chat request and reply as the native loop keeps them (OpenAI-compatible
 * messages), the contract every chat client meets (ChatBackend), and their errors.
 */
import { DelegateError } from "../errors.ts";
import type { ChatToolCall } from "./tool_calls.ts";

export type { ChatToolCall };

export type ChatMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string }
  | { role: "assistant"; content: string | null; tool_calls?: ChatToolCall[] }
  | { role: "tool"; tool_call_id: string; name?: string; content: string };

export interface ChatTool {
  type: "function";
  function: { name: string; description: string; parameters: unknown };
}

/** How hard a model may think: `reasoning_effort` (OpenAI-compatible) or `think` (Ollama). */
export type ChatEffort = "off" | "low" | "high" | "max";

export interface ChatRequest {
  model: string;
  messages: readonly ChatMessage[];
  tools?: readonly ChatTool[];
  temperature?: number;
  max_tokens?: number;
  /** The server's default when absent. */
  effort?: ChatEffort;
  /**
   * The context window to run with, in tokens (Ollama's `options.num_ctx`). Only Ollama's
   * native API can set it per request; the OpenAI-compatible client ignores it.
   */
  numCtx?: number;
}

export interface ChatUsage {
  promptTokens: number;
  completionTokens: number;
}

/** Where the time of one reply went, as Ollama's native API reports it (milliseconds). */
export interface ChatTimings {
  loadMs: number;
  promptEvalMs: number;
  evalMs: number;
  totalMs: number;
}

/** One assistant reply, assembled from the stream. */
export interface ChatReply {
  content: string;
  toolCalls: ChatToolCall[];
  finishReason: string | null;
  /** Absent when the server sent no usage. */
  usage?: ChatUsage;
  /**
   * Characters of thinking the stream carried before the answer (Ollama's `thinking`, an
   * OpenAI-compatible `reasoning`): counted under the text cap and in the reply's size, not
   * kept. Absent when there was none.
   */
  thinkingChars?: number;
  /** Ollama's native API only. */
  timings?: ChatTimings;
}

/**
 * What the native loop needs of a chat API: one streamed completion at a time, with retries
 * inside. ChatClient speaks OpenAI-compatible `/v1/chat/completions`, OllamaChatClient
 * Ollama's native `/api/chat`.
 */
export interface ChatBackend {
  readonly options: { readonly label: string };
  complete(
    request: ChatRequest,
    signal: AbortSignal,
    onText?: (delta: string) => void,
  ): Promise<ChatReply>;
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

/**
 * The backend could not be reached ("unreachable": no connection, no answer in time) or
 * its reply broke off ("cut"): retried like a 5xx.
 */
export class ConnectionError extends DelegateError {
  override name = "ConnectionError";
  readonly kind: "unreachable" | "cut";
  constructor(
    readonly reason: string,
    options: { kind: "unreachable" | "cut"; message: string; cause?: unknown },
  ) {
    super(options.message, { cause: options.cause });
    this.kind = options.kind;
  }
}
