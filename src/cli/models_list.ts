/**
 * `ollama-delegate models list`: each installed model's context, as Ollama will run it. Model
 * names and Ollama's errors are the backend's words: escaped (platform/plain_text.ts) before
 * the table is sized.
 */
import { OllamaClient } from "../backends/ollama.ts";
import { errorMessage } from "../errors.ts";
import { isCloud } from "../models/catalog.ts";
import { loadedContextIn, loadedModels } from "../models/loaded_context.ts";
import { escapeLine } from "../platform/plain_text.ts";
import type { Settings } from "../settings/types.ts";
import { HTTP_TIMEOUT_MS } from "./doctor_check.ts";
import { effectiveContext, type ModelContext } from "./model_context.ts";
import { ModelsFailure } from "./models_derive.ts";

/** /api/show calls run this many at a time: a long list must not flood Ollama. */
const SHOW_PARALLEL = 4;

export interface ListedModel {
  name: string;
  cloud: boolean;
  tools?: boolean;
  context: ModelContext;
  /** /api/show failed for it. */
  error?: string;
}

export async function listModels(settings: Settings): Promise<ListedModel[]> {
  const client = new OllamaClient(settings.baseUrl, 15_000);
  let tags;
  try {
    await client.version();
    tags = await client.tags();
  } catch (e) {
    throw new ModelsFailure(`Cannot list models: ${errorMessage(e)}`, { cause: e });
  }
  const loaded = await loadedModels(settings.baseUrl, HTTP_TIMEOUT_MS);
  const out: ListedModel[] = new Array(tags.length);
  let next = 0;
  const worker = async () => {
    while (next < tags.length) {
      const i = next++;
      const m = tags[i]!;
      const cloud = isCloud(m);
      let show;
      let error: string | undefined;
      try {
        show = await client.show(m.name);
      } catch (e) {
        error = errorMessage(e);
      }
      const running = loadedContextIn(loaded, m.name);
      const max = show?.contextLength ?? m.contextLength;
      const capabilities = show?.capabilities ?? m.capabilities;
      out[i] = {
        name: m.name,
        cloud,
        ...(capabilities ? { tools: capabilities.includes("tools") } : {}),
        context: effectiveContext({
          ...(max !== undefined ? { max } : {}),
          ...(show?.numCtx !== undefined ? { numCtx: show.numCtx } : {}),
          ...(running !== undefined ? { loaded: running } : {}),
          cloud,
        }),
        ...(error ? { error } : {}),
      };
    }
  };
  await Promise.all(Array.from({ length: Math.min(SHOW_PARALLEL, tags.length) }, worker));
  return out;
}

/** A table: name, kind, tools, maximum context, Modelfile num_ctx, loaded context. */
export function renderModelList(baseUrl: string, models: ListedModel[]): string[] {
  if (models.length === 0) {
    return [`Ollama at ${baseUrl} lists no models. Pull one: ollama pull <model>`];
  }
  const dash = (n: number | undefined) => n === undefined ? "-" : String(n);
  const rows = models.map((m) => [
    escapeLine(m.name),
    m.cloud ? "cloud" : "local",
    m.tools === undefined ? "?" : m.tools ? "yes" : "no",
    dash(m.context.max),
    m.cloud ? "n/a" : dash(m.context.numCtx),
    m.context.loaded === undefined ? "no" : `yes, ${m.context.loaded}`,
  ]);
  const head = ["MODEL", "KIND", "TOOLS", "MAX CONTEXT", "NUM_CTX", "LOADED"];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    ("  " + cells.map((c, i) => c.padEnd(widths[i]!)).join("  ")).trimEnd();
  const out = [`Models at ${baseUrl}:`, "", line(head), ...rows.map(line)];
  for (const m of models) if (m.error) out.push(`  ${escapeLine(m.name)}: ${escapeLine(m.error)}`);
  out.push(
    "",
    "NUM_CTX is the context Ollama gives a local model (its Modelfile num_ctx); without one it",
    "gets the server's OLLAMA_CONTEXT_LENGTH or a default by VRAM (4k-32k), shown under LOADED",
    "once loaded. Raise it for one model: ollama-delegate models derive <model> --ctx 64k",
  );
  return out;
}
