/**
 * `ollama-delegate models derive`: a copy of a local model that Ollama runs with a larger
 * context. Ollama gives a model without a Modelfile `num_ctx` its server default (4k-32k by
 * VRAM) and silently drops what does not fit, and its Anthropic- and OpenAI-compatible
 * endpoints cannot ask for more per request; a derived model carries `num_ctx` itself
 * (`POST /api/create` with `from` and `parameters`), so every client gets that context.
 */
import { OllamaClient, type OllamaModel } from "../backends/ollama.ts";
import { DelegateError, errorMessage } from "../errors.ts";
import { isCloud } from "../models/catalog.ts";
import { canonicalModelName, hasCloudSuffix, sameModel } from "../models/names.ts";
import type { Settings } from "../settings/types.ts";
import { tokensLabel } from "./model_context.ts";

/** Below this no delegate's prompt fits: a mistyped --ctx 64 rather than a wish. */
export const MIN_DERIVED_CONTEXT = 2_048;

/** Creating from a local model writes one small layer; the rest of the time is Ollama's. */
const CREATE_TIMEOUT_MS = 300_000;
const SHOW_TIMEOUT_MS = 15_000;

/** A refusal or failure of a `models` command: printed as one message, exit code 1. */
export class ModelsFailure extends DelegateError {
  override name = "ModelsFailure";
}

/** Ollama's name rules, loosely: host/namespace/model:tag, letters, digits, `._-`. */
const MODEL_NAME = /^[A-Za-z0-9][\w.-]*(?::\d+)?(\/[\w.-]+)*(:[\w.-]+)?$/;

export function validModelName(name: string): boolean {
  return MODEL_NAME.test(name) && name.length <= 350;
}

/**
 * The name a derived model gets by default: the base's tag with `-ctx64k` appended
 * (`qwen3-coder:30b` -> `qwen3-coder:30b-ctx64k`), a `latest` tag replaced
 * (`llama3` -> `llama3:ctx64k`), and a `-ctxN` suffix from an earlier derive swapped.
 */
export function derivedName(base: string, ctx: number): string {
  const canonical = canonicalModelName(base);
  const colon = canonical.lastIndexOf(":");
  const stem = canonical.slice(0, colon);
  const tag = canonical.slice(colon + 1).replace(/(^|-)ctx\d+k?$/, "");
  const label = `ctx${tokensLabel(ctx)}`;
  return tag === "" || tag === "latest" ? `${stem}:${label}` : `${stem}:${tag}-${label}`;
}

export interface DeriveRequest {
  model: string;
  ctx: number;
  name?: string;
}

/** Creates the derived model; returns what to print. Throws ModelsFailure with the reason. */
export async function deriveModel(settings: Settings, request: DeriveRequest): Promise<string[]> {
  const client = new OllamaClient(settings.baseUrl, SHOW_TIMEOUT_MS);
  let models: OllamaModel[];
  try {
    await client.version();
    models = await client.tags();
  } catch (e) {
    throw new ModelsFailure(`Cannot derive a model: ${errorMessage(e)}`, { cause: e });
  }
  const listed = models.find((m) => sameModel(m.name, request.model));
  if (listed ? isCloud(listed) : hasCloudSuffix(request.model)) {
    throw new ModelsFailure(cloudRefusal(request.model, listed?.contextLength));
  }
  if (!listed) {
    const local = models.filter((m) => !isCloud(m)).map((m) => m.name);
    throw new ModelsFailure(
      `Cannot derive from "${request.model}": Ollama at ${settings.baseUrl} has no such model` +
        (local.length > 0 ? ` (local models: ${local.join(", ")})` : " and lists no local models") +
        `. Pull it first: ollama pull ${request.model}`,
    );
  }
  const base = listed.name;
  const info = await client.show(base).catch((e) => {
    throw new ModelsFailure(`Cannot read "${base}" from Ollama: ${errorMessage(e)}`, { cause: e });
  });
  if (info?.remote) throw new ModelsFailure(cloudRefusal(base, info.contextLength));
  const max = info?.contextLength ?? listed.contextLength;
  if (max !== undefined && request.ctx > max) {
    throw new ModelsFailure(
      `Cannot derive "${base}" with a context of ${request.ctx} tokens: the model supports at ` +
        `most ${max} (${tokensLabel(max)}), and Ollama would cap num_ctx there anyway. Use ` +
        `--ctx ${tokensLabel(max)} or less`,
    );
  }
  const name = request.name ?? derivedName(base, request.ctx);
  if (sameModel(name, base)) {
    throw new ModelsFailure(
      `Cannot derive "${base}" under its own name: that would change the model itself. Drop ` +
        `--name for the default (${derivedName(base, request.ctx)}), or choose another`,
    );
  }
  const existing = models.find((m) => sameModel(m.name, name));
  if (existing) {
    const prior = await client.show(existing.name).catch(() => undefined);
    const fromBase = prior?.parentModel !== undefined &&
      (sameModel(prior.parentModel, base) ||
        (info?.parentModel !== undefined && sameModel(prior.parentModel, info.parentModel)));
    if (!fromBase) {
      throw new ModelsFailure(
        `Cannot create "${name}": a model of that name exists and was not derived from ` +
          `"${base}", so creating it would replace that model. Choose another --name, or ` +
          `remove it first: ollama rm ${name}`,
      );
    }
  }
  try {
    await client.create(name, base, { num_ctx: request.ctx }, CREATE_TIMEOUT_MS);
  } catch (e) {
    throw new ModelsFailure(`Cannot create "${name}" from "${base}": ${errorMessage(e)}`, {
      cause: e,
    });
  }
  const made = await client.show(name).catch(() => undefined);
  const lines = [
    `${existing ? "Replaced" : "Created"} "${name}" from "${base}": Ollama runs it with a ` +
    `context of ${request.ctx} tokens (num_ctx ${
      made?.numCtx ?? "not shown by /api/show: check with ollama show " + name
    }).`,
    `A larger context takes more memory when the model loads; if it no longer fits your GPU,` +
    ` derive a smaller one.`,
    "",
    "Use it for delegation:",
    ...useLines(settings, name),
    "Then restart your Claude Code session so the server re-reads its settings.",
  ];
  return lines;
}

function cloudRefusal(model: string, max: number | undefined): string {
  return `Cannot derive from "${model}": it is a cloud model, which runs on ollama.com with ` +
    `its full context${
      max ? ` (${max} tokens)` : ""
    } whatever num_ctx says, so it needs no derived copy. ` +
    `Use it as it is: ollama-delegate config --default-model ${model}`;
}

/** The config commands that put the new model to use, given the allowlist in force. */
function useLines(settings: Settings, name: string): string[] {
  const allowed = settings.allowedModels;
  const allow = allowed.length === 0
    ? []
    : allowed.some((m) => sameModel(m, name))
    ? []
    : [`  ollama-delegate config --allow ${[...allowed, name].join(",")}`];
  return [
    ...allow,
    `  ollama-delegate config --default-model ${name}`,
    ...(allowed.length === 0
      ? [
        "(allowedModels is empty, so every model is allowed already; to allow only some:" +
        ` ollama-delegate config --allow ${name},...)`,
      ]
      : []),
  ];
}
