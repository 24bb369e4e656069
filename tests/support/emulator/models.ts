/**
 * The emulator's model catalogue: how names resolve (Ollama's registry/namespace/tag defaults),
 * what each model reports on `/api/tags`, `/api/show` and `/api/ps`, and the Modelfile
 * parameters (`num_ctx`...) that a model carries, whether set by a test or by `/api/create`.
 */

import { type TextCallStyle } from "./text_calls.ts";

export interface EmulatedModel {
  /** e.g. "qwen3:8b", "glm-5:cloud"; a name without a tag is listed as "<name>:latest". */
  name: string;
  /** Defaults to ["completion", "tools"]. */
  capabilities?: string[];
  /** The model's maximum (trained) context. Defaults to 32768. Reported as `/api/show`
   * model_info["<arch>.context_length"] and `/api/tags` details.context_length; a larger
   * `num_ctx` is capped to it, as Ollama does. */
  contextLength?: number;
  /** The Modelfile's `PARAMETER num_ctx`: the context this model loads with unless a native
   * request sets `options.num_ctx`. Shown in `/api/show` `parameters`. */
  numCtx?: number;
  /** How a scripted tool call reaches the client. "structured" (the default) is a real tool
   * call; any other style writes the call as plain text in that model family's format, as
   * when Ollama's parser misses it (see text_calls.ts). */
  toolCallStyle?: TextCallStyle;
  /** A cloud stub (remote_host/remote_model set, tiny size, empty details). Defaults to true iff
   * the name ends in ":cloud" or "-cloud". */
  remote?: boolean;
  /** When set, inference answers HTTP 410 `{"error": retiredText}`: a retired cloud model, whose
   * upstream error is relayed verbatim rather than in the Anthropic error shape. */
  retiredText?: string;
  /** Further Modelfile parameters (what `/api/create` `parameters` sets). */
  parameters?: Record<string, unknown>;
  /** The model this one was derived from with `/api/create`. */
  parent?: string;
}

export const DEFAULT_CAPABILITIES = ["completion", "tools"];
export const DEFAULT_CONTEXT_LENGTH = 32768;
export const CLOUD_HOST = "https://ollama.com:443";
/** What local models report as Modelfile parameters when a test sets none (qwen3's values). */
const BASE_PARAMETERS: Record<string, unknown> = { temperature: 0.6, top_k: 20, top_p: 0.95 };

interface ParsedName {
  host: string;
  namespace: string;
  model: string;
  tag: string;
}

/** Splits a reference the way Ollama does, filling in its registry/namespace/tag defaults, so
 * that "llama3", "library/llama3" and "llama3:latest" all name the same model. */
export function parseName(raw: string): ParsedName {
  let rest = raw.trim();
  let tag = "latest";
  const colon = rest.lastIndexOf(":");
  if (colon > rest.lastIndexOf("/")) {
    tag = rest.slice(colon + 1) || "latest";
    rest = rest.slice(0, colon);
  }
  const parts = rest.split("/");
  const model = parts.pop() ?? "";
  const namespace = parts.pop() ?? "library";
  const host = parts.pop() ?? "registry.ollama.ai";
  return { host, namespace, model, tag };
}

export function fullName(raw: string): string {
  const p = parseName(raw);
  return `${p.host}/${p.namespace}/${p.model}:${p.tag}`;
}

/** The shortest display form Ollama lists: default registry and namespace dropped, tag kept. */
export function displayName(raw: string): string {
  const p = parseName(raw);
  if (p.host === "registry.ollama.ai") {
    return p.namespace === "library" ? `${p.model}:${p.tag}` : `${p.namespace}/${p.model}:${p.tag}`;
  }
  return `${p.host}/${p.namespace}/${p.model}:${p.tag}`;
}

export function matchKey(raw: string): string {
  return fullName(raw).toLowerCase();
}

export function isCloudName(raw: string): boolean {
  return /[:-]cloud$/i.test(raw.trim());
}

function stripCloudSuffix(raw: string): string {
  return raw.trim().replace(/[:-]cloud$/i, "");
}

export interface ModelEntry {
  spec: EmulatedModel;
  display: string;
  key: string;
  remote: boolean;
  capabilities: string[];
  contextLength: number;
  /** Modelfile parameters, `num_ctx` included when set. */
  parameters: Record<string, unknown>;
  arch: string;
  modifiedAt: Date;
  size: number;
  digest: string;
}

function architectureOf(raw: string): string {
  const arch = parseName(stripCloudSuffix(raw)).model.toLowerCase().replace(/[^a-z0-9]/g, "");
  return arch || "llama";
}

function parameterSizeOf(raw: string): string {
  const m = /(\d+(?:\.\d+)?)([bm])\b/i.exec(parseName(raw).tag);
  return m ? `${m[1]}${(m[2] ?? "b").toUpperCase()}` : "8.2B";
}

/** A stable fake digest, so listings do not change between calls. */
export function fakeDigest(seed: string): string {
  let out = "";
  let h = 0x811c9dc5;
  for (let round = 0; out.length < 64; round++) {
    for (const ch of `${round}:${seed}`) {
      h ^= ch.codePointAt(0) ?? 0;
      h = Math.imul(h, 0x01000193) >>> 0;
    }
    out += h.toString(16).padStart(8, "0");
  }
  return out.slice(0, 64);
}

export function buildEntry(spec: EmulatedModel, i: number, now: number): ModelEntry {
  const remote = spec.remote ?? isCloudName(spec.name);
  const parameters: Record<string, unknown> = remote ? {} : { ...BASE_PARAMETERS };
  Object.assign(parameters, spec.parameters ?? {});
  if (spec.numCtx !== undefined) parameters.num_ctx = spec.numCtx;
  return {
    spec,
    display: displayName(spec.name),
    key: matchKey(spec.name),
    remote,
    capabilities: [...(spec.capabilities ?? DEFAULT_CAPABILITIES)],
    contextLength: spec.contextLength ?? DEFAULT_CONTEXT_LENGTH,
    parameters,
    arch: architectureOf(spec.parent ?? spec.name),
    // Distinct times keep "newest first" orderings deterministic.
    modifiedAt: new Date(now - i * 60_000),
    size: remote ? 340 + (spec.name.length % 40) : 5_225_388_164 + i,
    digest: fakeDigest(spec.name),
  };
}

export function buildEntries(models: readonly EmulatedModel[], now: number): ModelEntry[] {
  return models.map((spec, i) => buildEntry(spec, i, now));
}

/** The Modelfile `num_ctx` of a model, when it has a usable one. */
export function modelfileNumCtx(e: ModelEntry): number | undefined {
  const v = e.parameters.num_ctx;
  return typeof v === "number" && Number.isInteger(v) && v > 0 ? v : undefined;
}

export function detailsOf(e: ModelEntry): Record<string, unknown> {
  if (e.remote) {
    return {
      parent_model: "",
      format: "",
      family: "",
      families: null,
      parameter_size: "",
      quantization_level: "",
      context_length: e.contextLength,
    };
  }
  return {
    parent_model: e.spec.parent ? displayName(e.spec.parent) : "",
    format: "gguf",
    family: e.arch,
    families: [e.arch],
    parameter_size: parameterSizeOf(e.spec.parent ?? e.spec.name),
    quantization_level: "Q4_K_M",
    context_length: e.contextLength,
  };
}

export function remoteFields(e: ModelEntry): Record<string, unknown> {
  return e.remote ? { remote_model: stripCloudSuffix(e.display), remote_host: CLOUD_HOST } : {};
}

export function tagsEntry(e: ModelEntry): Record<string, unknown> {
  return {
    name: e.display,
    model: e.display,
    ...remoteFields(e),
    modified_at: e.modifiedAt.toISOString(),
    size: e.size,
    digest: e.digest,
    details: detailsOf(e),
    capabilities: e.capabilities,
  };
}

/** A value as Go's `%#v` prints a JSON-decoded one: strings quoted, numbers bare. */
function goValue(v: unknown): string {
  return typeof v === "string" ? JSON.stringify(v) : String(v);
}

/** One parameter a line, the name padded to 30 columns, as `ollama show` formats them
 * (server/routes.go GetModelInfo); lists give one line per value. Sorted, for stable output. */
export function parametersText(params: Record<string, unknown>): string {
  const lines: string[] = [];
  for (const key of Object.keys(params).sort()) {
    const v = params[key];
    for (const one of Array.isArray(v) ? v : [v]) lines.push(`${key.padEnd(30)} ${goValue(one)}`);
  }
  return lines.join("\n");
}

export function showBody(e: ModelEntry): Record<string, unknown> {
  const modelInfo: Record<string, unknown> = {
    "general.architecture": e.arch,
    "general.basename": parseName(stripCloudSuffix(e.spec.parent ?? e.display)).model,
    [`${e.arch}.context_length`]: e.contextLength,
    [`${e.arch}.embedding_length`]: 4096,
  };
  if (!e.remote) {
    modelInfo["general.parameter_count"] = 8_190_735_360;
    modelInfo["general.file_type"] = 15;
  }
  const paramLines = Object.keys(e.parameters).sort().flatMap((k) => {
    const v = e.parameters[k];
    return (Array.isArray(v) ? v : [v]).map((one) => `PARAMETER ${k} ${goValue(one)}\n`);
  });
  return {
    license: "",
    modelfile: `# Modelfile generated by "ollama show"\nFROM ${e.display}\n${paramLines.join("")}`,
    parameters: parametersText(e.parameters),
    template: e.remote ? "" : "{{ .Prompt }}",
    details: detailsOf(e),
    model_info: modelInfo,
    capabilities: e.capabilities,
    modified_at: e.modifiedAt.toISOString(),
    ...remoteFields(e),
  };
}
