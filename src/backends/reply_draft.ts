/**
 * One reply as its stream is read, whatever the wire format: its text, its tool calls and how
 * it ended, each part under the reply's caps. The chat clients fill it from their events
 * (openai/chat.ts, ollama/chat.ts); chat_stream.ts turns it into the reply, or into the error of a
 * stream that ended early or reported one.
 */
import { type ReplyLimits, sizeText } from "./bounded.ts";
import type { ChatReply } from "./chat_types.ts";
import { ToolCallAssembler } from "./tool_calls.ts";

/** How a stream ended: complete or not, or with an error the server reported in it. */
export type StreamEnd = { complete: boolean } | { error: string };

/** What the events of one reply fill in. */
export class ReplyDraft {
  finishReason: string | null = null;
  usage: ChatReply["usage"];
  timings: ChatReply["timings"];
  readonly text: ReplyText;
  readonly calls: ToolCallAssembler;

  constructor(
    limits: Readonly<ReplyLimits>,
    overCap: (reason: string) => Error,
    /** Called with each piece of the answer's text as it arrives. */
    readonly onText?: (delta: string) => void,
  ) {
    this.text = new ReplyText(limits.contentChars, overCap);
    this.calls = new ToolCallAssembler(limits, overCap);
  }

  /** The answer's text: kept, counted, and passed to onText. */
  addText(delta: string): void {
    this.text.add(delta, this.onText);
  }

  reply(): ChatReply {
    return {
      content: this.text.text,
      toolCalls: this.calls.calls(),
      finishReason: this.finishReason,
      ...(this.usage ? { usage: this.usage } : {}),
      ...(this.text.thinkingChars > 0 ? { thinkingChars: this.text.thinkingChars } : {}),
      ...(this.timings ? { timings: this.timings } : {}),
    };
  }
}

/**
 * The text of one reply (and the thinking before it, which is not kept but counted), held
 * under the reply's text cap.
 */
export class ReplyText {
  text = "";
  /** Characters of thinking passed to `skip`. */
  thinkingChars = 0;
  #chars = 0;

  constructor(
    private readonly maxChars: number,
    private readonly overCap: (reason: string) => Error,
  ) {}

  /** Text of the answer: kept, and passed to `onText`. */
  add(delta: string, onText?: (delta: string) => void): void {
    if (delta === "") return;
    this.#count(delta.length);
    this.text += delta;
    onText?.(delta);
  }

  /** Thinking: only counted, so that a model thinking without end is stopped too. */
  skip(delta: string): void {
    this.#count(delta.length);
    this.thinkingChars += delta.length;
  }

  #count(chars: number): void {
    if (this.#chars + chars > this.maxChars) {
      throw this.overCap(
        `over ${sizeText(this.maxChars, "characters")} of text in one reply (the cap)`,
      );
    }
    this.#chars += chars;
  }
}
