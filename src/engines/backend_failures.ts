/**
 * How a turn fails because of its backend, in words both engines share: each job error starts
 * with a status word and a colon, so the orchestrator can act on the kind without parsing
 * prose, and a backend that cannot be reached is named the same way whichever engine found
 * out (the native engine's own requests, or the claude engine's probe after Claude Code's
 * requests failed).
 *
 *   backend_unreachable     no connection, or the server failed (5xx, 429) after the retries:
 *                           start it, or try again later
 *   auth_failed             401/403: the key or the sign-in
 *   backend_refused         another 4xx: unknown or retired model, no tool support, bad request
 *   backend_protocol_error  not a chat stream, a stream cut short, a reply over the caps
 *   context_overflow        the request cannot fit the model's context
 *   misconfigured           an unknown backend, a missing API key variable
 */
import { kindFacts } from "../backends/kinds.ts";
import type { BackendKind } from "../settings/types.ts";

export type FailureWord =
  | "backend_unreachable"
  | "auth_failed"
  | "backend_refused"
  | "backend_protocol_error"
  | "context_overflow"
  | "misconfigured";

/**
 * A turn's failure as data (issue 33, item 2): its kind, which the job layer acts on (a
 * fallback model for `backend_unreachable` and `context_overflow`) without reading the text
 * back, and the sentence that says what happened and what to do.
 */
export interface TurnFailure {
  readonly kind: FailureWord;
  readonly text: string;
}

/** The job error of a failure: its status word, a colon, its sentence. The one place it is worded. */
export const failureLine = (f: TurnFailure): string => `${f.kind}: ${f.text}`;

/** A job error that starts with its status word. */
export const tagFailure = (word: FailureWord, text: string): string =>
  failureLine({ kind: word, text });

/** How failure texts name the Ollama at the server's baseUrl. */
export const ollamaAt = (url: string): string => `Ollama at ${url}`;

/**
 * No connection was made to the backend `where` names ("Ollama at <url>", or a named backend
 * with its URL); `reason` says how the attempt failed ("connection failed (ECONNREFUSED)").
 */
export function unreachableText(where: string, reason: string, kind: BackendKind): string {
  return `Cannot reach ${where}: ${reason}. ${kindFacts(kind).startHint}`;
}

/** The job error of a turn whose Ollama at `url` stopped answering. */
export function ollamaUnreachable(url: string, reason: string): string {
  return tagFailure("backend_unreachable", unreachableText(ollamaAt(url), reason, "ollama"));
}

/**
 * A turn names a backend the settings no longer have (they changed since the job started): the
 * job layer refuses it before its engine starts. `messages`: the engine needs a backend that
 * serves Anthropic's Messages API, so the advice says how to add one.
 */
export function unknownBackendError(
  name: string | undefined,
  configured: readonly string[],
  messages = false,
): string {
  return tagFailure(
    "misconfigured",
    `Cannot run job: there is no backend "${name}" (configured: ${configured.join(", ")})` +
      (messages
        ? `. Add it with ollama-delegate config --backend ${name}=<url> --backend-kind anthropic`
        : ""),
  );
}
