/** `doctor` checks of the Ollama endpoint: reachable, models, default model, context, retired. */
import { OllamaClient, type OllamaModel } from "../backends/ollama.ts";
import { errorMessage } from "../errors.ts";
import { isCloud, ModelCatalog } from "../models/catalog.ts";
import { sameModel } from "../models/names.ts";
import { RetiredModels } from "../models/retired.ts";
import { OLLAMA_SMALLEST_DEFAULT_CONTEXT } from "../models/prompt_sizes.ts";
import type { Settings } from "../settings/types.ts";
import {
  type Check,
  fetchJson,
  HTTP_TIMEOUT_MS,
  isObject,
  NEEDED_CONTEXT,
  RAISE_CONTEXT_HINT,
  withoutAdvice,
} from "./doctor_check.ts";
import type { EngineNeed } from "./engine_prompt.ts";
import { effectiveContext, loadedContexts, sourceText, tokensLabel } from "./model_context.ts";
import { derivedName } from "./models_derive.ts";

const START_OLLAMA_HINT = `Start Ollama with "ollama serve" (or the Ollama app); if it listens ` +
  `elsewhere, run ollama-delegate config --base-url <url> or set OLLAMA_MCP_BASE_URL`;

const CLOUD_CONTEXT_HINT = `A cloud model always runs with its full context, which cannot be ` +
  `raised: pick one with at least ${NEEDED_CONTEXT} tokens (ollama-delegate config ` +
  `--default-model <model>)`;

const PICK_LONGER_HINT = `Pick a model with a longer context: ollama-delegate config ` +
  `--default-model <model> (ollama-delegate models list shows each model's maximum)`;

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
      summary: withoutAdvice(errorMessage(e)),
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
    { allowedModels: s.allowedModels, defaultModel: s.defaultModel },
    retired,
    0,
  );
  let model: string | undefined;
  try {
    model = await catalog.resolve(undefined);
    const how = s.defaultModel ? "set in defaultModel" : "picked automatically";
    out.push({
      id: "model.default",
      title: "Default model",
      status: "pass",
      summary: `"${model}" (${how}) is available, allowed and supports tools`,
      details: { model, fromSettings: s.defaultModel !== "" },
    });
  } catch (e) {
    out.push({
      id: "model.default",
      title: "Default model",
      status: "fail",
      summary: withoutAdvice(errorMessage(e)).replace(/^Cannot (start job|pick a model): /, ""),
      hint: `Pull the model (ollama pull <model>) or choose another: ollama-delegate config ` +
        `--default-model <model>` + (s.allowedModels.length > 0 ? ` (and --allow)` : ""),
      details: { model: s.defaultModel || null },
    });
  }
  if (model) out.push(await contextCheck(s, need, model, models));
  out.push(retiredCheck(rows, s, retired));
  return out;
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
  const width = Math.max(8, ...rows.map((r) => r.name.length));
  const lines = rows.map((r) => {
    const notes = [
      r.cloud ? "cloud" : "local",
      r.tools === undefined ? "tools unknown" : r.tools ? "tools" : "NO tools",
      ...(r.contextLength ? [`context ${r.contextLength}`] : []),
      ...(r.retired ? ["RETIRED"] : []),
    ];
    return `${r.name.padEnd(width)}  ${notes.join(", ")}`;
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

/**
 * The context the default model gets, against the default engine's prompt (below it, Ollama
 * cuts every request) and the 64k coding agents need. Ollama gives a local model `num_ctx`
 * from its Modelfile, else the server's OLLAMA_CONTEXT_LENGTH, else a default by VRAM
 * (4k-32k), which the API does not report until the model is loaded. The native engine asks
 * for a context with every request on Ollama, so for it only the model's maximum and the
 * maxContext setting count.
 */
async function contextCheck(
  s: Settings,
  need: EngineNeed,
  model: string,
  models: OllamaModel[],
): Promise<Check> {
  const base = { id: "model.context", title: "Context length" };
  const show = await fetchJson(`${s.baseUrl}/api/show`, {
    method: "POST",
    body: JSON.stringify({ model }),
  });
  if (!show.ok || !isObject(show.body)) {
    return {
      ...base,
      status: "warn",
      summary: `cannot read the context length of "${model}": ${show.ok ? "no answer" : show.why}`,
      hint: RAISE_CONTEXT_HINT,
    };
  }
  const maxContext = modelContextLength(show.body.model_info);
  const parameters = typeof show.body.parameters === "string" ? show.body.parameters : "";
  const numCtx = Number(/^\s*num_ctx\s+(\d+)/m.exec(parameters)?.[1] ?? NaN) || undefined;
  const loaded = (await loadedContexts(s.baseUrl)).find((m) => sameModel(m.name, model))
    ?.contextLength;
  const listed = models.find((m) => sameModel(m.name, model));
  const cloud = listed ? isCloud(listed) : /[:-]cloud$/.test(model);
  const context = effectiveContext({
    ...(maxContext !== undefined ? { max: maxContext } : {}),
    ...(numCtx !== undefined ? { numCtx } : {}),
    ...(loaded !== undefined ? { loaded } : {}),
    cloud,
  });
  const { engine, promptTokens: prompt, requiredContext: required } = need;
  const details = {
    model,
    cloud,
    needed: NEEDED_CONTEXT,
    engine,
    enginePromptTokens: prompt,
    engineRequiredContext: required,
    contextSource: context.source,
    ...(maxContext !== undefined ? { modelContextLength: maxContext } : {}),
    ...(numCtx !== undefined ? { numCtx } : {}),
    ...(loaded !== undefined ? { loadedContextLength: loaded } : {}),
    ...(context.effective !== undefined ? { effectiveContextLength: context.effective } : {}),
  };
  // What to make: 64k, or the model's whole context when that is less.
  const target = Math.min(NEEDED_CONTEXT, maxContext ?? NEEDED_CONTEXT);
  const derived = derivedName(model, target);
  const deriveHint = `Derive a copy that Ollama runs with ${tokensLabel(target)}: ` +
    `ollama-delegate models derive ${model} --ctx ${tokensLabel(target)}, then ` +
    `ollama-delegate config --default-model ${derived}` +
    (s.allowedModels.length > 0 ? ` (and add it to --allow)` : "") +
    (engine === "claude" ? `; or use engine "native", which sets the context per request` : "");
  const localHint = `${deriveHint}. Or, for every model: ${RAISE_CONTEXT_HINT}`;
  const warn = (summary: string, hint = cloud ? CLOUD_CONTEXT_HINT : localHint): Check => ({
    ...base,
    status: "warn",
    summary,
    hint,
    details,
  });
  const engineText = `the ${engine} engine's prompt (about ${prompt} tokens per request)`;
  const claudeText = `the ${required} tokens the claude engine needs (its prompt is about ` +
    `${prompt} tokens per request, plus room to answer)`;
  if (maxContext !== undefined && maxContext < required) {
    return warn(
      `"${model}" supports a context of ${maxContext} tokens, less than ` +
        (engine === "claude" ? claudeText : engineText),
      PICK_LONGER_HINT,
    );
  }
  if (!cloud && engine === "claude" && context.effective !== undefined) {
    if (context.effective < required) {
      return warn(
        `"${model}" runs with a context of ${context.effective} tokens ` +
          `(${sourceText(context)}), less than ${claudeText}: the claude engine refuses it ` +
          `while it is loaded so, since Ollama would cut Claude Code's own instructions`,
      );
    }
  }
  if (maxContext !== undefined && maxContext < NEEDED_CONTEXT) {
    const room = !cloud && engine === "claude" &&
      (context.effective === undefined || context.effective < maxContext);
    return warn(
      `"${model}" supports a context of ${maxContext} tokens; coding agents need ` +
        `${NEEDED_CONTEXT}`,
      cloud ? CLOUD_CONTEXT_HINT : room ? localHint : PICK_LONGER_HINT,
    );
  }
  if (!cloud && engine === "native") {
    // The native engine picks num_ctx per request, up to the model's maximum and maxContext.
    const cap = s.maxContext > 0 ? Math.min(s.maxContext, maxContext ?? s.maxContext) : maxContext;
    if (cap !== undefined && cap < NEEDED_CONTEXT) {
      return warn(
        `the native engine may ask Ollama for at most ${cap} tokens for "${model}" ` +
          `(maxContext ${s.maxContext}); coding agents need ${NEEDED_CONTEXT}`,
        `Raise it if your GPU has room: ollama-delegate config --max-context 64k`,
      );
    }
    return {
      ...base,
      status: "pass",
      summary: `"${model}" supports ${maxContext ?? "an unknown number of"} tokens; the ` +
        `native engine asks Ollama for the context each request needs`,
      details,
    };
  }
  if (context.effective === undefined) {
    return warn(
      `"${model}" supports ${maxContext ?? "an unknown number of"} tokens, but Ollama runs it ` +
        `with its server default (4k-32k by VRAM) unless OLLAMA_CONTEXT_LENGTH or num_ctx ` +
        `raises it, and that default is not visible until the model is loaded; at ` +
        `${OLLAMA_SMALLEST_DEFAULT_CONTEXT} tokens ${engineText} would be cut`,
    );
  }
  if (context.effective < NEEDED_CONTEXT) {
    return warn(
      `"${model}" runs with a context of ${context.effective} tokens ` +
        `(${sourceText(context)}); coding agents need ${NEEDED_CONTEXT}`,
    );
  }
  return {
    ...base,
    status: "pass",
    summary: `"${model}" runs with a context of ${context.effective} tokens (at least ` +
      `${NEEDED_CONTEXT})`,
    details,
  };
}

/** `<arch>.context_length` from /api/show model_info, for the model's own architecture. */
function modelContextLength(info: unknown): number | undefined {
  if (!isObject(info)) return undefined;
  const arch = info["general.architecture"];
  const own = typeof arch === "string" ? info[`${arch}.context_length`] : undefined;
  if (typeof own === "number") return own;
  for (const [key, value] of Object.entries(info)) {
    if (key.endsWith(".context_length") && typeof value === "number") return value;
  }
  return undefined;
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
