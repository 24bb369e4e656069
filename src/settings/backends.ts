/**
 * Which endpoints a backend name stands for: the default Ollama (baseUrl, or baseUrls as a
 * pool) or one of the user's named backends, with its API key looked up by name in the
 * server's environment. Settings resolution, read by the job layer (model choice, endpoint
 * pools) and the reports; the engines get a turn's backend resolved (TurnSpec.backend).
 */
import {
  type BackendKind,
  type BackendSpec,
  endpointsOf,
  type EndpointSpec,
  type Settings,
} from "./types.ts";

/** One endpoint of a backend, with the limit its jobs hold to there (none = no shared limit). */
export interface ResolvedEndpoint {
  url: string;
  limit?: number;
}

/** A backend with its key looked up. The key goes only to the backend's own endpoints. */
export interface ResolvedBackend {
  name: string;
  /** The first endpoint; the only one unless the backend is a pool. */
  url: string;
  /** Every endpoint, in the order configured; one for a backend that is not a pool. */
  endpoints: ResolvedEndpoint[];
  kind: BackendKind;
  apiKeyEnv?: string;
  apiKey?: string;
  /**
   * The default Ollama (baseUrl, or its pool), not a backend the user named, which may also be
   * called "ollama": the claude engine talks to this one directly, to a named one through the
   * key relay (engines/claude/endpoint_target.ts).
   */
  builtIn?: true;
}

/** The name of the default backend in messages and records. */
export const DEFAULT_BACKEND = "ollama";

/** The native engine's backends: the Ollama at baseUrl and the user's named endpoints. */
export interface BackendTable {
  baseUrl: string;
  /** The default Ollama as a pool; empty or absent = baseUrl alone. */
  baseUrls?: readonly EndpointSpec[];
  /** Jobs at once on each endpoint of the default Ollama (maxConcurrent); none when absent. */
  defaultLimit?: number;
  backends: Record<string, BackendSpec>;
  /**
   * The user's backend for a job that names none (defaultBackend); absent or "" = the Ollama at
   * baseUrl. Only the job's choice reads it (defaultBackendName): an absent name in resolveBackend
   * stays the Ollama at baseUrl.
   */
  defaultBackend?: string;
  /** The server's environment: API keys are read from here, by name, per backend. */
  env: Record<string, string | undefined>;
}

/**
 * The table of the settings in force: the one the job layer resolves every backend name in,
 * for choosing a job's model and placing its turns alike, so both see the same endpoints and
 * limits (maxConcurrent on each endpoint of the default Ollama, a backend's own on the others).
 */
export function backendTable(
  s:
    & Pick<Settings, "baseUrl" | "backends">
    & Partial<Pick<Settings, "baseUrls" | "maxConcurrent" | "defaultBackend">>,
  env: Record<string, string | undefined>,
): BackendTable {
  return {
    baseUrl: s.baseUrl,
    ...(s.baseUrls ? { baseUrls: s.baseUrls } : {}),
    ...(s.maxConcurrent !== undefined ? { defaultLimit: s.maxConcurrent } : {}),
    backends: s.backends,
    ...(s.defaultBackend ? { defaultBackend: s.defaultBackend } : {}),
    env,
  };
}

/**
 * The URLs of the default Ollama: each endpoint of `baseUrls` when it is a pool, else
 * `baseUrl` alone (which a pool replaces).
 */
export function defaultOllamaUrls(
  s: { baseUrl: string; baseUrls?: readonly EndpointSpec[] },
): string[] {
  return s.baseUrls && s.baseUrls.length > 0 ? s.baseUrls.map((e) => e.url) : [s.baseUrl];
}

/**
 * The name of the user's backend a job that names none runs on (defaultBackend), or undefined
 * for the Ollama at baseUrl: also when the setting names "ollama" and the user has no backend of
 * that name, so that a job then runs exactly as without the setting.
 */
export function defaultBackendName(
  table: Pick<BackendTable, "backends" | "defaultBackend">,
): string | undefined {
  const name = table.defaultBackend;
  return name && Object.hasOwn(table.backends, name) ? name : undefined;
}

/** Resolves a backend by name; undefined = the Ollama at baseUrl; unknown names give undefined. */
export function resolveBackend(
  table: BackendTable,
  name: string | undefined,
): ResolvedBackend | undefined {
  const own = name !== undefined && Object.hasOwn(table.backends, name);
  if (name === undefined || (name === DEFAULT_BACKEND && !own)) {
    const pool = table.baseUrls && table.baseUrls.length > 0
      ? table.baseUrls
      : [{ url: table.baseUrl }];
    const endpoints = pool.map((e) => endpoint(e, table.defaultLimit));
    return {
      name: DEFAULT_BACKEND,
      url: endpoints[0]!.url,
      endpoints,
      kind: "ollama",
      builtIn: true,
    };
  }
  // Own keys only: "constructor" or "toString" are not backends.
  const spec = own ? table.backends[name] : undefined;
  if (!spec) return undefined;
  const apiKey = spec.apiKeyEnv ? table.env[spec.apiKeyEnv] : undefined;
  const endpoints = endpointsOf(spec).map((e) => endpoint(e, spec.maxConcurrent));
  return {
    name,
    url: endpoints[0]!.url,
    endpoints,
    kind: spec.kind,
    ...(spec.apiKeyEnv ? { apiKeyEnv: spec.apiKeyEnv } : {}),
    ...(apiKey ? { apiKey } : {}),
  };
}

function endpoint(spec: EndpointSpec, backendLimit: number | undefined): ResolvedEndpoint {
  const limit = spec.maxConcurrent ?? backendLimit;
  return { url: spec.url, ...(limit !== undefined ? { limit } : {}) };
}

/**
 * Why `defaultBackend` names no backend of `backends` (a sentence quoting the name and the
 * backends there are), or undefined when it names one or is empty. "ollama" not among them is
 * the Ollama at baseUrl, as for a call's `backend`.
 */
export function unknownDefaultBackend(
  s: Pick<Settings, "defaultBackend" | "backends">,
): string | undefined {
  const name = s.defaultBackend;
  if (name === "" || name === DEFAULT_BACKEND || Object.hasOwn(s.backends, name)) return undefined;
  const known = backendNames({ baseUrl: "", backends: s.backends, env: {} })
    .map((n) => JSON.stringify(n)).join(", ");
  return `${JSON.stringify(name)} is not one of your backends (${known}); name one of them, ` +
    `or add ${JSON.stringify(name)} to backends`;
}

/** Names of every backend a call may use. */
export function backendNames(table: BackendTable): string[] {
  const names = Object.keys(table.backends);
  return names.includes(DEFAULT_BACKEND) ? names : [DEFAULT_BACKEND, ...names];
}
