import type { BackendKind } from "../../settings/types.ts";

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
