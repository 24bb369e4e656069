/**
 * Each request of a claude turn, read from its stream: what Ollama reported reading for it,
 * and how much the conversation had grown since the request before it. Every request repeats
 * the system prompt, the tools, the task and all the turn has said and read so far, so the
 * second request of a turn that read a 33 KB file carries that file too: about 10.6k tokens
 * where the first carried 1.2k. context_check.ts judges each request on these numbers
 * (issue 29: a turn's check used to average the input tokens over its requests, and a cut of
 * a later request went unseen).
 *
 * Claude Code 2.1.332 writes one `assistant` event per content block of a message, each with
 * the message's id and usage (the input tokens from the endpoint's `message_start`), and the
 * tool results it sends back as `user` events. A subagent's messages (`parent_tool_use_id`)
 * belong to another conversation and are left out. The growth is chars/4 of the JSON of the
 * blocks, as the request size is measured (`CLAUDE_PROMPT_TOKENS`).
 */
import { estimateTokens } from "../../models/tokens.ts";
import type { MessageUsage, StreamEvent } from "./stream.ts";

/** One request of a turn. */
export interface RequestTokens {
  /** Prompt tokens Ollama reported for it: input, cache read and cache creation. */
  reported: number;
  /**
   * Tokens the conversation gained between the previous request and this one (the model's
   * previous message and the tool results sent back); 0 for the first.
   */
  added: number;
}

/** Requests kept per turn at most; a turn's requests past it are not judged. */
const MAX_REQUESTS = 10_000;

/** Feeds on a turn's stream events and keeps its requests in order. */
export class RequestSizes {
  readonly #requests: RequestTokens[] = [];
  #id: string | undefined;
  /** Characters the conversation gained since the last request began. */
  #chars = 0;

  see(event: StreamEvent): void {
    if ((event.type !== "assistant" && event.type !== "user") || event.parent !== undefined) return;
    if (event.type === "assistant") {
      // A new id is a new response, so a new request: what came before it was sent with it.
      if (event.messageId === undefined || event.messageId !== this.#id) {
        this.#id = event.messageId;
        if (this.#requests.length >= MAX_REQUESTS) return;
        const added = this.#requests.length === 0 ? 0 : estimateTokens(this.#chars);
        this.#requests.push({ reported: 0, added });
        this.#chars = 0;
      }
      if (event.usage) this.#requests.at(-1)!.reported = promptTokens(event.usage);
    }
    for (const block of event.blocks) {
      if (event.type === "assistant" || block.type === "tool_result") {
        this.#chars += JSON.stringify(block).length;
      }
    }
  }

  /** The turn's requests so far, first to last. */
  get requests(): readonly RequestTokens[] {
    return this.#requests;
  }
}

function promptTokens(u: MessageUsage): number {
  return u.inputTokens + u.cacheReadTokens + u.cacheCreationTokens;
}
