/**
 * The job layer's side of `residency` (settings/residency.ts says what counts as local): a
 * turn that would leave this machine and its private network is refused while the setting is
 * "local", and an agent's fallback models that would are left out, with a note that says so.
 */
import type { ResolvedBackend } from "../settings/backends.ts";
import {
  KEEP_LOCAL_HINT,
  type ModelPlace,
  placeReason,
  runsOnCloud,
  workPlace,
} from "../settings/residency.ts";
import type { Residency } from "../settings/types.ts";
import type { JobProblem, ModelRole } from "./errors.ts";
import type { JobRecord } from "./record.ts";

/** Why a turn of `model` on `backend` may not run, or undefined when it may. */
export function residencyProblem(
  residency: Residency,
  role: ModelRole,
  model: ModelPlace,
  backend: Pick<ResolvedBackend, "name" | "endpoints">,
): Extract<JobProblem, { kind: "not-local" }> | undefined {
  if (residency !== "local") return undefined;
  const where = workPlace([model], backend.endpoints.map((e) => e.url));
  if (where.place === "local") return undefined;
  return {
    kind: "not-local",
    role,
    model: model.name,
    backend: backend.name,
    place: where.place,
    reason: placeReason(where),
  };
}

/**
 * The fallback models a job may move to under `residency`: all of them, or with "local" only
 * those that do not run on Ollama's cloud (they run on the job's own backend, already judged);
 * the note names the others.
 */
export function residentFallbacks(
  residency: Residency,
  fallback: readonly ModelPlace[],
  agent: string | undefined,
): { kept: string[]; note?: string } {
  if (residency !== "local") return { kept: fallback.map((m) => m.name) };
  const kept = fallback.filter((m) => !runsOnCloud(m)).map((m) => m.name);
  const out = fallback.filter(runsOnCloud).map((m) => `"${m.name}"`);
  if (out.length === 0) return { kept };
  const whose = agent !== undefined ? `agent "${agent}"'s` : "the session's";
  return {
    kept,
    note: `${whose} fallback model${out.length === 1 ? "" : "s"} ${out.join(", ")} ` +
      `${out.length === 1 ? "is" : "are"} left out: ${
        out.length === 1 ? "it runs" : "they run"
      } on ollama.com, and residency is "local"`,
  };
}

/**
 * The refusal's first part, the same for both front ends: `the default model "x" (backend
 * "ollama") would leave this machine: x runs on ollama.com, through http://..., and residency
 * is "local" (this machine or a private network only)`.
 */
export function notLocalText(p: Extract<JobProblem, { kind: "not-local" }>): string {
  const whose = {
    call: "model",
    default: "the default model",
    session: "the session's model",
    reviewer: "reviewer model",
  }[p.role];
  return `${whose} "${p.model}" (backend "${p.backend}") would leave this machine: ${p.reason}; ` +
    `the setting residency is "local" (this machine or a private network only)`;
}

/**
 * Where a job's turn ran (or runs), from its record: every model it used (a fallback moves it)
 * on every endpoint it was sent to (a pool may move it), as the `where:` line says it:
 * `local (http://127.0.0.1:11434, this machine)`, `cloud (gpt-oss:120b-cloud runs on
 * ollama.com, through http://127.0.0.1:11434; ...)`. Undefined until the turn is placed.
 */
export function recordPlaceText(
  r: Pick<JobRecord, "model" | "fallbacks" | "endpoint" | "cloudModels">,
): string | undefined {
  if (!r.endpoint) return undefined;
  const names = [...new Set([...(r.fallbacks ?? []).map((f) => f.from), r.model])];
  const urls = [...new Set([...(r.endpoint.moves ?? []).map((m) => m.from), r.endpoint.url])];
  const where = workPlace(
    names.map((name) => ({ name, cloud: r.cloudModels?.includes(name) ?? false })),
    urls,
  );
  const reason = placeReason(where);
  return where.place === "local"
    ? `local (${reason})`
    : `${where.place} (${reason}; ${KEEP_LOCAL_HINT})`;
}
