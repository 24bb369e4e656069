/** Tool calls of one streamed reply, assembled under the reply's caps. */
import { isObject } from "../platform/json_object.ts";
import { type ReplyLimits, sizeText } from "./bounded.ts";

export interface ChatToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

type Json = Record<string, unknown>;

/**
 * Tool calls arrive whole from Ollama, but OpenAI-style servers fragment them by `index`:
 * the first fragment has id and name, later ones append to `arguments`. `overCap(reason)`
 * makes the error thrown when the calls pass a cap.
 */
export class ToolCallAssembler {
  #calls = new Map<number, ChatToolCall>();
  #chars = 0;

  constructor(
    private readonly limits: Pick<ReplyLimits, "toolCallChars" | "toolCalls">,
    private readonly overCap: (reason: string) => Error,
  ) {}

  add(deltas: unknown[]): void {
    for (const [i, d] of deltas.entries()) {
      if (!isObject(d)) continue;
      const index = typeof d.index === "number" ? d.index : this.#calls.size + i;
      const fn = isObject(d.function) ? d.function : {};
      const existing = this.#calls.get(index);
      if (!existing) {
        if (this.#calls.size >= this.limits.toolCalls) {
          throw this.overCap(`over ${this.limits.toolCalls} tool calls in one reply (the cap)`);
        }
        const call: ChatToolCall = {
          // Unique across turns: a history with two "call_0" cannot tell which was answered.
          id: typeof d.id === "string" && d.id !== "" ? d.id : `call_${crypto.randomUUID()}`,
          type: "function",
          function: {
            name: typeof fn.name === "string" ? fn.name : "",
            arguments: typeof fn.arguments === "string"
              ? fn.arguments
              : isObject(fn.arguments)
              ? JSON.stringify(fn.arguments)
              : "",
          },
        };
        this.#count(call.id.length + call.function.name.length + call.function.arguments.length);
        this.#calls.set(index, call);
        continue;
      }
      if (typeof fn.name === "string" && existing.function.name === "") {
        this.#count(fn.name.length);
        existing.function.name = fn.name;
      }
      if (typeof fn.arguments === "string") {
        this.#count(fn.arguments.length);
        existing.function.arguments += fn.arguments;
      }
    }
  }

  /** The calls in index order. */
  calls(): ChatToolCall[] {
    return [...this.#calls.entries()].sort((a, b) => a[0] - b[0]).map(([, c]) => c);
  }

  #count(chars: number): void {
    this.#chars += chars;
    if (this.#chars > this.limits.toolCallChars) {
      throw this.overCap(
        `over ${
          sizeText(this.limits.toolCallChars, "characters")
        } of tool-call arguments in one reply (the cap)`,
      );
    }
  }
}
