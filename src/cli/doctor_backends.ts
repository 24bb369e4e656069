/**
 * `doctor` checks of the native engine's named backends (settings.backends), and of every
 * endpoint of a backend (or of the default Ollama) that is a pool.
 */
import { OllamaClient } from "../backends/ollama.ts";
import { errorMessage } from "../errors.ts";
import { type BackendSpec, endpointsOf, type EndpointSpec } from "../settings/types.ts";
import { type Check, fetchJson, HTTP_TIMEOUT_MS, isObject, withoutAdvice } from "./doctor_check.ts";

/**
 * One check per backend: Ollama ones answer /api/version, OpenAI ones list /v1/models. A pool
 * is checked at each endpoint: it passes when all answer, warns when some do (its jobs then
 * run on those), and fails when none does.
 */
export function backendChecks(
  backends: Record<string, BackendSpec>,
  env: Record<string, string | undefined>,
): Promise<Check[]> {
  return Promise.all(
    Object.entries(backends).map(async ([name, spec]) => {
      const one = (at: BackendSpec) =>
        at.kind === "ollama" ? ollamaBackend(name, at) : openaiBackend(name, at, env);
      const endpoints = endpointsOf(spec);
      if (endpoints.length === 1) return await one(spec);
      const each = await Promise.all(endpoints.map((e) => one({ ...spec, url: e.url })));
      return poolCheck(`backend.${name}`, `Backend ${name}`, endpoints, each);
    }),
  );
}

/** The default Ollama as a pool (baseUrls): each endpoint answers /api/version. */
export async function ollamaPoolCheck(baseUrls: readonly EndpointSpec[]): Promise<Check[]> {
  if (baseUrls.length < 2) return [];
  const each = await Promise.all(
    baseUrls.map((e) => ollamaBackend("ollama", { url: e.url, kind: "ollama" })),
  );
  return [poolCheck("ollama.pool", "Ollama pool", baseUrls, each)];
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

async function ollamaBackend(name: string, spec: BackendSpec): Promise<Check> {
  const base = { id: `backend.${name}`, title: `Backend ${name}` };
  const details = { url: spec.url, kind: spec.kind };
  try {
    const version = await new OllamaClient(spec.url, HTTP_TIMEOUT_MS).version();
    return {
      ...base,
      status: "pass",
      summary: `Ollama ${version} at ${spec.url}`,
      details: { ...details, version },
    };
  } catch (e) {
    return {
      ...base,
      status: "fail",
      summary: withoutAdvice(errorMessage(e)),
      hint: `Start the Ollama server behind it, or fix its URL: ollama-delegate config ` +
        `--backend ${name}=<url> --backend-kind ollama`,
      details,
    };
  }
}

async function openaiBackend(
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
  const answer = await fetchJson(
    `${spec.url}/v1/models`,
    key ? { headers: { authorization: `Bearer ${key}` } } : {},
  );
  if (!answer.ok) {
    const rejected = answer.status === 401 || answer.status === 403;
    return {
      ...base,
      status: "fail",
      summary: `${spec.url}/v1/models ${
        answer.status === undefined ? "cannot be reached" : "failed"
      } (${answer.why})${missingNote}`,
      hint: keyHint ??
        (rejected
          ? `The server refused the key: check ${spec.apiKeyEnv ?? "the API key"} ` +
            `(ollama-delegate config --backend ${name}=<url> --api-key-env <VAR>)`
          : `Start the server, or fix its URL: ollama-delegate config --backend ${name}=<url>`),
      details,
    };
  }
  const data = isObject(answer.body) && Array.isArray(answer.body.data) ? answer.body.data : null;
  if (!data) {
    return {
      ...base,
      status: "fail",
      summary: `${spec.url}/v1/models answered without a model list, so it is not ` +
        `OpenAI-compatible at this URL`,
      hint: `Point the backend at the server root (without /v1): ollama-delegate config ` +
        `--backend ${name}=<url>`,
      details,
    };
  }
  const ids = data.flatMap((m) => isObject(m) && typeof m.id === "string" ? [m.id] : []);
  return {
    ...base,
    status: keyMissing ? "warn" : "pass",
    summary: `${spec.url} lists ${ids.length} model(s)${missingNote}`,
    ...(keyHint ? { hint: keyHint } : {}),
    details: { ...details, models: ids },
  };
}
