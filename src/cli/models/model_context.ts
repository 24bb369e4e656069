/**
 * The context window a model gets from Ollama, and where that number comes from. Ollama picks
 * it, in order, from a native request's `options.num_ctx`, the model's Modelfile `num_ctx`,
 * the server's OLLAMA_CONTEXT_LENGTH, then a default by VRAM (4k under 24 GiB, 32k up to 48
 * GiB, 256k above). The two server-side values are not in its API; `/api/ps` shows what a
 * loaded model got.
 * Cloud models always run with their full context on ollama.com.
 */
import type { OllamaClient } from "../../backends/ollama/api.ts";
import { loadedContext } from "../../models/loaded_context.ts";
import { HTTP_TIMEOUT_MS } from "../doctor/check.ts";

export interface ModelContext {
  /** The model's maximum (`<arch>.context_length` from /api/show). */
  max?: number;
  /** The Modelfile's `num_ctx`. */
  numCtx?: number;
  /** What /api/ps shows for the model while it is loaded. */
  loaded?: number;
  /** What the next request without `options.num_ctx` runs with, when that can be known. */
  effective?: number;
  source: "cloud" | "modelfile" | "loaded" | "unknown";
}

/** Combines what /api/show and /api/ps say into the context the model runs with. */
export function effectiveContext(
  facts: { max?: number; numCtx?: number; loaded?: number; cloud: boolean },
): ModelContext {
  const base = {
    ...(facts.max !== undefined ? { max: facts.max } : {}),
    ...(facts.numCtx !== undefined ? { numCtx: facts.numCtx } : {}),
    ...(facts.loaded !== undefined ? { loaded: facts.loaded } : {}),
  };
  if (facts.cloud) {
    return { ...base, ...(facts.max ? { effective: facts.max } : {}), source: "cloud" };
  }
  // Ollama caps a Modelfile num_ctx at the model's maximum.
  if (facts.numCtx !== undefined) {
    const effective = facts.max ? Math.min(facts.numCtx, facts.max) : facts.numCtx;
    return { ...base, effective, source: "modelfile" };
  }
  if (facts.loaded !== undefined) return { ...base, effective: facts.loaded, source: "loaded" };
  return { ...base, source: "unknown" };
}

/** /api/show and /api/ps for one model. Errors of /api/show are left to the caller. */
export async function modelContext(
  client: OllamaClient,
  model: string,
  cloud: boolean,
): Promise<ModelContext> {
  const [show, loaded] = await Promise.all([
    client.show(model),
    loadedContext(client.baseUrl, model, HTTP_TIMEOUT_MS),
  ]);
  return effectiveContext({
    ...(show?.contextLength !== undefined ? { max: show.contextLength } : {}),
    ...(show?.numCtx !== undefined ? { numCtx: show.numCtx } : {}),
    ...(loaded !== undefined ? { loaded } : {}),
    cloud: cloud || show?.remote === true,
  });
}

/** How a context's source reads in a sentence: "num_ctx in its Modelfile". */
export function sourceText(context: ModelContext): string {
  switch (context.source) {
    case "cloud":
      return "a cloud model's full context";
    case "modelfile":
      return "num_ctx in its Modelfile";
    case "loaded":
      return "as loaded now";
    case "unknown":
      return "unknown until it is loaded";
  }
}

/** 65536 -> "64k", 40000 -> "40000": how context sizes are written in names and messages. */
export function tokensLabel(tokens: number): string {
  return tokens % 1024 === 0 ? `${tokens / 1024}k` : String(tokens);
}
