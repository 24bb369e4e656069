/**
 * A client for OpenAI-compatible chat completions (vLLM, LM Studio, llama.cpp server,
 * OpenRouter, and Ollama's `/v1`): server-sent events, tools, retries with backoff
 * (chat_stream.ts). The API key is sent only to this client's own URL. What a backend sends
 * is read under REPLY_LIMITS.
 */
import { isObject } from "../../platform/json_object.ts";
import { BackendReplyError, REPLY_LIMITS, type ReplyLimits, sample } from "../bounded.ts";
import type { ChatEffort, ChatRequest } from "../chat_types.ts";
import { StreamingChatClient } from "../chat_stream.ts";
import { errorDetail, type Json, num, parseJson } from "../http_util.ts";
import type { ReplyDraft, StreamEnd } from "../reply_draft.ts";

export * from "../chat_types.ts";
export { type ChatClientOptions, endpointFailure, MAX_ATTEMPTS } from "../chat_stream.ts";
export { parseRetryAfter } from "../http_util.ts";
export { BackendReplyError, REPLY_LIMITS, type ReplyLimits };

/**
 * `reasoning_effort` for an effort. "off" sends nothing: "none" is accepted by Ollama's `/v1`
 * and OpenAI's newest models but refused (HTTP 400) by servers that validate the field
 * against low/medium/high, such as vLLM, so the server's default stands. "max" is "high",
 * the highest value every server accepts.
 */
export function reasoningEffort(effort: ChatEffort | undefined): "low" | "high" | undefined {
  switch (effort) {
    case "low":
      return "low";
    case "high":
    case "max":
      return "high";
    default:
      return undefined;
  }
}

export class ChatClient extends StreamingChatClient {
  protected readonly chatPath = "/v1/chat/completions";
  protected readonly streamName = "a chat completion stream";

  /** `GET /v1/models`: the model ids the backend offers. */
  async models(timeoutMs = 5000): Promise<string[]> {
    return (await this.#modelList(timeoutMs))
      .map((m) => String(m.id ?? ""))
      .filter((id) => id !== "");
  }

  /**
   * The model's context window as `/v1/models` reports it (vLLM `max_model_len`,
   * OpenRouter `context_length`); undefined when the server does not say.
   */
  async contextLength(model: string, timeoutMs = 5000): Promise<number | undefined> {
    const entry = (await this.#modelList(timeoutMs)).find((m) => m.id === model);
    if (!entry) return undefined;
    for (const value of [entry.max_model_len, entry.context_length]) {
      if (typeof value === "number" && Number.isInteger(value) && value > 0) return value;
    }
    return undefined;
  }

  async #modelList(timeoutMs: number): Promise<Json[]> {
    const body = await this.getJson("/v1/models", timeoutMs);
    const data = isObject(body) && Array.isArray(body.data) ? body.data : [];
    return data.filter(isObject);
  }

  protected requestBody(request: ChatRequest): string {
    const effort = reasoningEffort(request.effort);
    return JSON.stringify({
      model: request.model,
      messages: request.messages,
      ...(request.tools ? { tools: request.tools } : {}),
      ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
      ...(request.max_tokens !== undefined ? { max_tokens: request.max_tokens } : {}),
      ...(effort ? { reasoning_effort: effort } : {}),
      // OpenAI's field for whom a request is for, which gateways group requests by
      // (session_headers.ts).
      ...(this.options.session ? { user: this.options.session.id } : {}),
      stream: true,
      stream_options: { include_usage: true },
    });
  }

  protected async readEvents(
    body: ReadableStream<Uint8Array>,
    fetchSignal: AbortSignal,
    draft: ReplyDraft,
  ): Promise<StreamEnd> {
    const events = this.events(body, fetchSignal);
    for await (const event of events) {
      if (event.event === "error") return { error: errorDetail(parseJson(event.data)) };
      if (event.data === "[DONE]") return { complete: true };
      if (event.data.trim() === "") continue;
      let chunk: unknown;
      try {
        chunk = JSON.parse(event.data);
      } catch {
        throw this.protocol(`an event whose data is not JSON: ${sample(event.data)}`);
      }
      if (!isObject(chunk)) continue;
      if (isObject(chunk.error) || typeof chunk.error === "string") {
        return { error: errorDetail(chunk) };
      }
      if (isObject(chunk.usage)) {
        draft.usage = {
          promptTokens: num(chunk.usage.prompt_tokens),
          completionTokens: num(chunk.usage.completion_tokens),
        };
      }
      const choice = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
      if (!isObject(choice)) continue;
      if (typeof choice.finish_reason === "string") draft.finishReason = choice.finish_reason;
      const delta = isObject(choice.delta) ? choice.delta : {};
      // Reasoning is not kept, but it is output the backend charges for and sends: counted
      // under the text cap and in the reply's size (Ollama's /v1 sends `reasoning`, vLLM and
      // llama.cpp's server `reasoning_content`).
      for (const reasoning of [delta.reasoning, delta.reasoning_content]) {
        if (typeof reasoning === "string") draft.text.skip(reasoning);
      }
      if (typeof delta.content === "string") draft.addText(delta.content);
      if (Array.isArray(delta.tool_calls)) draft.calls.add(delta.tool_calls);
    }
    // A server that ends without [DONE] has still answered when it gave a finish reason.
    return { complete: draft.finishReason !== null };
  }
}
