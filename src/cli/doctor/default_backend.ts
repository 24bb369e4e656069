/**
 * `doctor` checks of the default backend when the user names one (defaultBackend, issue 33):
 * which backend a job that names none runs on, and that the model it would ask for there (the
 * defaultModel: a named backend has no automatic pick) is among the models it lists. The
 * backend's own checks (backends.ts, and messages.ts for its kind) say whether it answers.
 */
import { sameModel } from "../../settings/model_names.ts";
import { endpointsOf, type Settings } from "../../settings/types.ts";
import { escapeLine } from "../../platform/plain_text.ts";
import type { Check } from "./check.ts";

/** The ids of the Ollama checks that are about the default model: not the default's then. */
export const OLLAMA_DEFAULT_IDS: readonly string[] = ["model.default", "model.context"];

/**
 * The default backend's line and its default model check, from `backendCheck`, the backend's
 * own check (its details hold the models a `/v1/models` kind lists).
 */
export function defaultBackendChecks(
  s: Pick<Settings, "backends" | "defaultModel">,
  name: string,
  backendCheck: Check | undefined,
): Check[] {
  const spec = s.backends[name]!;
  const urls = endpointsOf(spec).map((e) => e.url);
  const backend: Check = {
    id: "backend.default",
    title: "Default backend",
    status: "pass",
    summary: `jobs that name no backend run on backend "${name}" (kind ${spec.kind}, ` +
      `${urls.join(", ")}), set in defaultBackend`,
    details: { backend: name, kind: spec.kind, urls },
  };
  const base = { id: "model.default", title: "Default model" };
  const model = s.defaultModel;
  if (model === "") {
    return [backend, {
      ...base,
      status: "fail",
      summary: `no defaultModel: a job on backend "${name}" that names no model is refused ` +
        `(only the Ollama at baseUrl picks one itself)`,
      hint: `Set one of its models: ollama-delegate config --default-model <model>`,
      details: { model: null, backend: name },
    }];
  }
  const details = { model, backend: name };
  if (!backendCheck || backendCheck.status === "fail") {
    return [backend, {
      ...base,
      status: "fail",
      summary: `"${escapeLine(model)}" not checked: backend "${name}" does not answer`,
      hint: backendCheck?.hint ?? `See the check of backend ${name} below`,
      details,
    }];
  }
  const listed = listedModels(backendCheck);
  if (listed === undefined) {
    return [backend, {
      ...base,
      status: "warn",
      summary: `"${escapeLine(model)}" on backend "${name}": its answer does not list its ` +
        `models, so the model is not checked`,
      details,
    }];
  }
  // A llama-server serves its one model whatever a request names (as messages.ts counts it).
  if (listed.some((m) => sameModel(m, model)) || listed.length === 1) {
    return [backend, {
      ...base,
      status: "pass",
      summary: `"${escapeLine(model)}" (set in defaultModel) is listed by backend "${name}"`,
      details,
    }];
  }
  return [backend, {
    ...base,
    status: "fail",
    summary: `"${escapeLine(model)}" is not among the ${listed.length} model(s) backend ` +
      `"${name}" lists` +
      (listed.length > 0 ? ` (${listed.slice(0, 5).map(escapeLine).join(", ")})` : ""),
    hint: `Set one of its models as the default: ollama-delegate config --default-model ` +
      `<model> (the id as its /v1/models lists it)`,
    details: { ...details, models: listed },
  }];
}

/** The models a backend's check (or, for a pool, its first endpoint that listed them) saw. */
function listedModels(check: Check): string[] | undefined {
  const own = strings(check.details?.models);
  if (own) return own;
  const endpoints = check.details?.endpoints;
  if (!Array.isArray(endpoints)) return undefined;
  for (const e of endpoints) {
    const found = typeof e === "object" && e !== null
      ? strings((e as Record<string, unknown>).models)
      : undefined;
    if (found) return found;
  }
  return undefined;
}

function strings(v: unknown): string[] | undefined {
  return Array.isArray(v) && v.every((x) => typeof x === "string") ? v as string[] : undefined;
}
