/**
 * What the emulator answers when it stands in for a serving engine other than Ollama, from
 * each one's own documentation and source: where they differ from Ollama is model listing,
 * context, errors, keys and their queue metrics; their `/v1/messages` and
 * `/v1/chat/completions` streams are Ollama's (the emulator's handlers answer them).
 *
 *   vllm      vLLM's OpenAI-compatible server with its Anthropic router (vllm/entrypoints/
 *             anthropic/api_router.py): no `/api/*` (FastAPI's 404 `{"detail":"Not Found"}`);
 *             `GET /health` empty 200; `/v1/models` with `owned_by: "vllm"` and
 *             `max_model_len`, the limit every request is checked against; `--api-key` guards
 *             the `/v1` routes with `Authorization: Bearer` (401 `{"error":"Unauthorized"}`);
 *             Messages errors as `{"type":"error","error":{"type","message"}}` with the
 *             OpenAI-layer's types (`NotFoundError`, `BadRequestError`); tools refused unless
 *             served with `--enable-auto-tool-choice`; `/metrics` in Prometheus text with
 *             `vllm:num_requests_running`, `vllm:num_requests_waiting`,
 *             `vllm:kv_cache_usage_perc` (its "Production Metrics" page).
 *   llamacpp  llama.cpp's llama-server (tools/server/README.md): one model, whatever a request
 *             names; `/v1/models` with `owned_by: "llamacpp"` and only `meta.n_ctx_train`; the
 *             context it runs with in `GET /props` `default_generation_settings.n_ctx`;
 *             `GET /health` `{"status":"ok"}`; `--api-key` read from `Authorization: Bearer`
 *             or `X-Api-Key`; errors `{"error":{"code","message","type"}}`; `/metrics` with
 *             `llamacpp:requests_processing` and `llamacpp:requests_deferred`.
 *   litellm   a LiteLLM proxy: every route behind its key (`Authorization: Bearer` or
 *             `x-api-key`) but `/health/liveliness`; `/v1/models` ids only, no context;
 *             errors `{"error":{"message","type","param","code"}}`.
 */
import { isRecord, jsonResponse } from "./emulator/util.ts";

export type ServerFlavour = "ollama" | "vllm" | "llamacpp" | "litellm";

/** The queue a server reports (settable by a test: the work of other clients). */
export interface QueueGauges {
  waiting: number;
  running: number;
  /** vLLM's KV-cache usage, 0 to 1. */
  kvUsage: number;
}

export interface FlavourContext {
  flavour: ServerFlavour;
  /** The key the server requires; none: open. */
  apiKey?: string;
  /** vLLM started without `--enable-auto-tool-choice`: requests with tools are refused. */
  noToolChoice?: boolean;
  /** Each served model: its name and the context it is served with. */
  models(): Array<{ id: string; contextLength: number; created: number }>;
  queue: QueueGauges;
}

interface Rec {
  method: string;
  path: string;
  headers: Record<string, string>;
  json?: unknown;
  bodyText: string;
}

const TEXT = "text/plain; version=0.0.4; charset=utf-8";

/**
 * The flavour's own answer to `rec`, or undefined to let the Ollama routes answer it (a
 * llama-server first names its one model in the request, whatever the request named).
 */
export function flavourRoute(ctx: FlavourContext, rec: Rec): Response | undefined {
  switch (ctx.flavour) {
    case "vllm":
      return vllm(ctx, rec);
    case "llamacpp":
      return llamacpp(ctx, rec);
    case "litellm":
      return litellm(ctx, rec);
    default:
      return undefined;
  }
}

const bearer = (rec: Rec) => /^Bearer (.+)$/.exec(rec.headers.authorization ?? "")?.[1];

/** A rough token count, as the emulator counts a prompt (characters / 4). */
const tokensOf = (text: string) => Math.ceil(text.length / 4);

function modelOf(rec: Rec): string {
  return isRecord(rec.json) && typeof rec.json.model === "string" ? rec.json.model : "";
}

function hasTools(rec: Rec): boolean {
  return isRecord(rec.json) && Array.isArray(rec.json.tools) && rec.json.tools.length > 0;
}

function vllm(ctx: FlavourContext, rec: Rec): Response | undefined {
  const inference = rec.method === "POST" &&
    (rec.path === "/v1/messages" || rec.path === "/v1/chat/completions");
  if (ctx.apiKey && rec.path.startsWith("/v1") && bearer(rec) !== ctx.apiKey) {
    return jsonResponse(401, { error: "Unauthorized" });
  }
  if (rec.method === "GET" && rec.path === "/health") return new Response(null, { status: 200 });
  if (rec.method === "GET" && rec.path === "/version") {
    return jsonResponse(200, { version: "0.12.0" });
  }
  if (rec.method === "GET" && rec.path === "/metrics") {
    const label = `{model_name="${ctx.models()[0]?.id ?? "model"}",engine="0"}`;
    return new Response(
      [
        "# HELP vllm:num_requests_running Number of requests in model execution batches.",
        "# TYPE vllm:num_requests_running gauge",
        `vllm:num_requests_running${label} ${ctx.queue.running}`,
        "# HELP vllm:num_requests_waiting Number of requests waiting to be processed.",
        "# TYPE vllm:num_requests_waiting gauge",
        `vllm:num_requests_waiting${label} ${ctx.queue.waiting}`,
        "# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.",
        "# TYPE vllm:kv_cache_usage_perc gauge",
        `vllm:kv_cache_usage_perc${label} ${ctx.queue.kvUsage}`,
        "",
      ].join("\n"),
      { headers: { "content-type": TEXT } },
    );
  }
  if (rec.method === "GET" && rec.path === "/v1/models") {
    return jsonResponse(200, {
      object: "list",
      data: ctx.models().map((m) => ({
        id: m.id,
        object: "model",
        created: m.created,
        owned_by: "vllm",
        root: m.id,
        parent: null,
        max_model_len: m.contextLength,
        permission: [],
      })),
    });
  }
  if (inference) {
    const messages = rec.path === "/v1/messages";
    const fail = (status: number, type: string, message: string) =>
      jsonResponse(
        status,
        messages
          ? { type: "error", error: { type, message } }
          : { error: { message, type, param: null, code: status } },
      );
    const name = modelOf(rec);
    const model = ctx.models().find((m) => m.id === name);
    if (!model) return fail(404, "NotFoundError", `The model \`${name}\` does not exist.`);
    if (ctx.noToolChoice && hasTools(rec)) {
      return fail(
        400,
        "BadRequestError",
        '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
      );
    }
    const prompt = tokensOf(rec.bodyText);
    if (prompt > model.contextLength) {
      return fail(
        400,
        "BadRequestError",
        `This model's maximum context length is ${model.contextLength} tokens. However, your ` +
          `request has ${prompt} input tokens. Please reduce the length of the input messages.`,
      );
    }
    return undefined;
  }
  if (rec.path.startsWith("/v1/")) return undefined;
  return jsonResponse(404, { detail: "Not Found" });
}

function llamacpp(ctx: FlavourContext, rec: Rec): Response | undefined {
  const fail = (code: number, type: string, message: string) =>
    jsonResponse(code, { error: { code, message, type } });
  const open = rec.path === "/health" || rec.path === "/v1/health";
  const given = bearer(rec) ?? rec.headers["x-api-key"];
  if (ctx.apiKey && !open && given !== ctx.apiKey) {
    return fail(401, "authentication_error", "Invalid API Key");
  }
  const model = ctx.models()[0];
  if (rec.method === "GET" && open) return jsonResponse(200, { status: "ok" });
  if (rec.method === "GET" && rec.path === "/props") {
    return jsonResponse(200, {
      default_generation_settings: { id: 0, n_ctx: model?.contextLength ?? 4096, params: {} },
      total_slots: 1,
      model_path: `/models/${model?.id ?? "model"}.gguf`,
      build_info: "b7000-emulated",
    });
  }
  if (rec.method === "GET" && rec.path === "/metrics") {
    return new Response(
      [
        "# TYPE llamacpp:requests_processing gauge",
        `llamacpp:requests_processing ${ctx.queue.running}`,
        "# TYPE llamacpp:requests_deferred gauge",
        `llamacpp:requests_deferred ${ctx.queue.waiting}`,
        "",
      ].join("\n"),
      { headers: { "content-type": TEXT } },
    );
  }
  if (rec.method === "GET" && (rec.path === "/v1/models" || rec.path === "/models")) {
    return jsonResponse(200, {
      object: "list",
      data: model
        ? [{
          id: model.id,
          object: "model",
          created: model.created,
          owned_by: "llamacpp",
          // The training context; the served one is in /props.
          meta: { vocab_type: 2, n_vocab: 151936, n_ctx_train: 262144 },
        }]
        : [],
    });
  }
  if (
    rec.method === "POST" && (rec.path === "/v1/messages" || rec.path === "/v1/chat/completions")
  ) {
    if (model && tokensOf(rec.bodyText) > model.contextLength) {
      return fail(
        400,
        "exceed_context_size_error",
        "the request exceeds the available context size, try increasing it",
      );
    }
    // One model, whatever the request names: the Ollama routes then serve it.
    if (model && isRecord(rec.json)) rec.json.model = model.id;
    return undefined;
  }
  if (rec.path.startsWith("/v1/")) return undefined;
  return fail(404, "not_found_error", "File Not Found");
}

function litellm(ctx: FlavourContext, rec: Rec): Response | undefined {
  const fail = (code: number, type: string, message: string) =>
    jsonResponse(code, { error: { message, type, param: "None", code: String(code) } });
  if (rec.method === "GET" && rec.path === "/health/liveliness") {
    return jsonResponse(200, "I'm alive!");
  }
  const given = bearer(rec) ?? rec.headers["x-api-key"];
  if (ctx.apiKey && given !== ctx.apiKey) {
    return fail(
      401,
      "auth_error",
      "Authentication Error, Invalid proxy server token passed. Received API Key = " +
        `${(given ?? "").slice(0, 4)}..., Key Hash (Token) = none. Unable to find token in cache ` +
        "or `LiteLLM_VerificationTokenTable`",
    );
  }
  if (rec.method === "GET" && rec.path === "/v1/models") {
    return jsonResponse(200, {
      data: ctx.models().map((m) => ({
        id: m.id,
        object: "model",
        created: 1677610602,
        owned_by: "openai",
      })),
      object: "list",
    });
  }
  if (
    rec.method === "POST" && (rec.path === "/v1/messages" || rec.path === "/v1/chat/completions")
  ) {
    const name = modelOf(rec);
    if (!ctx.models().some((m) => m.id === name)) {
      return fail(
        400,
        "None",
        `Invalid model name passed in model=${name}. Call \`/v1/models\` to view available ` +
          "models for your key.",
      );
    }
    return undefined;
  }
  if (rec.path.startsWith("/v1/")) return undefined;
  return jsonResponse(404, { detail: "Not Found" });
}
