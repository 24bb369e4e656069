/**
 * Where a claude turn's requests go. On the default Ollama (baseUrl or the endpoint of its
 * pool the turn was placed on), Claude Code talks to it directly, as it always did. On a named
 * backend (`engine: "claude", backend: "vllm"`), which must serve Anthropic's Messages API
 * (kind `ollama` or `anthropic`), Claude Code talks to the loopback relay in front of it
 * (backends/key_relay.ts): the backend's key stays in the server, and the session's echoed
 * tokens ride along. Either way the turn's watch probes the endpoint itself, as its kind is
 * probed, and a refusal says what to fix. The backend comes resolved by the job layer
 * (TurnSpec.backend), its key with it.
 */
import type { BackendKind } from "../../settings/types.ts";
import { backendClient, kindFacts } from "../../backends/kinds.ts";
import type { KeyRelay } from "../../backends/key_relay.ts";
import type { ResolvedBackend } from "../../settings/backends.ts";
import { errorMessage } from "../../errors.ts";
import { tagFailure, unknownBackendError } from "../backend_failures.ts";
import type { TurnSpec } from "../types.ts";
import { ollamaEndpoint, type WatchedEndpoint } from "./backend_watch.ts";

/** One turn's endpoint, open until `close`. */
export interface EndpointTarget {
  /** What Claude Code gets as ANTHROPIC_BASE_URL. */
  baseUrl: string;
  /** The endpoint itself. */
  url: string;
  kind: BackendKind;
  /** How the turn's watch probes and names it. */
  watched: WatchedEndpoint;
  /** The context the endpoint serves `model` with, when it says (not Ollama: /api/ps says). */
  servedContext(model: string): Promise<number | undefined>;
  close(): void;
}

/**
 * One relay for the process: it listens only while a turn has a route open. Loaded at the first
 * turn on a named backend: turns on the default Ollama never need its HTTP server.
 */
let relay: Promise<KeyRelay> | undefined;
const keyRelay = () =>
  relay ??= import("../../backends/key_relay.ts").then((m) => new m.KeyRelay(), (e) => {
    relay = undefined;
    throw e;
  });

/** Opens the turn's endpoint, or says why the turn cannot run there. */
export async function openTarget(
  spec: TurnSpec,
): Promise<EndpointTarget | { refused: string }> {
  const backend = spec.backend;
  if (!backend) return { refused: "Cannot run job: the job layer gave the turn no backend" };
  if ("unknown" in backend) {
    return { refused: unknownBackendError(backend.unknown, backend.configured, true) };
  }
  if (backend.builtIn) {
    // On a pool of Ollamas the turn is pinned to the endpoint it was placed on: Claude Code
    // sends every request of the turn there.
    const url = spec.endpoint?.url ?? backend.url;
    return {
      baseUrl: url,
      url,
      kind: "ollama",
      watched: ollamaEndpoint(url),
      servedContext: () => Promise.resolve(undefined),
      close: () => {},
    };
  }
  const refused = whyNot(backend);
  if (refused) return { refused };
  const url = spec.endpoint?.url ?? backend.url;
  let route;
  try {
    route = await (await keyRelay()).open({
      // A pool's turn stays on the endpoint it was placed on; the job layer may move it.
      target: () => spec.endpoint?.url ?? backend.url,
      ...(backend.apiKey ? { apiKey: backend.apiKey } : {}),
      session: spec.sessionId,
    });
  } catch (e) {
    return {
      refused: `Cannot start Claude Code: the relay to ${url} could not listen: ${errorMessage(e)}`,
    };
  }
  const where = `backend "${backend.name}" at ${url}`;
  return {
    baseUrl: route.baseUrl,
    url,
    kind: backend.kind,
    watched: { url, kind: backend.kind, where },
    async servedContext(model) {
      // Ollama's comes from /api/ps (run.ts); the others say it in their model list, which
      // the kind's client reads under its own timeout.
      if (backend.kind === "ollama") return undefined;
      const client = await backendClient(backend.kind, {
        url,
        label: `backend "${backend.name}"`,
        ...(backend.apiKey ? { apiKey: backend.apiKey } : {}),
      });
      const connected = await client.connect(model, {}).catch(() => undefined);
      return connected?.model?.contextLength;
    },
    close: () => route.close(),
  };
}

/** Why a turn of the claude engine cannot run on `backend`; undefined when it can. */
function whyNot(backend: ResolvedBackend): string | undefined {
  if (backend.apiKeyEnv && !backend.apiKey) {
    return tagFailure(
      "misconfigured",
      `Cannot run job: backend "${backend.name}" takes its API key from $${backend.apiKeyEnv}, ` +
        "which is not set in the server's environment. Set it where the server starts (the " +
        "shell that starts Claude Code, or the env of its MCP entry)",
    );
  }
  if (!kindFacts(backend.kind).messages) {
    return tagFailure(
      "misconfigured",
      `Cannot run job: backend "${backend.name}" is of kind ${backend.kind}, which does not ` +
        "serve the Messages API Claude Code speaks. Use engine native for it, or configure " +
        "the server's /v1/messages as a backend of kind anthropic",
    );
  }
  return undefined;
}
