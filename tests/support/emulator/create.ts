/**
 * Ollama's `POST /api/create` for the case tests need: deriving a model from another one with
 * new Modelfile parameters, e.g. `{"model": "qwen3-64k", "from": "qwen3:8b", "parameters":
 * {"num_ctx": 65536}}` (docs/api.md "Create a Model"; server/create.go CreateHandler).
 *
 * - The answer streams NDJSON progress by default: `using existing layer sha256:...` for the
 *   base's layers, `creating new layer sha256:...` for the merged parameters, `writing
 *   manifest`, `success`; `"stream": false` gives only `{"status": "success"}`.
 * - The new model keeps the base's capabilities, maximum context and tool-call style, merges
 *   the base's parameters under the new ones, and replaces a model of the same name.
 * - An unknown local base makes Ollama try to pull it; offline that fails: streamed, a
 *   `pulling manifest` status then `{"error": "pull model manifest: file does not exist"}`
 *   (HTTP 200, the stream had started); with `"stream": false`, HTTP 500 with that error.
 * - A cloud base (`...:cloud`) is not refused: Ollama creates a remote stub pointing at
 *   ollama.com, which keeps the parameters (sent along upstream) and the base's context.
 * - Creating from `files` (GGUF blobs) is not emulated: 400.
 */

import {
  buildEntry,
  displayName,
  type EmulatedModel,
  fakeDigest,
  isCloudName,
  type ModelEntry,
} from "./models.ts";
import { goJson } from "./native_chat.ts";
import { isRecord, JSON_TYPE } from "./util.ts";

export interface CreateContext {
  findModel(name: string): ModelEntry | undefined;
  /** Adds the model, replacing one of the same name. */
  addModel(spec: EmulatedModel): ModelEntry;
}

interface CreateRequestRecord {
  bodyText: string;
  json?: unknown;
}

const NDJSON_TYPE = "application/x-ndjson";
// errtypes.InvalidModelNameErrMsg
const INVALID_NAME = "invalid model name";

function goResponse(status: number, body: unknown, type = JSON_TYPE): Response {
  return new Response(goJson(body), { status, headers: { "content-type": type } });
}

function ndjson(lines: unknown[]): Response {
  return new Response(lines.map((l) => goJson(l) + "\n").join(""), {
    status: 200,
    headers: { "content-type": NDJSON_TYPE },
  });
}

/** The progress lines and final status of a create, streamed or not. */
function progress(stream: boolean, statuses: string[]): Response {
  if (!stream) return goResponse(200, { status: "success" });
  return ndjson([...statuses, "success"].map((status) => ({ status })));
}

export function handleCreate(ctx: CreateContext, rec: CreateRequestRecord): Response {
  if (rec.bodyText.trim() === "") return goResponse(400, { error: "missing request body" });
  if (!isRecord(rec.json)) return goResponse(400, { error: "invalid request body" });
  const body = rec.json;
  const stream = body.stream !== false;
  const name = typeof body.model === "string" && body.model
    ? body.model
    : typeof body.name === "string"
    ? body.name
    : "";
  if (!/^[A-Za-z0-9][\w.-]*(\/[\w.-]+)*(:[\w.-]+)?$/.test(name)) {
    return goResponse(400, { error: INVALID_NAME });
  }
  const from = typeof body.from === "string" ? body.from.trim() : "";
  if (!from) {
    if (isRecord(body.files)) {
      return goResponse(400, { error: "the emulator cannot create models from files" });
    }
    return goResponse(400, { error: "neither 'from' or 'files' was specified" });
  }
  if (body.parameters !== undefined && !isRecord(body.parameters)) {
    return goResponse(400, { error: "parameters must be an object" });
  }
  const parameters = isRecord(body.parameters) ? body.parameters : {};
  const base = ctx.findModel(from);
  const paramsLayer = `sha256:${fakeDigest(JSON.stringify([from, parameters]))}`;
  const paramStatus = Object.keys(parameters).length > 0
    ? [`creating new layer ${paramsLayer}`]
    : [];

  if (isCloudName(from) || base?.remote) {
    ctx.addModel({
      name,
      remote: true,
      parent: from,
      capabilities: base?.capabilities,
      contextLength: base?.contextLength,
      toolCallStyle: base?.spec.toolCallStyle,
      parameters,
    });
    return progress(stream, [...paramStatus, "writing manifest"]);
  }
  if (!base) {
    const error = "pull model manifest: file does not exist";
    return stream
      ? ndjson([{ status: "pulling manifest" }, { error }])
      : goResponse(500, { error });
  }
  const merged = { ...base.parameters, ...parameters };
  ctx.addModel({
    name,
    remote: false,
    parent: base.spec.parent ?? displayName(base.spec.name),
    capabilities: base.capabilities,
    contextLength: base.contextLength,
    toolCallStyle: base.spec.toolCallStyle,
    parameters: merged,
  });
  return progress(stream, [
    `using existing layer sha256:${base.digest}`,
    `using existing layer sha256:${fakeDigest(`template:${base.key}`)}`,
    ...(Object.keys(merged).length > 0 ? [`creating new layer ${paramsLayer}`] : []),
    "writing manifest",
  ]);
}

/** Builds the entry for a created model: newest of all, as it was just written. */
export function createdEntry(spec: EmulatedModel): ModelEntry {
  return buildEntry(spec, 0, Date.now());
}
