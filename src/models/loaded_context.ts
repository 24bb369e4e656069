/**
 * The context Ollama has a model loaded with, as `/api/ps` shows it. While the model stays
 * loaded, every request that does not set `options.num_ctx` runs with that context, whatever
 * the model could take: the claude engine refuses a turn it cannot hold, the native engine
 * sizes its history to it, and the doctor and `models` print it.
 */
import type { LoadedModel } from "../backends/backend_client.ts";
import { OllamaClient } from "../backends/ollama/api.ts";
import { sameModel } from "../settings/model_names.ts";

/**
 * The models `/api/ps` at `baseUrl` lists, with their contexts; empty when it cannot say (an
 * older Ollama, another server, no answer within `timeoutMs`): not knowing is not an error.
 */
export async function loadedModels(baseUrl: string, timeoutMs: number): Promise<LoadedModel[]> {
  return await new OllamaClient(baseUrl, timeoutMs).ps().catch(() => []);
}

/** The context `loaded` shows `model` with, under either form of its name (`x`, `x:latest`). */
export function loadedContextIn(
  loaded: readonly LoadedModel[],
  model: string,
): number | undefined {
  return loaded.find((m) => sameModel(m.name, model))?.contextLength;
}

/**
 * The context `/api/ps` at `baseUrl` shows `model` loaded with; undefined when it is not
 * loaded, or Ollama does not say (see loadedModels).
 */
export async function loadedContext(
  baseUrl: string,
  model: string,
  timeoutMs: number,
): Promise<number | undefined> {
  return loadedContextIn(await loadedModels(baseUrl, timeoutMs), model);
}
