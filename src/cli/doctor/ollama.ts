/**
 * `doctor` checks of the Ollama endpoint: reachable, models, default model, context, retired.
 * The context check is in ollama_context.ts.
 */
import { OllamaClient, type OllamaModel } from "../../backends/ollama/api.ts";
import { errorMessage, failureFacts, isDelegateError } from "../../errors.ts";
import { isCloud, ModelCatalog } from "../../models/catalog.ts";
import { sameModel } from "../../settings/model_names.ts";
import { RetiredModels } from "../../models/retired.ts";
import type { Settings } from "../../settings/types.ts";
import { escapeLine } from "../../platform/plain_text.ts";
import { notLocalText, residencyProblem } from "../../jobs/residency.ts";
import { DEFAULT_BACKEND } from "../../settings/backends.ts";
import { placeReason, workPlace } from "../../settings/residency.ts";
import { type Check, HTTP_TIMEOUT_MS } from "./check.ts";
import { contextCheck } from "./ollama_context.ts";
import type { EngineNeed } from "./engine_needs.ts";

const START_OLLAMA_HINT = `Start Ollama with "ollama serve" (or the Ollama app); if it listens ` +
  `elsewhere, run ollama-delegate config --base-url <url> or set OLLAMA_MCP_BASE_URL`;

/** Models whose capabilities /api/tags left out are asked about one by one, up to this many. */
const MAX_SHOW_CALLS = 20;

interface ModelRow {
  name: string;
  cloud: boolean;
  tools?: boolean;
  contextLength?: number;
  retired?: string;
}

/** Every Ollama check, in report order; the model checks only when Ollama answers. */
export async function ollamaChecks(s: Settings, need: EngineNeed): Promise<Check[]> {
  const client = new OllamaClient(s.baseUrl, HTTP_TIMEOUT_MS);
  let version: string;
  let models: OllamaModel[];
  try {
    version = await client.version();
    models = await client.tags();
  } catch (e) {
    return [{
      id: "ollama",
      title: "Ollama",
      status: "fail",
      summary: failureFacts(e),
      hint: START_OLLAMA_HINT,
      details: { url: s.baseUrl },
      lines: ["model checks skipped until Ollama answers"],
    }];
  }
  const retired = new RetiredModels(s.stateDir);
  const rows = await modelRows(client, models, retired);
  const out: Check[] = [{
    id: "ollama",
    title: "Ollama",
    status: "pass",
    summary: `Ollama ${version} at ${s.baseUrl}`,
    details: { url: s.baseUrl, version },
  }];
  out.push(modelsCheck(rows));
  const catalog = new ModelCatalog(
    client,
    { allowedModels: s.allowedModels, defaultModel: s.defaultModel, residency: s.residency },
    retired,
    0,
  );
  let model: string | undefined;
  try {
    model = await catalog.resolve(undefined);
    out.push(await defaultModelCheck(s, catalog, model));
  } catch (e) {
    out.push({
      id: "model.default",
      title: "Default model",
      status: "fail",
      // The facts alone: the check's title says what could not be done, its hint what to do.
      summary: (isDelegateError(e) ? e.failureParts?.facts : undefined) ?? errorMessage(e),
      hint: `Pull the model (ollama pull <model>) or choose another: ollama-delegate config ` +
        `--default-model <model>` + (s.allowedModels.length > 0 ? ` (and --allow)` : ""),
      details: { model: s.defaultModel || null },
    });
  }
  if (model) out.push(await contextCheck(s, need, model, models));
  out.push(retiredCheck(rows, s, retired));
  return out;
}

/**
 * The default model found: where it runs (a cloud one is named so, with how to keep work local,
 * issue 29), and a fail when `residency: local` refuses it.
 */
async function defaultModelCheck(
  s: Settings,
  catalog: ModelCatalog,
  model: string,
): Promise<Check> {
  const how = s.defaultModel ? "set in defaultModel" : "picked automatically";
  const urls = s.baseUrls.length > 0 ? s.baseUrls.map((e) => e.url) : [s.baseUrl];
  const cloud = await catalog.runsOnCloud(model);
  const where = workPlace([{ name: model, cloud }], urls);
  const base = {
    id: "model.default",
    title: "Default model",
    details: { model, fromSettings: s.defaultModel !== "", place: where.place },
  };
  const problem = residencyProblem(s.residency, "default", { name: model, cloud }, {
    name: DEFAULT_BACKEND,
    endpoints: urls.map((url) => ({ url })),
  });
  if (problem) {
    return {
      ...base,
      status: "fail",
      summary: `"${model}" (${how}) is refused: ${notLocalText(problem)}`,
      hint: s.defaultModel
        ? "Set a local default model (ollama-delegate config --default-model <a local model>), " +
          "or let work leave this machine (--residency any)"
        : "Pull a local model (ollama pull <model>) or let work leave this machine " +
          "(ollama-delegate config --residency any)",
    };
  }
  const summary = `"${model}" (${how}) is available, allowed and supports tools`;
  if (where.place === "local") {
    return { ...base, status: "pass", summary: `${summary}; it runs locally` };
  }
  return {
    ...base,
    status: "pass",
    summary: where.place === "cloud"
      ? `${summary}; it is a cloud model (${placeReason(where)})`
      : `${summary}; it runs remotely (${placeReason(where)})`,
    lines: [
      `to keep work local: ollama-delegate config --residency local${
        s.defaultModel ? " --default-model <a local model>" : ""
      } (a local model is then picked, and cloud models and remote backends are refused)`,
    ],
  };
}

async function modelRows(
  client: OllamaClient,
  models: OllamaModel[],
  retired: RetiredModels,
): Promise<ModelRow[]> {
  let shown = 0;
  return await Promise.all(models.map(async (m): Promise<ModelRow> => {
    let capabilities = m.capabilities;
    let contextLength = m.contextLength;
    if (!capabilities && shown++ < MAX_SHOW_CALLS) {
      const info = await client.show(m.name).catch(() => undefined);
      capabilities = info?.capabilities;
      contextLength ??= info?.contextLength;
    }
    const mark = retired.get(m.name);
    return {
      name: m.name,
      cloud: isCloud(m),
      ...(capabilities ? { tools: capabilities.includes("tools") } : {}),
      ...(contextLength ? { contextLength } : {}),
      ...(mark ? { retired: mark.text } : {}),
    };
  }));
}

function modelsCheck(rows: ModelRow[]): Check {
  const withTools = rows.filter((r) => r.tools === true);
  // Escaped before the column is sized: a name's escapes are what the terminal shows.
  const shown = (r: ModelRow) => escapeLine(r.name);
  const width = Math.max(8, ...rows.map((r) => shown(r).length));
  const lines = rows.map((r) => {
    const notes = [
      r.cloud ? "cloud" : "local",
      r.tools === undefined ? "tools unknown" : r.tools ? "tools" : "NO tools",
      ...(r.contextLength ? [`context ${r.contextLength}`] : []),
      ...(r.retired ? ["RETIRED"] : []),
    ];
    return `${shown(r).padEnd(width)}  ${notes.join(", ")}`;
  });
  const base = { id: "models", title: "Models", details: { models: rows }, lines };
  if (rows.length === 0) {
    return {
      ...base,
      status: "warn",
      summary: "Ollama lists no models",
      hint: `Pull one with tool support, e.g. ollama pull qwen3.5:397b-cloud`,
    };
  }
  if (withTools.length === 0) {
    return {
      ...base,
      status: "warn",
      summary: `${rows.length} model(s), none with the tools capability coding agents need`,
      hint: "Pull a model with tool support (ollama.com/search?c=tools)",
    };
  }
  return {
    ...base,
    status: "pass",
    summary: `${rows.length} model(s), ${withTools.length} with tools: ${
      withTools.map((r) => r.name).join(", ")
    }`,
  };
}

/** Cloud models that answered "was retired" (HTTP 410) and that settings still name. */
function retiredCheck(rows: ModelRow[], s: Settings, retired: RetiredModels): Check {
  const names = new Map<string, string>();
  for (const r of rows) if (r.retired) names.set(r.name, r.retired);
  for (const name of [...s.allowedModels, ...(s.defaultModel ? [s.defaultModel] : [])]) {
    const mark = retired.get(name);
    if (mark && ![...names.keys()].some((n) => sameModel(n, name))) names.set(name, mark.text);
  }
  const base = { id: "models.retired", title: "Retired models" };
  if (names.size === 0) {
    return { ...base, status: "pass", summary: "no listed or configured model is retired" };
  }
  const list = [...names.keys()];
  return {
    ...base,
    status: "warn",
    summary: `retired by Ollama: ${list.join(", ")}`,
    hint: `Remove them from your settings (ollama-delegate config --allow ..., --default-model ` +
      `...) and from Ollama (ollama rm <model>); pick a current model from ollama.com/search`,
    details: { retired: Object.fromEntries(names) },
    lines: list.map((n) => `${n}: ${names.get(n)}`),
  };
}
