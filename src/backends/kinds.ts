/**
 * The backend kinds, by name: the one place that knows which module speaks which API. A new
 * kind is its folder (`<kind>/kind.ts`, a BackendClient over a StreamingChatClient of
 * chat_stream.ts) and its entry here, registered through registerBackendKind as the product's are; a kind of the
 * product also has its name in BACKEND_KINDS (settings/types.ts), which settings accept.
 */
import type { BackendKind } from "../settings/types.ts";
import type {
  BackendClient,
  BackendFactory,
  BackendKindEntry,
  BackendKindFacts,
  BackendTarget,
} from "./backend_client.ts";

const KINDS = new Map<string, BackendKindEntry>();

/** Adds a kind to the table; a name is registered once. */
export function registerBackendKind(name: string, entry: BackendKindEntry): void {
  if (!/^[a-z][a-z0-9_-]{0,31}$/.test(name)) {
    throw new TypeError(
      `Cannot register backend kind "${name}": use a-z, 0-9, _ or - (32 at most)`,
    );
  }
  if (KINDS.has(name)) {
    throw new TypeError(
      `Cannot register backend kind "${name}": a kind of that name is registered`,
    );
  }
  KINDS.set(name, entry);
}

function kindEntry(kind: string): BackendKindEntry {
  const found = KINDS.get(kind);
  if (!found) {
    throw new TypeError(`"${kind}" is not a backend kind (${[...KINDS.keys()].join(", ")})`);
  }
  return found;
}

/** What servers of `kind` are (backend_client.ts BackendKindFacts). */
export function kindFacts(kind: string): BackendKindFacts {
  return kindEntry(kind).facts;
}

/** The client of `kind` for one endpoint. */
export async function backendClient(
  kind: string,
  target: BackendTarget,
): Promise<BackendClient> {
  return (await kindEntry(kind).load())(target);
}

/** The clients of `kind`, for a caller that makes several (one per endpoint of a pool). */
export function backendFactory(kind: string): Promise<BackendFactory> {
  return kindEntry(kind).load();
}

/** The path a health probe of an endpoint of `kind` GETs. */
export function probePath(kind: string): string {
  return kindEntry(kind).probePath;
}
/** The product's kinds; deno check asks for an entry for every name in settings' BACKEND_KINDS. */
const PRODUCT: Record<BackendKind, BackendKindEntry> = {
  ollama: {
    probePath: "/api/version",
    facts: {
      sizesContext: true,
      chatStream: "an Ollama chat stream",
      chatPath: "/api/chat",
      startHint: `Start it with "ollama serve" or the Ollama app`,
      missingModelHint: (model) => `Pull it with "ollama pull ${model}"`,
      refusedHint: `Cloud models need "ollama signin"`,
      messages: true,
    },
    load: async () => (await import("./ollama/kind.ts")).ollamaBackend,
  },
  openai: {
    probePath: "/v1/models",
    facts: {
      sizesContext: false,
      chatStream: "an OpenAI-compatible chat completion stream",
      chatPath: "/v1/chat/completions",
      startHint: "Check that the server runs and the URL is right",
      missingModelHint: () => "Check the model id",
      messages: false,
      metricsPath: "/metrics",
    },
    load: async () => (await import("./openai/kind.ts")).openaiBackend,
  },
  // Any server of Anthropic's Messages API: vLLM (its docs' Claude Code page), llama.cpp's
  // llama-server, a LiteLLM proxy. No `/api/*`: probed, listed and sized through `/v1/models`.
  anthropic: {
    probePath: "/v1/models",
    facts: {
      sizesContext: false,
      chatStream: "an Anthropic Messages stream",
      chatPath: "/v1/messages",
      startHint: "Check that the server runs and the URL is right (its root, without /v1)",
      missingModelHint: () => "Check the model id against the server's /v1/models",
      messages: true,
      metricsPath: "/metrics",
    },
    load: async () => (await import("./anthropic/kind.ts")).anthropicBackend,
  },
};
for (const [name, entry] of Object.entries(PRODUCT)) registerBackendKind(name, entry);
