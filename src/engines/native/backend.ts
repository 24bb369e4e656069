import type { BackendKind, BackendSpec } from "../../settings/types.ts";

/** A backend with its key looked up. The key goes only to `url`. */
export interface ResolvedBackend {
  name: string;
  url: string;
  kind: BackendKind;
  apiKeyEnv?: string;
  apiKey?: string;
}

/** The name of the default backend in messages and records. */
export const DEFAULT_BACKEND = "ollama";

/** The native engine's backends: the Ollama at baseUrl and the user's named endpoints. */
export interface BackendTable {
  baseUrl: string;
  backends: Record<string, BackendSpec>;
  /** The server's environment: API keys are read from here, by name, per backend. */
  env: Record<string, string | undefined>;
}

/** Resolves a backend by name; undefined = the Ollama at baseUrl; unknown names give undefined. */
export function resolveBackend(
  table: BackendTable,
  name: string | undefined,
): ResolvedBackend | undefined {
  const own = name !== undefined && Object.hasOwn(table.backends, name);
  if (name === undefined || (name === DEFAULT_BACKEND && !own)) {
    return { name: DEFAULT_BACKEND, url: table.baseUrl, kind: "ollama" };
  }
  // Own keys only: "constructor" or "toString" are not backends.
  const spec = own ? table.backends[name] : undefined;
  if (!spec) return undefined;
  const apiKey = spec.apiKeyEnv ? table.env[spec.apiKeyEnv] : undefined;
  return {
    name,
    url: spec.url,
    kind: spec.kind,
    ...(spec.apiKeyEnv ? { apiKeyEnv: spec.apiKeyEnv } : {}),
    ...(apiKey ? { apiKey } : {}),
  };
}

/** Names of every backend a call may use. */
export function backendNames(table: BackendTable): string[] {
  const names = Object.keys(table.backends);
  return names.includes(DEFAULT_BACKEND) ? names : [DEFAULT_BACKEND, ...names];
}
