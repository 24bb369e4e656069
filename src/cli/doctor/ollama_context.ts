/**
 * The `doctor` check of the default model's context on Ollama: the context the model gets
 * (its maximum, num_ctx, the loaded context, the server default) against the default engine's
 * prompt and the 64k coding agents need, with how to derive a model or raise the context.
 */
import { isObject } from "../../platform/json_object.ts";
import { type OllamaModel, parseShow } from "../../backends/ollama/api.ts";
import { isCloud } from "../../models/catalog.ts";
import { loadedContext } from "../../models/loaded_context.ts";
import { hasCloudSuffix, sameModel } from "../../settings/model_names.ts";
import { OLLAMA_SMALLEST_DEFAULT_CONTEXT } from "../../models/prompt_sizes.ts";
import type { Settings } from "../../settings/types.ts";
import {
  type Check,
  fetchJson,
  HTTP_TIMEOUT_MS,
  NEEDED_CONTEXT,
  RAISE_CONTEXT_HINT,
} from "./check.ts";
import type { EngineNeed } from "./engine_needs.ts";
import { effectiveContext, sourceText, tokensLabel } from "../models/model_context.ts";
import { derivedName } from "../models/derive.ts";

const CLOUD_CONTEXT_HINT = `A cloud model always runs with its full context, which cannot be ` +
  `raised: pick one with at least ${NEEDED_CONTEXT} tokens (ollama-delegate config ` +
  `--default-model <model>)`;

const PICK_LONGER_HINT = `Pick a model with a longer context: ollama-delegate config ` +
  `--default-model <model> (ollama-delegate models list shows each model's maximum)`;

/**
 * The context the default model gets, against the default engine's prompt (below it, Ollama
 * cuts every request) and the 64k coding agents need. Ollama gives a local model `num_ctx`
 * from its Modelfile, else the server's OLLAMA_CONTEXT_LENGTH, else a default by VRAM
 * (4k under 24 GiB, more above), which the API does not report until the model is loaded. The
 * native engine asks for a context with every request on Ollama, so for it only the model's
 * maximum and the maxContext setting count.
 */
export async function contextCheck(
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
  const { contextLength: maxContext, numCtx } = parseShow(show.body);
  const loaded = await loadedContext(s.baseUrl, model, HTTP_TIMEOUT_MS);
  const listed = models.find((m) => sameModel(m.name, model));
  const cloud = listed ? isCloud(listed) : hasCloudSuffix(model);
  const context = effectiveContext({
    ...(maxContext !== undefined ? { max: maxContext } : {}),
    ...(numCtx !== undefined ? { numCtx } : {}),
    ...(loaded !== undefined ? { loaded } : {}),
    cloud,
  });
  const { engine, promptTokens: prompt, requiredContext: required } = need;
  // An engine that asks for the context per request is cut only by the model's maximum and
  // maxContext; one that is not gets what the model is loaded with, and refuses less.
  const asLoaded = !need.contextPerRequest;
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
    (asLoaded && need.perRequestEngines.length > 0
      ? `; or use engine "${need.perRequestEngines[0]}", which sets the context per request`
      : "");
  const localHint = `${deriveHint}. Or, for every model: ${RAISE_CONTEXT_HINT}`;
  const warn = (summary: string, hint = cloud ? CLOUD_CONTEXT_HINT : localHint): Check => ({
    ...base,
    status: "warn",
    summary,
    hint,
    details,
  });
  const engineText = `the ${engine} engine's prompt (about ${prompt} tokens per request)`;
  const asLoadedText = `the ${required} tokens the ${engine} engine needs (its prompt is about ` +
    `${prompt} tokens per request, plus room to answer)`;
  if (maxContext !== undefined && maxContext < required) {
    return warn(
      `"${model}" supports a context of ${maxContext} tokens, less than ` +
        (asLoaded ? asLoadedText : engineText),
      PICK_LONGER_HINT,
    );
  }
  if (!cloud && asLoaded && context.effective !== undefined) {
    if (context.effective < required) {
      return warn(
        `"${model}" runs with a context of ${context.effective} tokens ` +
          `(${sourceText(context)}), less than ${asLoadedText}: the ${engine} engine refuses ` +
          `it while it is loaded so, since Ollama would cut the engine's own instructions`,
      );
    }
  }
  if (maxContext !== undefined && maxContext < NEEDED_CONTEXT) {
    const room = !cloud && asLoaded &&
      (context.effective === undefined || context.effective < maxContext);
    return warn(
      `"${model}" supports a context of ${maxContext} tokens; coding agents need ` +
        `${NEEDED_CONTEXT}`,
      cloud ? CLOUD_CONTEXT_HINT : room ? localHint : PICK_LONGER_HINT,
    );
  }
  if (!cloud && !asLoaded) {
    // It picks num_ctx per request, up to the model's maximum and maxContext.
    const cap = s.maxContext > 0 ? Math.min(s.maxContext, maxContext ?? s.maxContext) : maxContext;
    if (cap !== undefined && cap < NEEDED_CONTEXT) {
      return warn(
        `the ${engine} engine may ask Ollama for at most ${cap} tokens for "${model}" ` +
          `(maxContext ${s.maxContext}); coding agents need ${NEEDED_CONTEXT}`,
        `Raise it if your GPU has room: ollama-delegate config --max-context 64k`,
      );
    }
    return {
      ...base,
      status: "pass",
      summary: `"${model}" supports ${maxContext ?? "an unknown number of"} tokens; the ` +
        `${engine} engine asks Ollama for the context each request needs`,
      details,
    };
  }
  if (context.effective === undefined) {
    return warn(
      `"${model}" supports ${maxContext ?? "an unknown number of"} tokens, but Ollama runs it ` +
        `with its server default (4k under 24 GiB of VRAM, more above) unless ` +
        `OLLAMA_CONTEXT_LENGTH or num_ctx raises it, and that default is not visible until ` +
        `the model is loaded; at ` +
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
