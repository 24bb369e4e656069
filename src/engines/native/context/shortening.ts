/**
 * The ways the context fitter shortens a conversation that has outgrown the context, and what
 * it says about them: one-line stubs for old tool results, head-and-tail elisions, long
 * arguments of old calls replaced by a note, the running size of a request as messages are
 * replaced, and the "[context shortened]" line for the transcript.
 */
import type { ChatMessage, ChatTool } from "../../../backends/chat_types.ts";
import { estimateTokens } from "../../../models/tokens.ts";
import { describeCall } from "../../activity_detail.ts";
import { formatCount } from "../../../platform/count_text.ts";
import { capText, type ContextCap, replyReserve } from "./budget.ts";

/** An old tool-call argument longer than this is shortened with the old tool results. */
const LONG_ARGUMENT_CHARS = 1000;

/**
 * One shortening the fitter made, for the transcript. A "drop" counts whole messages left out
 * (`from`) and their size (`to`): characters of the messages the fitter left out ("exchanges"),
 * bytes of the lines the follow-up did not read back ("history").
 */
export interface Shortening {
  what: string;
  from: number;
  to: number;
  kind: "stub" | "elide" | "arguments" | "drop";
}

/** The line for the transcript that says what was shortened to fit under `cap`. */
export function shorteningNote(made: readonly Shortening[], cap: ContextCap): string {
  const shown = made.slice(0, 8).map((s) => {
    switch (s.kind) {
      case "stub":
        return `stubbed ${s.what} (${formatCount(s.from)} chars)`;
      case "arguments":
        return `shortened the arguments of ${s.what} (${formatCount(s.from)} -> ${
          formatCount(s.to)
        } chars)`;
      case "elide":
        return `kept the head and tail of ${s.what} (${formatCount(s.from)} -> ${
          formatCount(s.to)
        } chars)`;
      case "drop":
        return s.what === "history"
          ? `left out ${messages(s.from)} (${formatCount(s.to)} bytes), older than what a ` +
            `follow-up holds in memory`
          : `left out ${messages(s.from)} of the oldest exchanges after the task ` +
            `(${formatCount(s.to)} chars)`;
    }
  });
  const more = made.length > shown.length ? `; and ${made.length - shown.length} more` : "";
  return `[context shortened] To fit the context (${capText(cap)}; ` +
    `${formatCount(replyReserve(cap.tokens))} kept for the reply): ${shown.join("; ")}${more}. ` +
    `The system prompt and the task are whole; the job's history keeps everything`;
}

const messages = (n: number) => `${formatCount(n)} earlier message${n === 1 ? "" : "s"}`;

/** What the model reads, after the task, in place of the earlier messages left out. */
export function leftOutNote(count: number): string {
  return `[${messages(count)} of this conversation ${count === 1 ? "is" : "are"} left out ` +
    `here to fit the model's context; the task above is whole]`;
}

/**
 * The estimated size of a request (chars/4 of its messages and tools as JSON), updated exactly
 * as messages are replaced, added or removed. Messages are measured one at a time: the
 * conversation is never made into one string to be measured.
 */
export class RequestSize {
  #chars: number;

  constructor(
    view: readonly ChatMessage[],
    tools: readonly ChatTool[],
    readonly measure: (m: ChatMessage) => number = (m) => JSON.stringify(m).length,
  ) {
    // "[", the elements with a comma between each two, "]".
    this.#chars = 2 + Math.max(0, view.length - 1) +
      view.reduce((n, m) => n + measure(m), 0) +
      (tools.length > 0 ? JSON.stringify(tools).length : 0);
  }

  get tokens(): number {
    return estimateTokens(this.#chars);
  }

  /** A message's JSON is one element of the array's, so the array changes by the difference. */
  change(old: ChatMessage, next: ChatMessage): void {
    this.#chars += this.measure(next) - this.measure(old);
  }

  add(m: ChatMessage): void {
    this.#chars += this.measure(m) + 1;
  }

  remove(m: ChatMessage): void {
    this.#chars -= this.measure(m) + 1;
  }
}

/** The tool calls of the conversation by id. */
export function callsById(
  view: readonly ChatMessage[],
): Map<string, { name: string; input: unknown }> {
  const out = new Map<string, { name: string; input: unknown }>();
  for (const m of view) {
    if (m.role !== "assistant" || !m.tool_calls) continue;
    for (const c of m.tool_calls) {
      let input: unknown = {};
      try {
        input = JSON.parse(c.function.arguments);
      } catch {
        // Shown by name only.
      }
      out.set(c.id, { name: c.function.name, input });
    }
  }
  return out;
}

/** "Read src/a.ts": the call a result answers, short. */
export function callText(
  call: { name: string; input: unknown } | undefined,
  name?: string,
): string {
  if (!call) return name ?? "a tool";
  const detail = typeof call.input === "object" && call.input !== null &&
      !Array.isArray(call.input)
    ? describeCall(call.name, call.input as Record<string, unknown>)
    : "";
  const short = detail.length > 80 ? `${detail.slice(0, 77)}...` : detail;
  return short ? `${call.name} ${short}` : call.name;
}

/** Calls whose long string arguments (a Write's content) are replaced by a note. */
export function shortArguments(
  calls: NonNullable<Extract<ChatMessage, { role: "assistant" }>["tool_calls"]>,
): { calls: typeof calls; what: string; from: number; to: number } | undefined {
  let changed = false;
  let from = 0, to = 0;
  const names: string[] = [];
  const out = calls.map((c) => {
    let input: unknown;
    try {
      input = JSON.parse(c.function.arguments);
    } catch {
      return c;
    }
    if (typeof input !== "object" || input === null || Array.isArray(input)) return c;
    let touched = false;
    const next: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(input)) {
      if (typeof value === "string" && value.length > LONG_ARGUMENT_CHARS) {
        next[key] = `[${
          formatCount(value.length)
        } characters, left out to fit the model's context]`;
        touched = true;
      } else {
        next[key] = value;
      }
    }
    if (!touched) return c;
    changed = true;
    const args = JSON.stringify(next);
    from += c.function.arguments.length;
    to += args.length;
    names.push(callText({ name: c.function.name, input }));
    return { ...c, function: { ...c.function, arguments: args } };
  });
  return changed ? { calls: out, what: names.join(", "), from, to } : undefined;
}

/** The head and tail of `text` with a marker for the middle; undefined when it is short. */
export function elideMiddle(text: string, keep: number): string | undefined {
  if (text.length <= keep) return undefined;
  const head = text.slice(0, Math.ceil(keep / 2));
  const tail = keep > 0 ? text.slice(text.length - Math.floor(keep / 2)) : "";
  const cut = text.length - head.length - tail.length;
  return `${head}\n[... ${formatCount(cut)} of ${
    formatCount(text.length)
  } characters of this tool result ` +
    `left out to fit the model's context ...]\n${tail}`;
}
