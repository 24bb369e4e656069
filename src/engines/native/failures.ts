/**
 * How a native turn fails: job errors that name the backend and the model, each starting with
 * a status word (../backend_failures.ts lists them, shared with the claude engine).
 */
import { BackendReplyError } from "../../backends/bounded.ts";
import { MAX_ATTEMPTS } from "../../backends/chat_stream.ts";
import { ChatHttpError, ConnectionError } from "../../backends/chat_types.ts";
import { kindFacts } from "../../backends/kinds.ts";
import { errorMessage } from "../../errors.ts";
import {
  failureLine,
  type FailureWord,
  ollamaAt,
  tagFailure,
  type TurnFailure,
  unreachableText,
} from "../backend_failures.ts";
import { DEFAULT_BACKEND, type ResolvedBackend } from "../../settings/backends.ts";

/** What failure texts say of a backend: its name, the endpoint's URL, its kind and key. */
export type BackendNaming = Omit<ResolvedBackend, "endpoints">;

/** The backend's API key variable is not set where the server runs. */
export function missingKeyError(backend: BackendNaming): string {
  return tagFailure(
    "misconfigured",
    `Cannot run job: backend "${backend.name}" takes its API key from $${backend.apiKeyEnv}, ` +
      `which is not set in the server's environment. Set it where the MCP server is ` +
      `started (e.g. claude mcp add ... -e ${backend.apiKeyEnv}=...)`,
  );
}

export function statusOf(e: unknown): number | undefined {
  return e instanceof ChatHttpError ? e.status : undefined;
}

/** An endpoint failure as a job error that names the backend and the model. */
export function endpointError(e: unknown, backend: BackendNaming, model: string): string {
  const failure = endpointFailure(e, backend, model);
  return typeof failure === "string" ? failure : failureLine(failure);
}

/** An endpoint failure of its kind (a chat client's error), or of none (anything else). */
export function endpointFailure(
  e: unknown,
  backend: BackendNaming,
  model: string,
): TurnFailure | string {
  const text = endpointText(e, backend, model);
  const kind = wordOf(e);
  return kind ? { kind, text } : text;
}

/** The status word for an error a chat client raised; undefined for anything else. */
export function wordOf(e: unknown): FailureWord | undefined {
  if (e instanceof ConnectionError) {
    return e.kind === "unreachable" ? "backend_unreachable" : "backend_protocol_error";
  }
  if (e instanceof BackendReplyError) return "backend_protocol_error";
  if (!(e instanceof ChatHttpError)) return undefined;
  if (e.status === 401 || e.status === 403) return "auth_failed";
  if (e.status === 429 || e.status >= 500) return "backend_unreachable";
  return "backend_refused";
}

function endpointText(e: unknown, backend: BackendNaming, model: string): string {
  const kind = kindFacts(backend.kind);
  const where = backend.name === DEFAULT_BACKEND
    ? ollamaAt(backend.url)
    : `backend "${backend.name}" (${backend.url})`;
  // Each kind of failure says what happened: "cannot reach" only when no connection was
  // made, never for a reply that came but was cut, oversized or not a chat stream.
  if (e instanceof ConnectionError && e.kind === "unreachable") {
    return unreachableText(where, e.reason, backend.kind);
  }
  if (e instanceof ConnectionError) {
    return `${where} broke off its reply for "${model}" (${MAX_ATTEMPTS} attempts): ` +
      `${e.reason}. The server may have crashed or restarted: check its log, then try again`;
  }
  if (e instanceof BackendReplyError && e.kind === "limit") {
    return `Stopped reading ${where}: for "${model}" it sent ${e.reason}. The model may be ` +
      `stuck repeating itself, or the server is broken: try again, or use another model or ` +
      `backend`;
  }
  if (e instanceof BackendReplyError) {
    return `${where} did not answer "${model}" with ${kind.chatStream}: ${e.reason}. ` +
      (backend.name === DEFAULT_BACKEND
        ? "Check that baseUrl points at Ollama itself (ollama-delegate config --base-url <url>)"
        : `Check that the URL of backend "${backend.name}" is the server's root (without ` +
          `/v1) and that the server serves ${kind.chatPath}`);
  }
  if (!(e instanceof ChatHttpError)) return `The run failed: ${errorMessage(e)}`;
  const d = e.detail;
  switch (e.status) {
    case 404:
      return `${where} has no model "${model}" (HTTP 404: ${d}). ` +
        kind.missingModelHint(model) +
        ", or pick one from ollama_models";
    case 410:
      return `Model "${model}" was retired (${where}, HTTP 410: ${d}). Pick another model`;
    case 401:
    case 403:
      return `${where} refused the request for "${model}" (HTTP ${e.status}: ${d}). ` +
        (backend.apiKeyEnv ? `Check the API key in $${backend.apiKeyEnv}` : kind.refusedHint ??
          `It may need an API key: ollama-delegate config --backend ${backend.name}=<url> ` +
            `--api-key-env <VAR>`);
    case 400:
      if (/does not support tools/i.test(d)) {
        return `Model "${model}" on ${where} does not support tools (HTTP 400: ${d}). Use a ` +
          `model with tool support, or make it a one-shot with allowed_tools: []`;
      }
      return `${where} rejected the request for "${model}" (HTTP 400: ${d})`;
    default:
      return `${where} failed for "${model}" (HTTP ${e.status}: ${d})` +
        (e.status >= 500 || e.status === 429 ? ` after ${MAX_ATTEMPTS} attempts` : "");
  }
}
