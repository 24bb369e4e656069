/**
 * The emulator's OpenAI-compatible `POST /v1/chat/completions`, after Ollama's openai/openai.go
 * and middleware/openai.go: the non-streaming `chat.completion` object,
 * the `chat.completion.chunk` SSE stream (role in the first delta, content over several chunks,
 * each tool call whole in one delta, a finish chunk with an empty delta, usage only when
 * `stream_options.include_usage`, then `data: [DONE]`), and errors in the OpenAI shape.
 *
 * This API cannot set `num_ctx`: the request runs with the model's loaded context (see
 * context.ts), and in contextMode "real" the script sees, and usage reports,
 * only what fits. A model with a text `toolCallStyle` answers tool calls as plain content with
 * `finish_reason: "stop"`.
 */

import {
  type ChatReply,
  type ChatScript,
  chatViewOf,
  defaultChatReply,
  unmatchedToolMessage,
} from "./chat_script.ts";
import { type ContextRecord, type FittedPrompt, type PromptParts } from "./context.ts";
import { type TextCallStyle, textReplyOf } from "./text_calls.ts";
import {
  isRecord,
  jsonResponse,
  randomAlnum,
  splitText,
  SSE_HEADERS,
  streamedResponse,
  wait,
  waitDelay,
} from "./util.ts";

export interface ChatModelInfo {
  /** e.g. "registry.ollama.ai/library/qwen3:8b", as Ollama names a model in its errors. */
  fullName: string;
  capabilities: string[];
  retiredText?: string;
  toolCallStyle?: TextCallStyle;
  /** Loads the model for this request and fits the prompt into its context. */
  admit(path: string, parts: PromptParts, numCtx?: unknown, keepAlive?: unknown): Admitted;
  /** The request is answered: a keep_alive of 0 unloads the model. */
  release(keepAlive?: unknown): void;
}

export interface Admitted {
  fitted: FittedPrompt;
  record: ContextRecord;
  /** True when the script must see `fitted.messages` and usage report `fitted.keptTokens`. */
  real: boolean;
}

export interface ChatEndpointContext {
  findModel(name: string): ChatModelInfo | undefined;
  script(): ChatScript | undefined;
  /** Aborted when the emulator closes: releases hanging, delayed and streaming responses. */
  closing: AbortSignal;
}

interface ChatRequestRecord {
  bodyText: string;
  json?: unknown;
  headers: Record<string, string>;
}

function openAiErrorType(status: number): string {
  if (status === 400) return "invalid_request_error";
  if (status === 404) return "not_found_error";
  return "api_error";
}

export function openAiError(status: number, message: string, retryAfter?: string): Response {
  return jsonResponse(
    status,
    { error: { message, type: openAiErrorType(status), param: null, code: null } },
    false,
    retryAfter === undefined ? {} : { "retry-after": retryAfter },
  );
}

function estimateTokens(chars: number): number {
  return Math.max(1, Math.ceil(chars / 4));
}

/** chars/4 of the messages and tools JSON, so that tests can compare request sizes. */
export function promptTokensOf(body: Record<string, unknown>): number {
  const tools = Array.isArray(body.tools) && body.tools.length > 0
    ? JSON.stringify(body.tools).length
    : 0;
  return estimateTokens(JSON.stringify(body.messages ?? []).length + tools);
}

interface WireToolCall {
  id: string;
  index: number;
  type: "function";
  function: { name: string; arguments: string };
}

type Answer = Extract<ChatReply, { kind: "text" | "tool_calls" }>;

/** A tool-call reply as a model that writes its calls as text sends it. */
export function asTextCalls(answer: Answer, style: TextCallStyle | undefined): Answer {
  if (answer.kind !== "tool_calls" || style === undefined || style === "structured") return answer;
  const { calls: _calls, text, ...rest } = answer;
  return { ...rest, kind: "text", text: textReplyOf(style, answer.calls, text) };
}

function sse(data: unknown): string {
  return `data: ${JSON.stringify(data)}\n\n`;
}

/** Returns the handler; it keeps its own request counters. */
export function createChatCompletions(
  ctx: ChatEndpointContext,
): (req: Request, rec: ChatRequestRecord) => Promise<Response> {
  let requestCount = 0;
  const perConversation = new Map<string, number>();

  const render = (
    body: Record<string, unknown>,
    answer: Answer,
    promptTokens: number,
  ): Response => {
    const text = answer.kind === "text" ? answer.text : answer.text ?? "";
    const calls: WireToolCall[] = answer.kind === "tool_calls"
      ? answer.calls.map((c, index) => ({
        id: `call_${randomAlnum(8)}`,
        index,
        type: "function",
        function: { name: c.name, arguments: JSON.stringify(c.arguments) },
      }))
      : [];
    const completionTokens = estimateTokens(
      text.length +
        calls.reduce((n, c) => n + c.function.name.length + c.function.arguments.length, 0),
    );
    const prompt = answer.usage?.prompt ?? promptTokens;
    const completion = answer.usage?.completion ?? completionTokens;
    const usage = {
      prompt_tokens: prompt,
      completion_tokens: completion,
      total_tokens: prompt + completion,
    };
    const finishReason = calls.length > 0 ? "tool_calls" : "stop";
    // Ollama's ids are "chatcmpl-" and a random number below 999 (openai/openai.go): not unique.
    const id = `chatcmpl-${Math.floor(Math.random() * 999)}`;
    const created = Math.floor(Date.now() / 1000);
    const head = { id, created, model: body.model, system_fingerprint: "fp_ollama" };

    if (body.stream !== true) {
      return jsonResponse(200, {
        ...head,
        object: "chat.completion",
        choices: [{
          index: 0,
          message: {
            role: "assistant",
            content: text,
            ...(calls.length > 0 ? { tool_calls: calls } : {}),
          },
          finish_reason: finishReason,
        }],
        usage,
      });
    }

    const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
      sse({ ...head, object: "chat.completion.chunk", choices, ...extra });
    const deltas: Record<string, unknown>[] = [
      ...splitText(text, 4, answer.chunkChars).map((content) => ({ content })),
      // Ollama delivers each tool call whole, arguments never fragmented.
      ...calls.map((c) => ({ tool_calls: [c] })),
    ];
    deltas[0] = { role: "assistant", content: "", ...deltas[0] };
    const frames = deltas.map((delta) => chunk([{ index: 0, delta, finish_reason: null }]));
    const tail = [chunk([{ index: 0, delta: {}, finish_reason: finishReason }])];
    if (isRecord(body.stream_options) && body.stream_options.include_usage === true) {
      tail.push(chunk([], { usage }));
    }
    tail.push("data: [DONE]\n\n");
    const chunkDelayMs = answer.chunkDelayMs ?? 0;

    return streamedResponse(SSE_HEADERS, async (send, cancelled) => {
      for (const [i, f] of frames.entries()) {
        // Cut off like a server that went away mid-answer: no finish chunk, no [DONE].
        if (i > 0 && !(await wait(chunkDelayMs, [cancelled, ctx.closing]))) return;
        send(f);
      }
      for (const f of tail) send(f);
    });
  };

  const answer = async (
    req: Request,
    body: Record<string, unknown>,
    reply: ChatReply,
    model: ChatModelInfo,
    promptTokens: number,
  ): Promise<Response> => {
    switch (reply.kind) {
      case "hang":
        await wait(Infinity, [req.signal, ctx.closing]);
        return openAiError(503, "ollama emulator closed while the request was hanging");
      case "delay":
        if (!(await waitDelay(reply, [req.signal, ctx.closing]))) {
          return openAiError(503, "ollama emulator closed while the reply was delayed");
        }
        return answer(req, body, reply.then, model, promptTokens);
      case "error":
        return openAiError(reply.status, reply.message, reply.retryAfter);
      default:
        return render(body, asTextCalls(reply, model.toolCallStyle), promptTokens);
    }
  };

  return async (req, rec) => {
    requestCount++;
    if (!isRecord(rec.json)) {
      return openAiError(
        400,
        rec.bodyText.trim() ? "invalid request body" : "missing request body",
      );
    }
    const body = rec.json;
    if (typeof body.model !== "string" || body.model === "") {
      return openAiError(400, "model is required");
    }
    if (!Array.isArray(body.messages) || body.messages.length === 0) {
      return openAiError(400, "messages is required");
    }
    const model = ctx.findModel(body.model);
    if (!model) return openAiError(404, `model "${body.model}" not found`);
    // Relayed verbatim from ollama.com, not converted to the OpenAI shape (A5 cloud passthrough).
    if (model.retiredText !== undefined) return jsonResponse(410, { error: model.retiredText });
    const tools = Array.isArray(body.tools) ? body.tools : [];
    if (tools.length > 0 && !model.capabilities.includes("tools")) {
      return openAiError(400, `${model.fullName} does not support tools`);
    }
    // Stricter than Ollama, which would only fail to recover the tool name: a tool result that
    // answers no call is a bug in the client under test.
    const orphan = unmatchedToolMessage(body.messages);
    if (orphan !== undefined) {
      return openAiError(
        400,
        `invalid tool message: tool_call_id "${orphan}" answers no earlier assistant tool call`,
      );
    }

    const admitted = model.admit("/v1/chat/completions", { messages: body.messages, tools });
    const seen = admitted.real ? { ...body, messages: admitted.fitted.messages } : body;
    const promptTokens = admitted.real ? admitted.fitted.keptTokens : promptTokensOf(body);
    const probe = {
      ...chatViewOf(seen, rec.headers, requestCount, 0),
      context: admitted.record,
    };
    const n = (perConversation.get(probe.firstUserText) ?? 0) + 1;
    perConversation.set(probe.firstUserText, n);
    const view = { ...probe, conversationRequestNumber: n };
    let reply: ChatReply;
    try {
      reply = ctx.script()?.(view) ?? defaultChatReply(view);
    } catch (err) {
      model.release();
      return openAiError(500, `ollama emulator script failed: ${String(err)}`);
    }
    try {
      return await answer(req, body, reply, model, promptTokens);
    } finally {
      model.release();
    }
  };
}
