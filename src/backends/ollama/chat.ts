/**
 * A client for Ollama's native `POST /api/chat` (docs/api.md "Generate a chat completion"),
 * with the contract of ChatClient: the same retries, abort handling, errors and caps
 * (chat_stream.ts). The native API is the only one of Ollama's that can set the context window
 * per request (`options.num_ctx`); the OpenAI-compatible `/v1` runs whatever context the model
 * was loaded with and silently drops the front of a prompt that does not fit.
 *
 * Wire differences from OpenAI's shape, translated both ways here: the stream is NDJSON, each
 * tool call arrives whole with `arguments` as an object (and, before Ollama 0.12.10, without an
 * id), tool results go back as `{"role": "tool", "tool_name": ...}`, and the final object
 * carries `prompt_eval_count`/`eval_count` and durations in nanoseconds.
 */
import { isObject } from "../../platform/json_object.ts";
import { sizeText } from "../bounded.ts";
import type { ChatEffort, ChatMessage, ChatRequest, ChatTimings } from "../chat_types.ts";
import { type ChatClientOptions, StreamingChatClient } from "../chat_stream.ts";
import { errorDetail, type Json, num } from "../http_util.ts";
import { ndjsonValues } from "../ndjson.ts";
import type { ReplyDraft, StreamEnd } from "../reply_draft.ts";

export interface OllamaChatOptions extends ChatClientOptions {
  /**
   * How long Ollama keeps the model loaded after a request (`keep_alive`): a Go duration such
   * as "30m", or seconds ("0" unloads at once, a negative value keeps it loaded); Ollama's own
   * default when empty or absent.
   */
  keepAlive?: string;
}

/**
 * `keep_alive` as Ollama reads it (api.Duration): a number is seconds, a string goes through
 * Go's time.ParseDuration, which refuses a bare "300" or "-1" ("missing unit"), so those are
 * sent as numbers.
 */
export function keepAliveValue(text: string | undefined): string | number | undefined {
  const s = text?.trim() ?? "";
  if (s === "") return undefined;
  return /^-?\d+(\.\d+)?$/.test(s) ? Number(s) : s;
}

/**
 * Ollama's `think` for an effort. Levels ("low", "medium", "high") steer only gpt-oss, whose
 * thinking cannot be switched off; other thinking models take true or false, and Ollama
 * versions before named levels were generalised refused a level for them ("think value ... is
 * not supported for this model"), so they get true. "max" is "high", the highest level every
 * version accepts.
 */
export function thinkValue(
  effort: ChatEffort | undefined,
  model: string,
): boolean | "low" | "high" | undefined {
  if (effort === undefined) return undefined;
  if (effort === "off") return false;
  if (!/(^|\/)gpt-oss\b/i.test(model)) return true;
  return effort === "low" ? "low" : "high";
}

/** Arguments as the object the native API wants; text that is no JSON object becomes {}. */
function argumentsObject(text: string): Json {
  try {
    const value = JSON.parse(text);
    return isObject(value) ? value : {};
  } catch {
    return {};
  }
}

/** The loop's OpenAI-shaped history in the native shape. */
export function nativeMessages(messages: readonly ChatMessage[]): Json[] {
  const names = new Map<string, string>();
  return messages.map((m): Json => {
    switch (m.role) {
      case "system":
      case "user":
        return { role: m.role, content: m.content };
      case "assistant": {
        const calls = m.tool_calls ?? [];
        for (const c of calls) names.set(c.id, c.function.name);
        return {
          role: "assistant",
          content: m.content ?? "",
          ...(calls.length > 0
            ? {
              tool_calls: calls.map((c) => ({
                // Ollama 0.12.10+ sends and reads call ids; older versions ignore the field.
                id: c.id,
                function: {
                  name: c.function.name,
                  arguments: argumentsObject(c.function.arguments),
                },
              })),
            }
            : {}),
        };
      }
      case "tool":
        return {
          role: "tool",
          content: m.content,
          tool_name: m.name ?? names.get(m.tool_call_id) ?? "",
          tool_call_id: m.tool_call_id,
        };
    }
  });
}

const NS_PER_MS = 1_000_000;

export class OllamaChatClient extends StreamingChatClient {
  protected readonly chatPath = "/api/chat";
  protected readonly streamName = "an Ollama chat stream";

  constructor(override readonly options: OllamaChatOptions) {
    super(options);
  }

  protected requestBody(request: ChatRequest): string {
    const options: Json = {};
    if (request.numCtx !== undefined) options.num_ctx = request.numCtx;
    if (request.temperature !== undefined) options.temperature = request.temperature;
    if (request.max_tokens !== undefined) options.num_predict = request.max_tokens;
    const think = thinkValue(request.effort, request.model);
    const keepAlive = keepAliveValue(this.options.keepAlive);
    return JSON.stringify({
      model: request.model,
      messages: nativeMessages(request.messages),
      ...(request.tools ? { tools: request.tools } : {}),
      stream: true,
      ...(think !== undefined ? { think } : {}),
      ...(keepAlive !== undefined ? { keep_alive: keepAlive } : {}),
      ...(Object.keys(options).length > 0 ? { options } : {}),
    });
  }

  protected async readEvents(
    body: ReadableStream<Uint8Array>,
    fetchSignal: AbortSignal,
    draft: ReplyDraft,
  ): Promise<StreamEnd> {
    const limits = this.limits;
    const values = ndjsonValues(body, {
      maxBytes: limits.lineBytes,
      tooLong: () => this.overCap(`a line over ${sizeText(limits.lineBytes)} (the cap for one)`),
      notJson: (what) => this.protocol(what),
      signal: fetchSignal,
    });
    for await (const value of values) {
      if (!isObject(value)) continue;
      if (value.error !== undefined) return { error: errorDetail(value) };
      const message = isObject(value.message) ? value.message : {};
      if (typeof message.thinking === "string") draft.text.skip(message.thinking);
      if (typeof message.content === "string") draft.addText(message.content);
      if (Array.isArray(message.tool_calls)) {
        draft.calls.add(message.tool_calls.map(toolCallDelta));
      }
      if (value.done === true) {
        draft.finishReason = typeof value.done_reason === "string" && value.done_reason !== ""
          ? value.done_reason
          : "stop";
        draft.usage = {
          promptTokens: num(value.prompt_eval_count),
          completionTokens: num(value.eval_count),
        };
        draft.timings = timingsOf(value);
        return { complete: true };
      }
    }
    return { complete: false };
  }
}

/**
 * A native tool call as a whole-call delta for ToolCallAssembler. Without a top-level index,
 * each becomes a call of its own: the native API never splits one call over several objects.
 */
function toolCallDelta(call: unknown): unknown {
  if (!isObject(call)) return call;
  const fn = isObject(call.function) ? call.function : {};
  return {
    ...(typeof call.id === "string" ? { id: call.id } : {}),
    function: { name: fn.name, arguments: fn.arguments ?? {} },
  };
}

function timingsOf(value: Json): ChatTimings {
  const ms = (v: unknown) => num(v) / NS_PER_MS;
  return {
    loadMs: ms(value.load_duration),
    promptEvalMs: ms(value.prompt_eval_duration),
    evalMs: ms(value.eval_duration),
    totalMs: ms(value.total_duration),
  };
}
