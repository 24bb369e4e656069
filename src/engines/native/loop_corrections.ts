/**
 * Tool calls written as text that cannot run, in the native loop. Such a reply is never the
 * final answer: before this, a model that wrote a call to a tool it was not offered, or a
 * call cut off, or leaked its special tokens, ended the job "completed" with the markup as its
 * answer and `tool calls: 0` as the only hint. Now the model is answered as a tool error would
 * answer it (what was wrong, which tools and parameters exist: text_calls/recover_reply.ts),
 * and may try again; after MAX_TEXT_CALL_CORRECTIONS such replies in a row the job fails with
 * its own status word, `tool_call_unparsed:`, and the raw replies stay in the transcript.
 */
import type { ChatMessage } from "../../backends/chat_types.ts";
import type { ToolCallDeps } from "./loop_tool_calls.ts";
import type { OfferedTool } from "./text_calls/arguments.ts";
import { correctionText, type RecoveredReply } from "./text_calls/recover_reply.ts";
import { TOOL_CALL_UNPARSED } from "../text_calls/types.ts";

/** Replies in a row that may be corrected; the next one like them fails the job. */
export const MAX_TEXT_CALL_CORRECTIONS = 2;

export { TOOL_CALL_UNPARSED };

export class Corrections {
  /** Replies in a row whose calls written as text could not run. */
  #inARow = 0;
  #sent = 0;

  constructor(
    private readonly messages: ChatMessage[],
    private readonly deps: Pick<ToolCallDeps, "remember" | "transcript" | "activity">,
    private readonly offered: readonly OfferedTool[],
    private readonly maxTurns: number,
  ) {}

  /**
   * A reply that looks like a call and holds none that can be read: kept in the history and the
   * transcript as written, and answered with what was wrong. Returns the job's error when it
   * must stop instead (too many in a row, or no request left to correct it in).
   */
  unrun(raw: string, reason: string, lastTurn: boolean): string | undefined {
    const assistant: ChatMessage = { role: "assistant", content: raw };
    this.messages.push(assistant);
    this.deps.remember([assistant]);
    this.deps.transcript({ kind: "text", text: raw });
    this.deps.activity({
      kind: "error",
      text: `[server] not run: a tool call written as text that cannot be read (${reason})`,
    });
    this.#inARow++;
    if (lastTurn) {
      return `${TOOL_CALL_UNPARSED}: in its last request (max_turns ${this.maxTurns}) the ` +
        `model wrote a tool call as text that cannot be run (${reason}) instead of its final ` +
        `answer. Its raw reply is in the transcript (delegate_transcript). Follow up to let it ` +
        `continue, or raise max_turns`;
    }
    const stopped = this.#stopped(reason);
    if (stopped) return stopped;
    this.#correct(correctionText(reason, this.offered));
    return undefined;
  }

  /**
   * After the calls of a reply ran: when they were all calls written as text that could not
   * run (each already answered with its error), it counts as one more such reply.
   */
  afterCalls(recovered: RecoveredReply | undefined): string | undefined {
    const calls = recovered?.kind === "calls" ? [...recovered.recovered.values()] : [];
    if (calls.length === 0 || calls.some((c) => c.error === undefined)) {
      this.#inARow = 0;
      return undefined;
    }
    this.#inARow++;
    return this.#stopped(calls[0]!.error!);
  }

  #stopped(reason: string): string | undefined {
    if (this.#inARow <= MAX_TEXT_CALL_CORRECTIONS) return undefined;
    return `${TOOL_CALL_UNPARSED}: the model wrote ${this.#inARow} replies in a row that look ` +
      `like tool calls written as text but cannot be run (last: ${reason}), and was told what ` +
      `was wrong each time. Its raw replies are in the transcript (delegate_transcript). Use a ` +
      `model that calls tools reliably (ollama-delegate doctor --probe shows which), or follow ` +
      `up to let it try again`;
  }

  /** The correction, answered as the server: in the history and, as an error, the transcript. */
  #correct(text: string): void {
    const message: ChatMessage = { role: "user", content: text };
    this.messages.push(message);
    this.deps.remember([message]);
    this.#sent++;
    this.deps.transcript({
      kind: "tool_result",
      id: `correction_${this.#sent}`,
      name: "ollama-delegate",
      text,
      isError: true,
    });
  }
}
