/**
 * Ollama's native `POST /api/chat` and `POST /api/generate` (docs/api.md; server/routes.go
 * ChatHandler, GenerateHandler, writeChatResponse, streamResponse).
 *
 * - NDJSON (`application/x-ndjson`) by default: one object a line, `done: false`, text spread
 *   over several objects, thinking (`message.thinking`) before content, each tool call whole in
 *   an object of its own; then a final object with `done: true`, `done_reason` ("stop", or
 *   "length" when `options.num_predict` cut the reply) and the metrics (`total_duration`,
 *   `load_duration`, `prompt_eval_count`, `prompt_eval_duration`, `eval_count`,
 *   `eval_duration`, in nanoseconds). `"stream": false` gives one `application/json` object.
 * - Tool calls: `{"function": {"index": i, "name": ..., "arguments": {...}}}` with arguments as
 *   an object; since Ollama 0.12.10 also `"id": "call_xxxxxxxx"` (the emulator follows its
 *   `version` option). Tool results come back as `{"role": "tool", "content", "tool_name"}`.
 * - Strings are escaped as Go's encoder does (`<` as `\u003c`...), so `<tool_call>` written
 *   as text arrives as `\u003ctool_call\u003e` on the wire, as from a real server.
 * - `options.num_ctx` picks the context (a different one reloads the model), `keep_alive`
 *   keeps it loaded (0 unloads after the request); an empty `messages` (or `prompt`) only loads
 *   the model, or unloads it with `keep_alive: 0` (done_reason "load"/"unload").
 * - Errors are `{"error": "..."}`: 400 "model is required", 404 "model 'x' not found", 400
 *   "<full name> does not support tools", 400 "\"x\" does not support thinking", 400 for a
 *   malformed `think` or `keep_alive`; a retired cloud model's 410 is relayed as Go's
 *   StatusError (`{"StatusCode": 410, "Status": "410 Gone", "error": ...}`).
 * The reply is scripted by `chatScript` and the directives of chat_script.ts.
 */

import { type ChatReply, type ChatScript, chatViewOf, defaultChatReply } from "./chat_script.ts";
import { estimateTokens } from "./context.ts";
import { keepAliveMs } from "./loader.ts";
import { asTextCalls, type ChatModelInfo } from "./openai.ts";
import {
  isRecord,
  JSON_TYPE,
  randomAlnum,
  splitText,
  streamedResponse,
  wait,
  waitDelay,
} from "./util.ts";

export interface NativeModelInfo extends ChatModelInfo {
  /** Loads the model without a prompt (an empty request); true when that was a reload. */
  load(numCtx: unknown, keepAlive: unknown): boolean;
  unload(): void;
}

export interface NativeEndpointContext {
  findModel(name: string): NativeModelInfo | undefined;
  script(): ChatScript | undefined;
  /** The emulated Ollama version: tool-call ids appear from 0.12.10 on. */
  version(): string;
  closing: AbortSignal;
}

interface NativeRequestRecord {
  path: string;
  bodyText: string;
  json?: unknown;
  headers: Record<string, string>;
}

const NDJSON_TYPE = "application/x-ndjson";
const THINK_LEVELS = ["high", "medium", "low", "max"];
const MS = 1_000_000;

/** JSON as Go's encoding/json writes it: <, >, &, U+2028 and U+2029 escaped. */
export function goJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

function goResponse(status: number, body: unknown, headers: Record<string, string> = {}) {
  return new Response(goJson(body), {
    status,
    headers: { "content-type": JSON_TYPE, ...headers },
  });
}

const nativeError = (status: number, error: string, retryAfter?: string) =>
  goResponse(status, { error }, retryAfter === undefined ? {} : { "retry-after": retryAfter });

function versionAtLeast(version: string, min: number[]): boolean {
  const parts = version.replace(/^v/, "").split(/[.-]/).map((p) => Number.parseInt(p, 10) || 0);
  for (let i = 0; i < min.length; i++) {
    const a = parts[i] ?? 0, b = min[i] ?? 0;
    if (a !== b) return a > b;
  }
  return true;
}

/** A think value as api.ThinkValue reads it; a string error when Go would refuse it. */
function thinkError(think: unknown): string | undefined {
  if (think === undefined || think === null || typeof think === "boolean") return undefined;
  if (typeof think === "string") {
    return THINK_LEVELS.includes(think)
      ? undefined
      : `invalid think value: ${
        JSON.stringify(think)
      } (must be "high", "medium", "low", "max", true, or false)`;
  }
  return 'think must be a boolean or string ("high", "medium", "low", "max", true, or false)';
}

type Answer = Extract<ChatReply, { kind: "text" | "tool_calls" }>;

/** Returns the handler for both routes; it keeps its own request counters. */
export function createNativeChat(
  ctx: NativeEndpointContext,
): (req: Request, rec: NativeRequestRecord) => Promise<Response> {
  let requestCount = 0;
  const perConversation = new Map<string, number>();

  const render = (
    generate: boolean,
    body: Record<string, unknown>,
    answer: Answer,
    meta: { promptTokens: number; loaded: boolean; thinking: boolean },
  ): Response => {
    const created = () => new Date().toISOString();
    const withIds = versionAtLeast(ctx.version(), [0, 12, 10]);
    const calls = answer.kind === "tool_calls"
      ? answer.calls.map((c, index) => ({
        ...(withIds ? { id: `call_${randomAlnum(8)}` } : {}),
        function: { index, name: c.name, arguments: c.arguments },
      }))
      : [];
    let text = answer.kind === "text" ? answer.text : answer.text ?? "";
    const thinking = meta.thinking ? answer.thinking ?? "Let me work through this." : "";
    const options = isRecord(body.options) ? body.options : {};
    let doneReason = "stop";
    const numPredict = options.num_predict;
    if (typeof numPredict === "number" && numPredict >= 0 && text.length > numPredict * 4) {
      text = text.slice(0, numPredict * 4);
      calls.length = 0;
      doneReason = "length";
    }
    const callChars = calls.length > 0 ? JSON.stringify(calls).length : 0;
    const evalCount = estimateTokens(thinking.length + text.length + callChars);
    const loadNs = meta.loaded ? 1_480 * MS : 12 * MS;
    const promptNs = meta.promptTokens * 200_000, evalNs = evalCount * 20 * MS;
    const metrics = {
      total_duration: loadNs + promptNs + evalNs + 3 * MS,
      load_duration: loadNs,
      prompt_eval_count: answer.usage?.prompt ?? meta.promptTokens,
      prompt_eval_duration: promptNs,
      eval_count: answer.usage?.completion ?? evalCount,
      eval_duration: evalNs,
    };
    const piece = (fields: { content?: string; thinking?: string; tool_calls?: unknown[] }) =>
      generate
        ? { model: body.model, created_at: created(), response: fields.content ?? "", done: false }
        : {
          model: body.model,
          created_at: created(),
          message: { role: "assistant", content: fields.content ?? "", ...fields },
          done: false,
        };
    const final = (fields: Record<string, unknown>) => {
      const { done: _done, ...head } = piece(fields);
      return { ...head, done: true, done_reason: doneReason, ...metrics };
    };

    if (body.stream === false) {
      return goResponse(
        200,
        final({
          content: text,
          ...(thinking ? { thinking } : {}),
          ...(calls.length > 0 ? { tool_calls: calls } : {}),
        }),
      );
    }
    const objects = [
      ...splitText(thinking, 3, answer.chunkChars).map((t) => piece({ thinking: t })),
      ...splitText(text, 4, answer.chunkChars).map((content) => piece({ content })),
      ...calls.map((c) => piece({ tool_calls: [c] })),
    ];
    const chunkDelayMs = answer.chunkDelayMs ?? 0;
    return streamedResponse({ "content-type": NDJSON_TYPE }, async (send, cancelled) => {
      for (const [i, o] of objects.entries()) {
        // Cut off like a server that went away mid-answer: no final object.
        if (i > 0 && !(await wait(chunkDelayMs, [cancelled, ctx.closing]))) return;
        send(goJson(o) + "\n");
      }
      send(goJson(final({})) + "\n");
    });
  };

  const answer = async (
    req: Request,
    reply: ChatReply,
    emit: (a: Answer) => Response,
  ): Promise<Response> => {
    switch (reply.kind) {
      case "hang":
        await wait(Infinity, [req.signal, ctx.closing]);
        return nativeError(503, "ollama emulator closed while the request was hanging");
      case "delay":
        if (!(await waitDelay(reply, [req.signal, ctx.closing]))) {
          return nativeError(503, "ollama emulator closed while the reply was delayed");
        }
        return answer(req, reply.then, emit);
      case "error":
        return nativeError(reply.status, reply.message, reply.retryAfter);
      default:
        return emit(reply);
    }
  };

  return async (req, rec) => {
    const generate = rec.path === "/api/generate";
    requestCount++;
    if (rec.bodyText.trim() === "") return nativeError(400, "missing request body");
    if (!isRecord(rec.json)) return nativeError(400, "invalid request body");
    const body = rec.json;
    const bad = thinkError(body.think);
    if (bad) return nativeError(400, bad);
    let keepAlive: number | undefined;
    try {
      if (body.keep_alive !== undefined) keepAlive = keepAliveMs(body.keep_alive, 0);
    } catch (err) {
      return nativeError(400, (err as Error).message);
    }
    if (typeof body.model !== "string" || body.model.trim() === "") {
      return nativeError(400, "model is required");
    }
    const model = ctx.findModel(body.model);
    if (!model) return nativeError(404, `model '${body.model}' not found`);
    if (model.retiredText !== undefined) {
      // Relayed from ollama.com as Go's api.StatusError, whose first fields carry no JSON tags.
      return goResponse(410, { StatusCode: 410, Status: "410 Gone", error: model.retiredText });
    }
    const messages = generate
      ? [
        ...(typeof body.system === "string" && body.system
          ? [{ role: "system", content: body.system }]
          : []),
        ...(typeof body.prompt === "string" && body.prompt
          ? [{ role: "user", content: body.prompt }]
          : []),
      ]
      : Array.isArray(body.messages)
      ? body.messages
      : [];
    const options = isRecord(body.options) ? body.options : {};
    const empty = generate
      ? typeof body.prompt !== "string" || body.prompt === ""
      : messages.length === 0;
    if (empty && keepAlive === 0) {
      model.unload();
      return goResponse(
        200,
        generate
          ? {
            model: body.model,
            created_at: new Date().toISOString(),
            response: "",
            done: true,
            done_reason: "unload",
          }
          : {
            model: body.model,
            created_at: new Date().toISOString(),
            message: { role: "assistant", content: "" },
            done: true,
            done_reason: "unload",
          },
      );
    }
    const canThink = model.capabilities.includes("thinking");
    if (!canThink && (body.think === true || typeof body.think === "string")) {
      return nativeError(400, `${JSON.stringify(body.model)} does not support thinking`);
    }
    const tools = !generate && Array.isArray(body.tools) ? body.tools : [];
    if (tools.length > 0 && !model.capabilities.includes("tools")) {
      return nativeError(400, `${model.fullName} does not support tools`);
    }
    const thinking = canThink && body.think !== false;
    if (empty) {
      model.load(options.num_ctx, body.keep_alive);
      return goResponse(
        200,
        generate
          ? {
            model: body.model,
            created_at: new Date().toISOString(),
            response: "",
            done: true,
            done_reason: "load",
          }
          : {
            model: body.model,
            created_at: new Date().toISOString(),
            message: { role: "assistant", content: "" },
            done: true,
            done_reason: "load",
          },
      );
    }

    const admitted = model.admit(rec.path, { messages, tools }, options.num_ctx, body.keep_alive);
    try {
      const seen = { ...body, messages: admitted.real ? admitted.fitted.messages : messages };
      const probe = chatViewOf(seen, rec.headers, requestCount, 0);
      const n = (perConversation.get(probe.firstUserText) ?? 0) + 1;
      perConversation.set(probe.firstUserText, n);
      const view = {
        ...probe,
        stream: body.stream !== false,
        conversationRequestNumber: n,
        api: "native" as const,
        options,
        ...(typeof body.think === "boolean" || typeof body.think === "string"
          ? { think: body.think }
          : {}),
        ...(body.format !== undefined ? { format: body.format } : {}),
        context: admitted.record,
      };
      let reply: ChatReply;
      try {
        reply = ctx.script()?.(view) ?? defaultChatReply(view);
      } catch (err) {
        return nativeError(500, `ollama emulator script failed: ${String(err)}`);
      }
      const meta = {
        promptTokens: admitted.real ? admitted.fitted.keptTokens : admitted.record.estimatedTokens,
        loaded: admitted.record.load,
        thinking,
      };
      return await answer(
        req,
        reply,
        (a) => render(generate, body, asTextCalls(a, model.toolCallStyle), meta),
      );
    } finally {
      model.release(body.keep_alive);
    }
  };
}
