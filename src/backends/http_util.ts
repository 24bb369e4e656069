/** Small helpers for reading what HTTP backends answer. */

import { isObject } from "../platform/json_object.ts";

/** Longest server message kept in an error. */
const MAX_DETAIL_CHARS = 500;

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

/**
 * The server's message from an error body (OpenAI, Anthropic, Ollama, FastAPI and plain-text
 * shapes), short: the one reader of HTTP error bodies, for the chat clients, the Ollama client,
 * the model lists and the doctor's probes. `text` is the body as read, said when the JSON names
 * no message (or is no JSON).
 */
export function errorDetail(body: unknown, text?: string): string {
  let detail = text?.trim() || "(no error message)";
  if (isObject(body)) {
    if (typeof body.error === "string") detail = body.error;
    else if (isObject(body.error)) {
      detail = typeof body.error.message === "string"
        ? body.error.message
        : JSON.stringify(body.error);
    } else if (typeof body.message === "string") detail = body.message;
    // FastAPI's own errors (vLLM's and LiteLLM's servers): {"detail": "Not Found"}.
    else if (typeof body.detail === "string") detail = body.detail;
  } else if (typeof body === "string" && body.trim() !== "") detail = body.trim();
  return detail.length > MAX_DETAIL_CHARS ? `${detail.slice(0, MAX_DETAIL_CHARS)}...` : detail;
}

/** The JSON value of `text`, or the text itself when it is not JSON. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export type Json = Record<string, unknown>;
export const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);

/**
 * Why a fetch made no connection, in the words job errors quote: the system's error code
 * (ECONNREFUSED) where the runtime gives one, "no answer in time" for a timeout.
 */
export function fetchFailure(cause: unknown): string {
  const inner = (cause as { cause?: { code?: string; message?: string } }).cause;
  if ((cause as Error).name === "TimeoutError") return "no answer in time";
  if (inner?.code) return inner.code;
  const text = inner?.message ?? (cause as Error).message;
  // Deno says it in words ("tcp connect error: Connection refused (os error 111)"); Node's
  // code is shorter and the same on every runtime.
  return OS_ERRORS.find(([pattern]) => pattern.test(text))?.[1] ?? text;
}

const OS_ERRORS: ReadonlyArray<readonly [RegExp, string]> = [
  [/connection refused/i, "ECONNREFUSED"],
  [/connection reset/i, "ECONNRESET"],
  [/no route to host/i, "EHOSTUNREACH"],
  [/network is unreachable/i, "ENETUNREACH"],
  [/dns error|failed to lookup address|name or service not known/i, "ENOTFOUND"],
];
