/**
 * `ollama-delegate models list`: each installed model's context, as Ollama will run it, at
 * every endpoint of the default Ollama (a pool, baseUrls, may hold different models on each).
 * Model names and Ollama's errors are the backend's words: escaped (platform/plain_text.ts)
 * before the table is sized.
 */
import { OllamaClient } from "../../backends/ollama/api.ts";
import { errorMessage } from "../../errors.ts";
import { isCloud } from "../../models/catalog.ts";
import { loadedContextIn, loadedModels } from "../../models/loaded_context.ts";
import { sameModel } from "../../settings/model_names.ts";
import { escapeLine } from "../../platform/plain_text.ts";
import { HTTP_TIMEOUT_MS } from "../doctor/check.ts";
import { effectiveContext, type ModelContext } from "./model_context.ts";
import { ModelsFailure } from "./derive.ts";

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

/** One endpoint's models, or why they could not be listed. */
export interface EndpointModels {
  url: string;
  models?: ListedModel[];
  /** Why they could not be listed: what went wrong, without "Cannot list models". */
  error?: string;
}

/** Every endpoint's models; an endpoint that fails is reported and holds back no other. */
export async function listEndpoints(urls: readonly string[]): Promise<EndpointModels[]> {
  return await Promise.all(urls.map(async (url) => {
    try {
      return { url, models: await listModels(url) };
    } catch (e) {
      if (!(e instanceof ModelsFailure)) throw e;
      return { url, error: e.failureParts?.facts ?? e.message };
    }
  }));
}

/** The models at one Ollama. Throws ModelsFailure when it cannot be asked. */
export async function listModels(url: string): Promise<ListedModel[]> {
  const client = new OllamaClient(url, 15_000);
  let tags;
  try {
    await client.version();
    tags = await client.tags();
  } catch (e) {
    throw new ModelsFailure({ action: "Cannot list models", facts: errorMessage(e) }, { cause: e });
  }
  const loaded = await loadedModels(url, HTTP_TIMEOUT_MS);
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
  return [...table(baseUrl, models), "", ...CONTEXT_NOTE];
}

/**
 * Every endpoint of a pool, each with its table, then the models some endpoints lack: a turn
 * the pool places on one of those fails there (`backend_refused`).
 */
export function renderPoolList(endpoints: EndpointModels[]): string[] {
  const out: string[] = [];
  for (const e of endpoints) {
    if (out.length > 0) out.push("");
    if (e.error !== undefined) {
      out.push(`Cannot list the models at ${e.url}: ${escapeLine(e.error)}`);
    } else if (e.models!.length === 0) out.push(`Ollama at ${e.url} lists no models.`);
    else out.push(...table(e.url, e.models!));
  }
  const missing = missingSomewhere(
    endpoints.map((e) => ({ url: e.url, names: e.models?.map((m) => m.name) })),
  );
  if (missing.length > 0) {
    out.push(
      "",
      "Not on every endpoint (a turn placed where a model is missing fails there; pull it there,",
      "or run models derive again, which makes a derived model on every endpoint):",
    );
    const width = Math.max(...missing.map((m) => escapeLine(m.name).length));
    for (const m of missing) {
      out.push(`  ${escapeLine(m.name).padEnd(width)}  missing at ${m.at.join(", ")}`);
    }
  }
  out.push("", ...CONTEXT_NOTE);
  return out;
}

/**
 * The models some answering endpoints have and others lack, with where they are missing.
 * `names` is undefined for an endpoint that did not answer: it counts nowhere.
 */
export function missingSomewhere(
  endpoints: readonly { url: string; names?: readonly string[] }[],
): { name: string; at: string[] }[] {
  const answered = endpoints.filter((e) => e.names !== undefined);
  const all: string[] = [];
  for (const e of answered) {
    for (const name of e.names!) if (!all.some((n) => sameModel(n, name))) all.push(name);
  }
  return all.flatMap((name) => {
    const at = answered.filter((e) => !e.names!.some((n) => sameModel(n, name))).map((e) => e.url);
    return at.length > 0 ? [{ name, at }] : [];
  });
}

const CONTEXT_NOTE = [
  "NUM_CTX is the context Ollama gives a local model (its Modelfile num_ctx); without one it",
  "gets the server's OLLAMA_CONTEXT_LENGTH or a default by VRAM (4k under 24 GiB, more above),",
  "shown under LOADED once loaded. Raise it for one model:",
  "ollama-delegate models derive <model> --ctx 64k",
];

function table(baseUrl: string, models: ListedModel[]): string[] {
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
  return out;
}
