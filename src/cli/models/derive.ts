/**
 * `ollama-delegate models derive`: a copy of a local model that Ollama runs with a larger
 * context. Ollama gives a model without a Modelfile `num_ctx` its server default (4k under
 * 24 GiB of VRAM, more above) and silently drops what does not fit, and its Anthropic- and
 * OpenAI-compatible endpoints cannot ask for more per request; a derived model carries
 * `num_ctx` itself (`POST /api/create` with `from` and `parameters`), so every client gets
 * that context. With a pool of Ollamas (baseUrls) it is made on each of them.
 */
import { OllamaClient, type OllamaModel } from "../../backends/ollama/api.ts";
import { DelegateError, errorMessage } from "../../errors.ts";
import { isCloud } from "../../models/catalog.ts";
import { canonicalModelName, hasCloudSuffix, sameModel } from "../../settings/model_names.ts";
import { defaultOllamaUrls } from "../../settings/backends.ts";
import type { Settings } from "../../settings/types.ts";
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

/** What `models derive` did: the lines for stdout, and the endpoints where it failed. */
export interface DeriveReport {
  lines: string[];
  /** Each endpoint that refused or failed, with why; empty when the model is everywhere. */
  failed: { url: string; error: string }[];
}

/** The derived model as one endpoint holds it now. */
interface Derived {
  name: string;
  base: string;
  replaced: boolean;
  /** The num_ctx /api/show reports for it, when it does. */
  numCtx?: number;
}

/**
 * Creates the derived model on every endpoint of the default Ollama: a pool (baseUrls) places
 * a turn on any of them, and one without the model fails the turn there. A single endpoint
 * throws ModelsFailure with the reason; a pool reports each endpoint and goes on past one
 * that fails.
 */
export async function deriveModel(
  settings: Settings,
  request: DeriveRequest,
): Promise<DeriveReport> {
  const urls = defaultOllamaUrls(settings);
  if (urls.length === 1) {
    const made = await deriveAt(urls[0]!, request);
    return {
      lines: [
        `${made.replaced ? "Replaced" : "Created"} "${made.name}" from "${made.base}": Ollama ` +
        `runs it with a context of ${request.ctx} tokens (num_ctx ${
          made.numCtx ?? "not shown by /api/show: check with ollama show " + made.name
        }).`,
        ...afterwards(settings, made.name),
      ],
      failed: [],
    };
  }
  // Each endpoint is its own Ollama with its own disk: one that fails holds back no other.
  const each = await Promise.all(urls.map(async (url) => {
    try {
      return { url, made: await deriveAt(url, request) };
    } catch (e) {
      if (!(e instanceof ModelsFailure)) throw e;
      return { url, error: e.message };
    }
  }));
  const made = each.flatMap((e) => e.made ? [e.made] : []);
  const failed = each.flatMap((e) => e.error !== undefined ? [{ url: e.url, error: e.error }] : []);
  const name = made[0]?.name ?? request.name ?? request.model;
  const width = Math.max(...urls.map((u) => u.length));
  const rows = each.map(({ url, made, error }) =>
    `  ${url.padEnd(width)}  ${
      made
        ? `${made.replaced ? "replaced" : "created"} (num_ctx ${made.numCtx ?? "not shown"})`
        : `failed: ${error}`
    }`
  );
  const pool = `the ${urls.length} endpoints of the default Ollama (baseUrls)`;
  const head = made.length === 0
    ? `Could not derive "${name}" on any of ${pool}:`
    : `Created "${name}" from "${made[0]!.base}" on ${
      failed.length === 0 ? "each" : made.length
    } of ${pool}; Ollama runs it with a context of ${request.ctx} tokens there.`;
  return {
    lines: [
      head,
      ...rows,
      ...(failed.length === 0 ? afterwards(settings, name) : made.length === 0 ? [] : [
        `A turn placed on an endpoint without "${name}" fails there. Fix what failed, then run ` +
        `this again: it replaces the model where it was made.`,
      ]),
    ],
    failed,
  };
}

/** What follows a derived model that every endpoint holds: memory, and how to use it. */
function afterwards(settings: Settings, name: string): string[] {
  return [
    `A larger context takes more memory when the model loads; if it no longer fits your GPU,` +
    ` derive a smaller one.`,
    "",
    "Use it for delegation:",
    ...useLines(settings, name),
    "Then restart your Claude Code session so the server re-reads its settings.",
  ];
}

/** Creates the derived model at one Ollama. Throws ModelsFailure with the reason. */
async function deriveAt(url: string, request: DeriveRequest): Promise<Derived> {
  const client = new OllamaClient(url, SHOW_TIMEOUT_MS);
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
      `Cannot derive from "${request.model}": Ollama at ${url} has no such model` +
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
  return {
    name,
    base,
    replaced: existing !== undefined,
    ...(made?.numCtx !== undefined ? { numCtx: made.numCtx } : {}),
  };
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
