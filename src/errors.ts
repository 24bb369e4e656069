const BRAND = Symbol.for("ollama-delegate.DelegateError");

/**
 * A failure a caller is expected to handle: bad input from a tool call, an unreachable
 * endpoint, a refused model. The message says what could not be done and why, and for
 * tool-facing errors ends with what the user can do.
 */
export class DelegateError extends Error {
  readonly [BRAND] = true;
  override name = "DelegateError";
  /** The message in parts, when it was built from them (see FailureParts). */
  readonly failureParts?: FailureParts;

  constructor(message: string | FailureParts, options?: { cause?: unknown }) {
    super(typeof message === "string" ? message : failureText(message), options);
    if (typeof message !== "string") this.failureParts = message;
  }
}

/**
 * A failure's words in parts (issue 33, item 2): what could not be done, what happened, and
 * what the user can do. The sentence is built from them once (failureText); a reader that
 * words the advice apart, as `doctor` does in its hint, takes the parts instead of cutting
 * the sentence with a pattern.
 */
export interface FailureParts {
  /** What could not be done: "Cannot start job"; absent when the facts say it. */
  action?: string;
  /** What happened, with the values: `model "x" was retired by Ollama (...)`. */
  facts: string;
  /** What the user can do: `Pick another model; see ollama_models`. */
  advice?: string;
}

/** The sentence: "<action>: <facts>. <advice>", each part only when present. */
export function failureText(parts: FailureParts): string {
  const head = factsText(parts);
  return parts.advice ? `${head}. ${parts.advice}` : head;
}

/** The sentence without its advice: "<action>: <facts>". */
export function factsText(parts: FailureParts): string {
  return parts.action ? `${parts.action}: ${parts.facts}` : parts.facts;
}

/**
 * What went wrong without the advice: a DelegateError's action and facts, or the whole
 * message of an error that was not built from parts.
 */
export function failureFacts(value: unknown): string {
  const parts = isDelegateError(value) ? value.failureParts : undefined;
  if (!parts) return errorMessage(value);
  return factsText(parts);
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
