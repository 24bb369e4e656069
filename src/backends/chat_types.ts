/** The shapes of OpenAI-compatible chat completions and the errors of ChatClient. */
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
