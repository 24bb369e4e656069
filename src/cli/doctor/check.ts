/** One line of the `doctor` report and the small helpers every check uses. */

import { errorDetail } from "../../backends/http_util.ts";

export type CheckStatus = "pass" | "fail" | "warn";

export interface Check {
  /** Stable, for scripts: "claude", "ollama", "model.default", "backend.<name>"... */
  id: string;
  /** What was checked, for people: "Claude Code CLI". */
  title: string;
  status: CheckStatus;
  /** One sentence: what was found. */
  summary: string;
  /** What to do about a fail or warn. */
  hint?: string;
  /** Machine-readable facts behind the summary (paths, versions, models). */
  details?: Record<string, unknown>;
  /** Extra lines under the summary in the text report (a model table). */
  lines?: string[];
}

/** HTTP checks give up after this, so `doctor` never hangs on a silent endpoint. */
export const HTTP_TIMEOUT_MS = 3000;

/**
 * The context coding agents need: a job's conversation grows with every file read and
 * command run, and Ollama's context-length docs recommend at least 64000 tokens for them.
 */
export const NEEDED_CONTEXT = 65_536;

/** Ollama's own fix hint for its default context (4k under 24 GiB of VRAM, more above). */
export const RAISE_CONTEXT_HINT =
  `Raise Ollama's context to ${NEEDED_CONTEXT}: start the server with ` +
  `OLLAMA_CONTEXT_LENGTH=${NEEDED_CONTEXT} ollama serve, or give the model a Modelfile with ` +
  `"PARAMETER num_ctx ${NEEDED_CONTEXT}" (ollama create <name> -f Modelfile); if the model ` +
  `itself supports less, pick one with a longer context`;

/** A plain GET/POST with a timeout; never throws. */
export async function fetchJson(
  url: string,
  init: { method?: string; body?: string; headers?: Record<string, string> } = {},
  timeoutMs = HTTP_TIMEOUT_MS,
): Promise<
  { ok: true; status: number; body: unknown } | { ok: false; status?: number; why: string }
> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: init.method ?? "GET",
      headers: { "content-type": "application/json", ...init.headers },
      ...(init.body !== undefined ? { body: init.body } : {}),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (cause) {
    const inner = (cause as { cause?: { code?: string; message?: string } }).cause;
    const why = (cause as Error).name === "TimeoutError"
      ? `no answer within ${timeoutMs / 1000} s`
      : inner?.code ?? inner?.message ?? (cause as Error).message;
    return { ok: false, why };
  }
  const text = await response.text().catch(() => "");
  let body: unknown = undefined;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: the caller decides whether that matters.
  }
  if (!response.ok) {
    const detail = errorDetail(body, text).slice(0, 200);
    return { ok: false, status: response.status, why: `HTTP ${response.status}: ${detail}` };
  }
  return { ok: true, status: response.status, body };
}
