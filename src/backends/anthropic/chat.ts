/**
 * A client for the Anthropic Messages API, `POST /v1/messages` (Anthropic's API reference,
 * "Messages" and "Streaming Messages"), as vLLM, llama.cpp's llama-server, LiteLLM and Ollama
 * serve it, with the contract of ChatClient: the same retries, abort handling, errors and caps
 * (chat_stream.ts). The native loop keeps its history in OpenAI's shape; it is translated here
 * both ways: the system messages become `system`, tool calls `tool_use` blocks, tool results
 * `tool_result` blocks of a user message; a streamed tool call arrives as a `content_block_start`
 * with its id and name and `input_json_delta` pieces of its arguments.
 */
import { isObject } from "../../platform/json_object.ts";
import { sample } from "../bounded.ts";
import type { ChatEffort, ChatMessage, ChatRequest } from "../chat_types.ts";
import { StreamingChatClient } from "../chat_stream.ts";
import { errorDetail, type Json, num } from "../http_util.ts";
import type { ReplyDraft, StreamEnd } from "../reply_draft.ts";

/**
 * The reply's room when the caller sets none: the Messages API requires `max_tokens`, and the
 * native engine keeps the same 8k free for the reply when it sizes the context
 * (native/context/budget.ts REPLY_RESERVE_TOKENS).
 */
export const DEFAULT_MAX_TOKENS = 8192;

/** The version header every Anthropic client sends; compatible servers accept and ignore it. */
const ANTHROPIC_VERSION = "2023-06-01";

/** Finish reasons in the words of OpenAI's API, which the rest of the program reads. */
const FINISH: Record<string, string> = {
  end_turn: "stop",
  stop_sequence: "stop",
  max_tokens: "length",
  tool_use: "tool_calls",
};

/** Arguments as the object a `tool_use` block holds; text that is no JSON object becomes {}. */
function inputObject(text: string): Json {
  try {
    const value = JSON.parse(text);
    return isObject(value) ? value : {};
  } catch {
    return {};
  }
}

/**
 * The loop's OpenAI-shaped history as Messages: `system` apart, and each run of tool results
 * (with a user message after them) one user message, since the API alternates user and
 * assistant turns and carries tool results in the user's.
 */
export function messagesBody(
  history: readonly ChatMessage[],
): { system: string; messages: Json[] } {
  const system: string[] = [];
  const messages: Json[] = [];
  const userBlocks = (): Json[] => {
    const last = messages.at(-1);
    if (last?.role === "user" && Array.isArray(last.content)) return last.content as Json[];
    const blocks: Json[] = [];
    messages.push({ role: "user", content: blocks });
    return blocks;
  };
  for (const m of history) {
    switch (m.role) {
      case "system":
        system.push(m.content);
        break;
      case "user":
        userBlocks().push({ type: "text", text: m.content });
        break;
      case "tool":
        userBlocks().push({ type: "tool_result", tool_use_id: m.tool_call_id, content: m.content });
        break;
      case "assistant": {
        const blocks: Json[] = [];
        if (m.content) blocks.push({ type: "text", text: m.content });
        for (const c of m.tool_calls ?? []) {
          blocks.push({
            type: "tool_use",
            id: c.id,
            name: c.function.name,
            input: inputObject(c.function.arguments),
          });
        }
        // An empty assistant turn is refused ("all messages must have non-empty content").
        messages.push({ role: "assistant", content: blocks.length > 0 ? blocks : "(no reply)" });
        break;
      }
    }
  }
  return { system: system.join("\n\n"), messages };
}

/**
 * What an effort asks of a Messages server: `output_config.effort` (what Claude Code sends,
 * and what Ollama and vLLM map to their thinking levels), or thinking turned off.
 */
function effortFields(effort: ChatEffort | undefined): Json {
  switch (effort) {
    case undefined:
      return {};
    case "off":
      return { thinking: { type: "disabled" } };
    default:
      return { output_config: { effort } };
  }
}

export class MessagesChatClient extends StreamingChatClient {
  protected readonly chatPath = "/v1/messages";
  protected readonly streamName = "an Anthropic Messages stream";

  /**
   * The key both ways Messages servers read one: `x-api-key` (Anthropic, llama.cpp, LiteLLM)
   * and `Authorization: Bearer` (vLLM's `--api-key`, LiteLLM), sent to this client's URL only.
   */
  protected override headers(): Record<string, string> {
    return {
      ...super.headers(),
      "anthropic-version": ANTHROPIC_VERSION,
      ...(this.options.apiKey ? { "x-api-key": this.options.apiKey } : {}),
    };
  }

  protected requestBody(request: ChatRequest): string {
    const { system, messages } = messagesBody(request.messages);
    const session = this.options.session?.id;
    return JSON.stringify({
      model: request.model,
      max_tokens: request.max_tokens ?? DEFAULT_MAX_TOKENS,
      ...(system !== "" ? { system } : {}),
      messages,
      ...(request.tools
        ? {
          tools: request.tools.map((t) => ({
            name: t.function.name,
            description: t.function.description,
            input_schema: t.function.parameters,
          })),
        }
        : {}),
      ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
      ...effortFields(request.effort),
      // The Messages API's field for who a request is for; gateways group by it as by
      // OpenAI's `user` (session_headers.ts).
      ...(session ? { metadata: { user_id: session } } : {}),
      stream: true,
    });
  }

  protected async readEvents(
    body: ReadableStream<Uint8Array>,
    fetchSignal: AbortSignal,
    draft: ReplyDraft,
  ): Promise<StreamEnd> {
    const events = this.events(body, fetchSignal);
    let prompt = 0;
    let output = 0;
    for await (const event of events) {
      if (event.data.trim() === "") continue;
      let data: unknown;
      try {
        data = JSON.parse(event.data);
      } catch {
        throw this.protocol(`an event whose data is not JSON: ${sample(event.data)}`);
      }
      if (!isObject(data)) continue;
      if (event.event === "error" || data.type === "error") return { error: errorDetail(data) };
      switch (data.type) {
        case "message_start": {
          const usage = isObject(data.message) && isObject(data.message.usage)
            ? data.message.usage
            : {};
          // Tokens read from a prompt cache are prompt tokens too.
          prompt = num(usage.input_tokens) + num(usage.cache_read_input_tokens) +
            num(usage.cache_creation_input_tokens);
          output = num(usage.output_tokens);
          break;
        }
        case "content_block_start": {
          const block = isObject(data.content_block) ? data.content_block : {};
          const index = num(data.index);
          if (block.type === "tool_use") {
            const input = isObject(block.input) && Object.keys(block.input).length > 0
              ? JSON.stringify(block.input)
              : "";
            draft.calls.add([{
              index,
              id: block.id,
              function: { name: block.name, arguments: input },
            }]);
          } else if (block.type === "text" && typeof block.text === "string") {
            draft.addText(block.text);
          }
          break;
        }
        case "content_block_delta": {
          const delta = isObject(data.delta) ? data.delta : {};
          if (delta.type === "text_delta" && typeof delta.text === "string") {
            draft.addText(delta.text);
          } else if (delta.type === "input_json_delta" && typeof delta.partial_json === "string") {
            draft.calls.add([{
              index: num(data.index),
              function: { arguments: delta.partial_json },
            }]);
          } else if (delta.type === "thinking_delta" && typeof delta.thinking === "string") {
            draft.text.skip(delta.thinking);
          }
          break;
        }
        case "message_delta": {
          const delta = isObject(data.delta) ? data.delta : {};
          if (typeof delta.stop_reason === "string") {
            draft.finishReason = FINISH[delta.stop_reason] ?? delta.stop_reason;
          }
          if (isObject(data.usage)) {
            // Servers that know the prompt's size only at the end say it here.
            if (typeof data.usage.input_tokens === "number") {
              prompt = num(data.usage.input_tokens) + num(data.usage.cache_read_input_tokens) +
                num(data.usage.cache_creation_input_tokens);
            }
            output = num(data.usage.output_tokens);
          }
          break;
        }
        case "message_stop":
          draft.usage = { promptTokens: prompt, completionTokens: output };
          return { complete: true };
      }
    }
    // A server that ends without message_stop has still answered when it gave a stop reason.
    if (draft.finishReason !== null) {
      draft.usage = { promptTokens: prompt, completionTokens: output };
    }
    return { complete: draft.finishReason !== null };
  }
}
