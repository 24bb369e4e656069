/**
 * Reading what a backend sends without letting it decide how much we hold: every body,
 * line and reply has a cap, and passing one stops the reading (the body is cancelled, so
 * the bytes stop flowing) with an error that names the cap.
 */
import { DelegateError } from "../errors.ts";
import { concatBytes, ownBytes } from "../platform/bytes.ts";
import { formatCount } from "../platform/count_text.ts";

export const KiB = 1024;
export const MiB = 1024 * 1024;

/** The caps on one reply of a chat backend. Tests pass smaller ones. */
export interface ReplyLimits {
  /**
   * One line of an event stream, and the data of one event. Ollama sends each tool call
   * whole in one event, escaped twice (once inside `arguments`, once in the event's JSON),
   * so this must hold `toolCallChars` with room for the escapes.
   */
  lineBytes: number;
  /**
   * Text of one reply. It is an answer for the orchestrator to read: 4 million characters
   * is about a million tokens, past any model's output limit, so more is a model stuck in a
   * loop or a broken server.
   */
  contentChars: number;
  /**
   * Tool calls of one reply together (ids, names, arguments): the Write tool takes up to
   * 8 MiB of content, and its JSON escapes (quotes, backslashes, newlines) add a little.
   */
  toolCallChars: number;
  /** Tool calls in one reply; models make a handful at a time. */
  toolCalls: number;
  /** An error body: its message is all we use, and it is shown cut to a few hundred chars. */
  errorBodyBytes: number;
  /** A JSON answer such as a model list (OpenRouter's, the longest seen, is about 1 MiB). */
  jsonBodyBytes: number;
}

export const REPLY_LIMITS: Readonly<ReplyLimits> = {
  lineBytes: 16 * MiB,
  contentChars: 4_000_000,
  toolCallChars: 10_000_000,
  toolCalls: 256,
  errorBodyBytes: 64 * KiB,
  jsonBodyBytes: 8 * MiB,
};

/**
 * A reply the client stopped reading: it passed a cap ("limit"), or it is not what the
 * protocol says ("protocol"). Neither is retried: a second attempt would only repeat it.
 */
export class BackendReplyError extends DelegateError {
  override name = "BackendReplyError";
  constructor(
    readonly kind: "limit" | "protocol",
    /** What happened, without the backend's name: "it sent over ... (the cap ...)". */
    readonly reason: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A size for messages: "16 MiB", "64 KiB", "4,000,000 characters". */
export function sizeText(n: number, unit: "bytes" | "characters" = "bytes"): string {
  if (unit === "bytes") {
    if (n >= MiB && n % MiB === 0) return `${n / MiB} MiB`;
    if (n >= KiB && n % KiB === 0) return `${n / KiB} KiB`;
  }
  return `${formatCount(n)} ${unit}`;
}

/** Up to `max` bytes of a body; `complete` is false when there was more (it was cancelled). */
export async function readBounded(
  body: ReadableStream<Uint8Array> | null,
  max: number,
): Promise<{ bytes: Uint8Array; complete: boolean }> {
  if (!body) return { bytes: new Uint8Array(0), complete: true };
  const reader = body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  try {
    while (true) {
      const { done, value } = await reader.read();
      if (done) return { bytes: concatBytes(parts, size), complete: true };
      if (size + value.length > max) {
        parts.push(value.subarray(0, max - size));
        size = max;
        // Stop the transfer now: what is left may be endless.
        await reader.cancel().catch(() => {});
        return { bytes: concatBytes(parts, size), complete: false };
      }
      parts.push(ownBytes(value));
      size += value.length;
    }
  } finally {
    reader.releaseLock();
  }
}

/** A short, quoted sample of what arrived, for an error message; binary data is named so. */
export function sample(text: string, max = 120): string {
  const cut = text.slice(0, max);
  // U+FFFD stands for bytes that are not UTF-8; control characters are rare in text.
  let odd = 0;
  for (let i = 0; i < cut.length; i++) {
    const c = cut.charCodeAt(i);
    if (c === 0xfffd || c < 9 || (c > 13 && c < 32)) odd++;
  }
  if (odd > cut.length / 10) return "binary data, not text";
  return JSON.stringify(text.length > max ? `${cut}...` : cut);
}
