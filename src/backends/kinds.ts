/**
 * The backend kinds, by name: the one place that knows which module speaks which API. A new
 * kind is its module (a BackendClient over a StreamingChatClient, chat_stream.ts), its name
 * in BACKEND_KINDS (settings/types.ts), and its entry here.
 */
import type { BackendKind } from "../settings/types.ts";
import type {
  BackendClient,
  BackendFactory,
  BackendKindEntry,
  BackendTarget,
} from "./backend_client.ts";

const KINDS: Record<BackendKind, BackendKindEntry> = {
  ollama: {
    probePath: "/api/version",
    load: async () => (await import("./kind_ollama.ts")).ollamaBackend,
  },
  openai: {
    probePath: "/v1/models",
    load: async () => (await import("./kind_openai.ts")).openaiBackend,
  },
};

/** The client of `kind` for one endpoint. */
export async function backendClient(
  kind: BackendKind,
  target: BackendTarget,
): Promise<BackendClient> {
  return (await KINDS[kind].load())(target);
}

/** The clients of `kind`, for a caller that makes several (one per endpoint of a pool). */
export function backendFactory(kind: BackendKind): Promise<BackendFactory> {
  return KINDS[kind].load();
}

/** The path a health probe of an endpoint of `kind` GETs. */
export function probePath(kind: BackendKind): string {
  return KINDS[kind].probePath;
}
