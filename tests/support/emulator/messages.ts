/**
 * The emulator's Anthropic-compatible `POST /v1/messages`, the endpoint the real Claude Code CLI
 * talks to (`ANTHROPIC_BASE_URL`): Ollama's Message object, its SSE event order (message_start,
 * content blocks with text in several deltas and each tool input whole in one delta,
 * message_delta, message_stop; no ping), and errors in the Anthropic shape.
 *
 * This API cannot set `num_ctx`: the request runs with the model's loaded context (see
 * context.ts). In contextMode "real" the script sees, and usage reports, only
 * what fits; the system prompt counts toward the prompt and may be cut too. A model with a text
 * `toolCallStyle` answers a tool_use as a text block with stop_reason "end_turn".
 */

import { type Admitted } from "./openai.ts";
import { defaultReply, type MessagesRequestView, type Reply, viewOf } from "./messages_script.ts";
import { type TextCallStyle, textReplyOf } from "./text_calls.ts";
import {
  isRecord,
  jsonResponse,
  randomAlnum,
  randomHex,
  splitText,
  SSE_HEADERS,
  streamedResponse,
  wait,
} from "./util.ts";

export interface MessagesModelInfo {
  /** e.g. "registry.ollama.ai/library/qwen3:8b", as Ollama names a model in its errors. */
  fullName: string;
  capabilities: string[];
  retiredText?: string;
  toolCallStyle?: TextCallStyle;
  admit(path: string, parts: { messages: unknown[]; tools: unknown[]; system?: unknown }): Admitted;
  release(): void;
}

export interface MessagesEndpointContext {
  findModel(name: string): MessagesModelInfo | undefined;
  script(): ((view: MessagesRequestView) => Reply | undefined) | undefined;
  /** Aborted when the emulator closes: releases hanging, delayed and streaming responses. */
  closing: AbortSignal;
}

interface MessagesRequestRecord {
  bodyText: string;
  json?: unknown;
  headers: Record<string, string>;
}

function anthropicErrorType(status: number): string {
  switch (status) {
    case 400:
      return "invalid_request_error";
    case 401:
      return "authentication_error";
    case 403:
      return "permission_error";
    case 404:
      return "not_found_error";
    case 429:
      return "rate_limit_error";
    case 503:
    case 529:
      return "overloaded_error";
    default:
      return "api_error";
  }
}

export function anthropicError(status: number, message: string): Response {
  return jsonResponse(status, {
    type: "error",
    error: { type: anthropicErrorType(status), message },
    request_id: `req_${randomHex(12)}`,
  });
}

// ---------------------------------------------------------------------------------------------
// Rendering a reply

type ContentBlock =
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> };

function contentOf(reply: Extract<Reply, { kind: "text" | "tool_use" }>): ContentBlock[] {
  const blocks: ContentBlock[] = [];
  const text = reply.kind === "text" ? reply.text : reply.text ?? "";
  if (text) blocks.push({ type: "text", text });
  if (reply.kind === "tool_use") {
    blocks.push({
      type: "tool_use",
      id: `call_${randomAlnum(8)}`,
      name: reply.name,
      input: reply.input,
    });
  }
  return blocks;
}

function estimateTokens(chars: number): number {
  return Math.max(1, Math.ceil(chars / 4));
}

/** A tool_use reply as a model that writes its calls as text sends it. */
function asText(reply: Extract<Reply, { kind: "text" | "tool_use" }>, style?: TextCallStyle) {
  if (reply.kind !== "tool_use" || style === undefined || style === "structured") return reply;
  const text = textReplyOf(style, [{ name: reply.name, arguments: reply.input }], reply.text);
  return { kind: "text" as const, text, delayMs: reply.delayMs };
}

function outputTokensOf(blocks: ContentBlock[]): number {
  let chars = 0;
  for (const b of blocks) {
    chars += b.type === "text" ? b.text.length : JSON.stringify(b.input).length;
  }
  return estimateTokens(chars);
}

function frame(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** Returns the handler for `POST /v1/messages`. */
export function createMessages(
  ctx: MessagesEndpointContext,
): (req: Request, rec: MessagesRequestRecord) => Promise<Response> {
  const encoder = new TextEncoder();
  const closing = ctx.closing;
  const answer = async (
    req: Request,
    rec: MessagesRequestRecord,
    body: Record<string, unknown>,
    tools: unknown[],
    model: MessagesModelInfo,
  ): Promise<Response> => {
    const admitted = model.admit("/v1/messages", {
      messages: body.messages as unknown[],
      tools,
      system: body.system,
    });
    const { fitted } = admitted;
    const seen = admitted.real
      ? { ...body, messages: fitted.messages, system: fitted.keptSystem ? body.system : undefined }
      : body;
    const view = { ...viewOf(seen, rec.headers), context: admitted.record };
    let reply: Reply;
    try {
      reply = ctx.script()?.(view) ?? defaultReply(view);
    } catch (err) {
      return anthropicError(500, `emulator script failed: ${String(err)}`);
    }

    if (reply.kind === "hang") {
      await wait(Infinity, [req.signal, closing]);
      return anthropicError(503, "ollama emulator closed while the request was hanging");
    }
    if (reply.kind === "error") return anthropicError(reply.status, reply.message);

    const inputTokens = reply.usage?.input ??
      (admitted.real ? fitted.keptTokens : Math.floor(encoder.encode(rec.bodyText).length / 4));
    const blocks = contentOf(asText(reply, model.toolCallStyle));
    const outputTokens = reply.usage?.output ?? outputTokensOf(blocks);
    const stopReason = blocks.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn";
    const id = `msg_${randomHex(12)}`;
    const delayMs = reply.delayMs ?? 0;

    if (body.stream !== true) {
      if (delayMs > 0 && !(await wait(delayMs, [req.signal, closing]))) {
        return anthropicError(503, "ollama emulator closed while the reply was delayed");
      }
      return jsonResponse(200, {
        id,
        type: "message",
        role: "assistant",
        model: body.model,
        content: blocks,
        stop_reason: stopReason,
        stop_sequence: null,
        usage: { input_tokens: inputTokens, output_tokens: outputTokens },
      });
    }

    const frames: string[] = [];
    blocks.forEach((b, index) => {
      if (b.type === "text") {
        frames.push(frame("content_block_start", {
          type: "content_block_start",
          index,
          content_block: { type: "text", text: "" },
        }));
        for (const piece of splitText(b.text, 3)) {
          frames.push(frame("content_block_delta", {
            type: "content_block_delta",
            index,
            delta: { type: "text_delta", text: piece },
          }));
        }
      } else {
        frames.push(frame("content_block_start", {
          type: "content_block_start",
          index,
          content_block: { type: "tool_use", id: b.id, name: b.name, input: {} },
        }));
        // Ollama sends a tool call's arguments whole, never fragmented.
        frames.push(frame("content_block_delta", {
          type: "content_block_delta",
          index,
          delta: { type: "input_json_delta", partial_json: JSON.stringify(b.input) },
        }));
      }
      frames.push(frame("content_block_stop", { type: "content_block_stop", index }));
    });
    frames.push(frame("message_delta", {
      type: "message_delta",
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { input_tokens: inputTokens, output_tokens: outputTokens },
    }));
    frames.push(frame("message_stop", { type: "message_stop" }));

    const start = frame("message_start", {
      type: "message_start",
      message: {
        id,
        type: "message",
        role: "assistant",
        model: body.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: inputTokens, output_tokens: 0 },
      },
    });
    return streamedResponse(SSE_HEADERS, async (send, cancelled) => {
      send(start);
      if (!(await wait(delayMs, [cancelled, closing]))) return;
      for (const f of frames) {
        if (cancelled.aborted) return;
        send(f);
      }
    });
  };

  return async (req: Request, rec: MessagesRequestRecord): Promise<Response> => {
    if (!isRecord(rec.json)) {
      return anthropicError(
        400,
        rec.bodyText.trim() ? "invalid request body" : "missing request body",
      );
    }
    const body = rec.json;
    if (typeof body.model !== "string" || body.model === "") {
      return anthropicError(400, "model is required");
    }
    if (typeof body.max_tokens !== "number" || !(body.max_tokens > 0)) {
      return anthropicError(400, "max_tokens is required and must be positive");
    }
    if (!Array.isArray(body.messages) || body.messages.length === 0) {
      return anthropicError(400, "messages is required");
    }
    const model = ctx.findModel(body.model);
    if (!model) return anthropicError(404, `model '${body.model}' not found`);
    if (model.retiredText !== undefined) {
      return jsonResponse(410, { error: model.retiredText });
    }
    const tools = Array.isArray(body.tools) ? body.tools : [];
    if (tools.length > 0 && !model.capabilities.includes("tools")) {
      return anthropicError(400, `${model.fullName} does not support tools`);
    }
    try {
      return await answer(req, rec, body, tools, model);
    } finally {
      model.release();
    }
  };
}
