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
  BackendKindFacts,
  BackendTarget,
} from "./backend_client.ts";

const KINDS: Record<BackendKind, BackendKindEntry> = {
  ollama: {
    probePath: "/api/version",
    facts: {
      sizesContext: true,
      chatStream: "an Ollama chat stream",
      chatPath: "/api/chat",
      startHint: `Start it with "ollama serve" or the Ollama app`,
      missingModelHint: (model) => `Pull it with "ollama pull ${model}"`,
      refusedHint: `Cloud models need "ollama signin"`,
    },
    load: async () => (await import("./kind_ollama.ts")).ollamaBackend,
  },
  openai: {
    probePath: "/v1/models",
    facts: {
      sizesContext: false,
      chatStream: "an OpenAI-compatible chat completion stream",
      chatPath: "/v1/chat/completions",
      startHint: "Check that the server runs and the URL is right",
      missingModelHint: () => "Check the model id",
    },
    load: async () => (await import("./kind_openai.ts")).openaiBackend,
  },
};

/** What servers of `kind` are (backend_client.ts BackendKindFacts). */
export function kindFacts(kind: BackendKind): BackendKindFacts {
  return KINDS[kind].facts;
}

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
