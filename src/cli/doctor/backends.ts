/**
 * `doctor` checks of the native engine's named backends (settings.backends), and of every
 * endpoint of a backend (or of the default Ollama) that is a pool.
 */
import { backendClient } from "../../backends/kinds.ts";
import { OllamaClient } from "../../backends/ollama/api.ts";
import { sameModel } from "../../settings/model_names.ts";
import { type BackendSpec, endpointsOf, type EndpointSpec } from "../../settings/types.ts";
import { type Check, HTTP_TIMEOUT_MS } from "./check.ts";
import { missingSomewhere } from "../models/list.ts";

/**
 * One check per backend (Ollama ones answer /api/version, OpenAI ones list /v1/models). A pool
 * is checked at each endpoint: it passes when all answer, warns when some do (its jobs then
 * run on those), and fails when none does.
 */
export function backendChecks(
  backends: Record<string, BackendSpec>,
  env: Record<string, string | undefined>,
): Promise<Check[]> {
  return Promise.all(
    Object.entries(backends).map(async ([name, spec]) => {
      const one = (at: BackendSpec) => backendCheck(name, at, env);
      const endpoints = endpointsOf(spec);
      if (endpoints.length === 1) return await one(spec);
      const each = await Promise.all(endpoints.map((e) => one({ ...spec, url: e.url })));
      return poolCheck(`backend.${name}`, `Backend ${name}`, endpoints, each);
    }),
  );
}

/** One endpoint of the default Ollama's pool: its answer and, when it answered, its models. */
export interface PoolEndpoint {
  check: Check;
  /** The names /api/tags lists; undefined when the endpoint is down or did not list them. */
  models?: string[];
}

/** The default Ollama as a pool (baseUrls): each endpoint's /api/version and /api/tags. */
export async function probeOllamaPool(baseUrls: readonly EndpointSpec[]): Promise<PoolEndpoint[]> {
  if (baseUrls.length < 2) return [];
  return await Promise.all(baseUrls.map(async (e): Promise<PoolEndpoint> => {
    const check = await backendCheck("ollama", { url: e.url, kind: "ollama" }, {});
    if (check.status === "fail") return { check };
    const models = await new OllamaClient(e.url, HTTP_TIMEOUT_MS).tags().then(
      (tags) => tags.map((m) => m.name),
      () => undefined,
    );
    return { check, ...(models ? { models } : {}) };
  }));
}

/**
 * The pool's check: each endpoint up or down and what it holds. The pool places a turn on any
 * endpoint that is up, and one without the turn's model fails it there, so a model of
 * `wanted` (the default and the allowed ones) that some endpoint lacks is a warning.
 */
export function ollamaPoolCheck(
  baseUrls: readonly EndpointSpec[],
  each: readonly PoolEndpoint[],
  wanted: readonly string[],
): Check[] {
  if (each.length === 0) return [];
  const check = poolCheck("ollama.pool", "Ollama pool", baseUrls, each.map((e) => e.check));
  const missing = missingSomewhere(
    each.map((e, i) => ({ url: baseUrls[i]!.url, names: e.models })),
  );
  const lacks = (url: string) => missing.filter((m) => m.at.includes(url)).map((m) => m.name);
  const lines = each.map((e, i) => {
    const url = baseUrls[i]!.url;
    if (e.check.status === "fail") return check.lines![i]!;
    const held = e.models === undefined
      ? "its models could not be listed"
      : `${e.models.length} model(s)` +
        (lacks(url).length > 0 ? `; lacks ${lacks(url).join(", ")}` : "");
    return `${check.lines![i]!}; ${held}`;
  });
  const short = missing.filter((m) => wanted.some((w) => sameModel(w, m.name)));
  const details = {
    ...check.details,
    endpoints: (check.details!.endpoints as Record<string, unknown>[]).map((d, i) => ({
      ...d,
      ...(each[i]!.models ? { models: each[i]!.models } : {}),
    })),
    missing,
  };
  if (short.length === 0) return [{ ...check, lines, details }];
  const named = short.map((m) => `${m.name} (at ${m.at.join(", ")})`).join(", ");
  return [{
    ...check,
    status: check.status === "fail" ? "fail" : "warn",
    summary: `${check.summary}; missing at some endpoints: ${named}`,
    hint: `A turn placed on an endpoint without its model fails there: pull it on each ` +
      `(OLLAMA_HOST=<host:port> ollama pull <model>), or for a model made by models derive, ` +
      `run models derive again, which creates it on every endpoint` +
      (check.hint ? `. ${check.hint}` : ""),
    lines,
    details,
  }];
}

/** One check for a pool from the checks of its endpoints. */
function poolCheck(
  id: string,
  title: string,
  endpoints: readonly EndpointSpec[],
  each: readonly Check[],
): Check {
  const failed = each.filter((c) => c.status === "fail");
  const lines = each.map((c, i) =>
    `${endpoints[i]!.url}  ${c.status === "fail" ? "DOWN" : "up"}: ${c.summary}`
  );
  const answering = each.length - failed.length;
  return {
    id,
    title,
    status: failed.length === 0
      ? (each.some((c) => c.status === "warn") ? "warn" : "pass")
      : answering > 0
      ? "warn"
      : "fail",
    summary: `${answering} of ${each.length} endpoints answer` +
      (failed.length > 0 ? `; down: ${failed.map((c) => String(c.details?.url)).join(", ")}` : ""),
    ...(failed.length > 0
      ? {
        hint: `Jobs go to the endpoints that answer. ${failed[0]!.hint ?? ""}`.trim(),
      }
      : {}),
    details: {
      endpoints: each.map((c, i) => ({ url: endpoints[i]!.url, status: c.status, ...c.details })),
    },
    lines,
  };
}

/**
 * One endpoint of a backend: what the server says about itself when asked as its kind asks
 * (backends/kinds.ts: Ollama's version, an OpenAI-compatible server's model list), sent with
 * the backend's own key only.
 */
async function backendCheck(
  name: string,
  spec: BackendSpec,
  env: Record<string, string | undefined>,
): Promise<Check> {
  const base = { id: `backend.${name}`, title: `Backend ${name}` };
  const key = spec.apiKeyEnv ? env[spec.apiKeyEnv] : undefined;
  const keyMissing = spec.apiKeyEnv !== undefined && !key;
  const details = {
    url: spec.url,
    kind: spec.kind,
    ...(spec.apiKeyEnv ? { apiKeyEnv: spec.apiKeyEnv, apiKeySet: !keyMissing } : {}),
  };
  const missingNote = keyMissing
    ? `; ${spec.apiKeyEnv} is not set in this environment, so no key was sent`
    : "";
  const keyHint = keyMissing
    ? `Set ${spec.apiKeyEnv} in the environment the server starts in (the shell that starts ` +
      `Claude Code, or the env of its MCP entry)`
    : undefined;
  const client = await backendClient(spec.kind, {
    url: spec.url,
    label: `backend "${name}"`,
    ...(key ? { apiKey: key } : {}),
  });
  const answer = await client.identify(HTTP_TIMEOUT_MS);
  if (!answer.ok) {
    return {
      ...base,
      status: "fail",
      summary: `${answer.summary}${missingNote}`,
      hint: keyHint ??
        (answer.rejected
          ? `The server refused the key: check ${spec.apiKeyEnv ?? "the API key"} ` +
            `(ollama-delegate config --backend ${name}=<url> --api-key-env <VAR>)`
          : answer.foreign
          ? `Point the backend at the server root (without /v1): ollama-delegate config ` +
            `--backend ${name}=<url>`
          : `Start ${client.serverName}, or fix its URL: ollama-delegate config ` +
            `--backend ${name}=<url> --backend-kind ${spec.kind}`),
      details,
    };
  }
  return {
    ...base,
    status: keyMissing ? "warn" : "pass",
    summary: `${answer.summary}${missingNote}`,
    ...(keyHint ? { hint: keyHint } : {}),
    details: { ...details, ...answer.details },
  };
}
