const BRAND = Symbol.for("ollama-delegate.DelegateError");

/**
 * A failure a caller is expected to handle: bad input from a tool call, an unreachable
 * endpoint, a refused model. The message says what could not be done and why, and for
 * tool-facing errors ends with what the user can do.
 */
export class DelegateError extends Error {
  readonly [BRAND] = true;
  override name = "DelegateError";

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** True for a DelegateError from any copy of this module (bundles may hold two). */
export function isDelegateError(value: unknown): value is DelegateError {
  return typeof value === "object" && value !== null &&
    (value as Record<symbol, unknown>)[BRAND] === true;
}

/** The message of any thrown value, for logs and tool results. */
export function errorMessage(value: unknown): string {
  if (value instanceof Error) return value.message;
  return String(value);
}
