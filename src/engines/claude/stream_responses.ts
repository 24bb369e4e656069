/**
 * A Claude Code turn's model responses as its stream shows them, for the job's count of tokens
 * (jobs/spend/usage_bounds.ts). Claude Code writes each content block of a message as an assistant
 * event when the block is complete, with the message's id and the usage of its start (input
 * tokens, output 0), before it runs the tool the block calls: so a response is reported at its
 * first block, with the server's estimates of its request and of the reply read so far, and
 * the budget is checked before its tools run (issue 28, item 14).
 *
 * The request of a response is what the turn sent before it: Claude Code's prompt as measured
 * (context_check.ts: system prompt, tools, task) and the conversation the stream showed since,
 * the model's blocks and the tool results. What the stream does not show (a resumed session's
 * earlier turns, a subagent's system prompt) is left out of the estimate and said.
 */
import { estimateTokens } from "../../models/tokens.ts";
import type { ResponseTokens } from "../types.ts";
import type { StreamEvent } from "./stream.ts";

interface Conversation {
  /** Characters of the blocks the stream showed in it so far. */
  chars: number;
  /** The message being read: its id, its request's characters, its own characters so far. */
  current?: { id: string; requestChars: number; replyChars: number };
}

export class StreamResponses {
  /** By the Agent tool call a subagent runs for; "" is the main conversation. */
  #conversations = new Map<string, Conversation>();
  #anonymous = 0;

  constructor(
    /** Claude Code's measured prompt of the turn's first request (context_check.ts). */
    readonly promptTokens: number,
    /** The turn resumes a session: its requests carry earlier turns the stream does not show. */
    readonly resumed: boolean,
  ) {}

  /** The response an event is part of, as now known; undefined for other events. */
  see(event: StreamEvent): ResponseTokens | undefined {
    if (event.type !== "assistant" && event.type !== "user") return undefined;
    const key = event.parent ?? "";
    let c = this.#conversations.get(key);
    if (!c) this.#conversations.set(key, c = { chars: 0 });
    const chars = event.blocks.reduce((n, b) => n + JSON.stringify(b).length, 0);
    if (event.type === "user") {
      c.chars += chars;
      return undefined;
    }
    const id = event.messageId ?? `unnamed-${++this.#anonymous}`;
    if (c.current?.id !== id) c.current = { id, requestChars: c.chars, replyChars: 0 };
    c.current.replyChars += chars;
    c.chars += chars;
    const usage = event.usage ?? {
      inputTokens: 0,
      outputTokens: 0,
      cacheReadTokens: 0,
      cacheCreationTokens: 0,
    };
    const subagent = key !== "";
    return {
      // A subagent's message ids are its own, but kept apart all the same.
      id: `${key}/${id}`,
      reported: usage,
      requestTokens: (subagent ? 0 : this.promptTokens) + estimateTokens(c.current.requestChars),
      ...(this.resumed || subagent ? { requestUnseen: true } : {}),
      replyTokens: estimateTokens(c.current.replyChars),
    };
  }
}
