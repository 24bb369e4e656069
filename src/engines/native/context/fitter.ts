/**
 * Fitting each native request into the model's context window, so that nothing is cut
 * silently. Ollama drops the front of a prompt that does not fit its loaded context without
 * a word (the system prompt and the task go first), so the engine never sends one that does
 * not fit: it sizes Ollama's context per request, and when the conversation outgrows the cap
 * it shortens old tool output (and then leaves out old exchanges) itself, says so in the
 * transcript and the job's status, and fails with the numbers when even that is not enough.
 *
 * How large a request may be lives in budget.ts; the ways of shortening one in
 * shortening.ts.
 */
import type { ChatMessage, ChatRequest } from "../../../backends/chat_types.ts";
import { formatCount } from "../../../platform/count_text.ts";
import {
  contextBucket,
  type ContextCap,
  ContextOverflowError,
  partsOf,
  replyReserve,
} from "./budget.ts";
import {
  callsById,
  callText,
  elideMiddle,
  leftOutNote,
  RequestSize,
  shortArguments,
  type Shortening,
  shorteningNote,
} from "./shortening.ts";
import type { LeftOut } from "./history_window.ts";

/** Tool results kept whole when older ones are stubbed (claude-delegate-local-mcp keeps 6). */
export const RECENT_TOOL_RESULTS = 6;
/**
 * The fewest results kept whole when stubbing makes room for the next requests: a rewrite
 * breaks the prefix the server has cached, so one rewrite should serve several requests.
 */
export const BATCH_RECENT_TOOL_RESULTS = 3;
/** Head plus tail kept of a tool result that must be elided, tried from the largest. */
const ELIDE_KEEPS = [4000, 1000, 200];

export interface ContextFitterOptions {
  cap: ContextCap;
  /** Ollama's native API: choose `numCtx` per request. */
  sizeContext: boolean;
  /**
   * The context the model is loaded with now (`/api/ps`): kept while it holds the request, so
   * that a job does not reload a model that another job or the user loaded with more.
   */
  loadedContext?: number;
  /**
   * Called when messages were shortened for a request: how many messages were shortened for
   * the first time, and a line for the transcript that says what.
   */
  onShortened?(count: number, note: string): void;
  /**
   * Earlier messages the follow-up's history left out before the first request (history.ts):
   * the requests say so where they were.
   */
  leftOut?: LeftOut;
}

/**
 * Fits the requests of one turn. Shortening happens only when a request would not fit, and
 * then in this order: every tool result older than the newest six becomes a one-line stub;
 * while less than a quarter of the budget is free, older ones of the newest six too, down to
 * the newest three; then tool results keep only their head and tail, oldest first; then the
 * oldest whole exchanges after the task (a user message up to the next one) are left out, and
 * one note after the task says how many messages are missing. The system prompt, the task and
 * the current exchange are never left out, and the user's messages never shortened.
 * Shortenings are kept from request to request (a message once stubbed stays stubbed) and made
 * in batches: every change to an earlier message breaks the prefix the server has cached
 * (Ollama reuses its KV cache only for the unchanged start of a prompt), so the conversation
 * is rewritten rarely, not a little on every request.
 */
export class ContextFitter {
  /** Message index -> replacement, applied to every later request. */
  #replaced = new Map<number, ChatMessage>();
  /** Tool results as they were, for elisions that keep less of them later. */
  #originals = new Map<number, string>();
  #stubs = new Set<number>();
  #bucket = 0;
  #started = false;
  /** The task's index (the first user message), set by the first request. */
  #task = -1;
  /** Messages after the task and before this one are left out. */
  #dropFrom = 0;
  /** Earlier messages left out, by the history and here: what the note counts. */
  #leftOut = 0;
  /** JSON sizes of messages, measured once: each request resends the conversation. */
  #sizes = new WeakMap<ChatMessage, number>();
  #measure = (m: ChatMessage): number => {
    let n = this.#sizes.get(m);
    if (n === undefined) this.#sizes.set(m, n = JSON.stringify(m).length);
    return n;
  };

  constructor(readonly options: ContextFitterOptions) {
    this.#bucket = options.loadedContext ?? 0;
    this.#leftOut = options.leftOut?.messages ?? 0;
  }

  /** The context asked of Ollama so far (the loaded one, or 0, before the first request). */
  get bucket(): number {
    return this.#bucket;
  }

  /** Messages shortened so far. */
  get shortened(): number {
    return this.#replaced.size;
  }

  /**
   * The request to send: shortened when needed, with `numCtx` for Ollama. Throws
   * ContextOverflowError when it cannot fit.
   */
  fit(request: ChatRequest): ChatRequest {
    const { cap } = this.options;
    const tools = request.tools ?? [];
    const reserve = replyReserve(cap.tokens);
    const budget = cap.tokens - reserve;
    const view = request.messages.map((m, i) => this.#replaced.get(i) ?? m);
    const first = !this.#started;
    if (first) {
      this.#started = true;
      this.#task = view.findIndex((m) => m.role === "user");
      this.#dropFrom = this.#task + 1;
    }
    const task = this.#task;
    const size = new RequestSize(view, tools, this.#measure);
    for (let i = task + 1; i < this.#dropFrom; i++) size.remove(view[i]!);
    let note = this.#note();
    if (note) size.add(note);
    const before = this.#replaced.size;
    const made: Shortening[] = [];
    const history = this.options.leftOut;
    if (first && history && history.messages > 0) {
      made.push({ what: "history", from: history.messages, to: history.bytes, kind: "drop" });
    }
    if (size.tokens > budget) {
      // Each request adds a tool result, so shortening only to the budget would rewrite the
      // conversation again on the next request: it goes on until a quarter is free.
      const roomy = budget - Math.floor(budget / 4);
      made.push(...this.#stubBefore(view, size, RECENT_TOOL_RESULTS));
      if (size.tokens > roomy) {
        made.push(...this.#stubBefore(view, size, BATCH_RECENT_TOOL_RESULTS, roomy));
      }
      if (size.tokens > budget) made.push(...this.#elide(view, size, roomy));
      if (size.tokens > budget) {
        const dropped = this.#drop(view, size, task, roomy);
        if (dropped) made.push(dropped);
        if (note) size.remove(note);
        note = this.#note();
        if (note) size.add(note);
      }
    }
    const sent = note || this.#dropFrom > task + 1
      ? [...view.slice(0, task + 1), ...(note ? [note] : []), ...view.slice(this.#dropFrom)]
      : view;
    if (size.tokens > budget) {
      throw new ContextOverflowError(size.tokens, cap, this.shortened, partsOf(sent, tools));
    }
    if (made.length > 0) this.#report(made, this.#replaced.size - before);
    if (!this.options.sizeContext) return { ...request, messages: sent };
    this.#bucket = contextBucket(size.tokens + reserve, cap.tokens, this.#bucket);
    return { ...request, messages: sent, numCtx: this.#bucket };
  }

  /** Whether message `i` is among those left out: after the task, before #dropFrom. */
  #isDropped(i: number): boolean {
    return i > this.#task && i < this.#dropFrom;
  }

  /**
   * Leaves out the oldest whole exchanges between the task and the current one, until the
   * request is `until` tokens or less or only the current exchange is left.
   */
  #drop(
    view: ChatMessage[],
    size: RequestSize,
    task: number,
    until: number,
  ): Shortening | undefined {
    const starts = view.flatMap((m, i) => (m.role === "user" && i > task ? [i] : []));
    let count = 0, chars = 0;
    for (const start of starts) {
      if (size.tokens <= until) break;
      if (start <= this.#dropFrom) continue;
      for (let i = this.#dropFrom; i < start; i++) {
        size.remove(view[i]!);
        count++;
        chars += this.#measure(view[i]!);
      }
      this.#dropFrom = start;
    }
    if (count === 0) return undefined;
    this.#leftOut += count;
    const made: Shortening = { what: "exchanges", from: count, to: chars, kind: "drop" };
    return made;
  }

  /** The note that stands for the messages left out, after the task; none when none are. */
  #note(): ChatMessage | undefined {
    if (this.#leftOut === 0) return undefined;
    return { role: "assistant", content: leftOutNote(this.#leftOut) };
  }

  /**
   * Stubs, oldest first, the tool results before the newest `keep` (and long arguments of the
   * calls before them); with `until`, only until the request is that small.
   */
  #stubBefore(view: ChatMessage[], size: RequestSize, keep: number, until = -1): Shortening[] {
    const made: Shortening[] = [];
    const toolIndexes = view.flatMap((
      m,
      i,
    ) => (m.role === "tool" && !this.#isDropped(i) ? [i] : []));
    const boundary = toolIndexes.length > keep ? toolIndexes[toolIndexes.length - keep]! : -1;
    // The call that the oldest kept result answers keeps its arguments too.
    let callsBoundary = boundary;
    while (callsBoundary > 0 && view[callsBoundary]!.role !== "assistant") callsBoundary--;
    const calls = callsById(view);
    for (let i = 0; i < boundary && size.tokens > until; i++) {
      const m = view[i]!;
      if (this.#stubs.has(i) || this.#isDropped(i)) continue;
      if (m.role === "tool") {
        const whole = this.#originals.get(i) ?? m.content;
        const what = callText(calls.get(m.tool_call_id), m.name);
        const stub = `[tool result of ${what}: ${formatCount(whole.length)} chars, shown earlier]`;
        if (stub.length >= m.content.length) continue;
        this.#replace(view, size, i, { ...m, content: stub });
        this.#stubs.add(i);
        made.push({ what, from: whole.length, to: stub.length, kind: "stub" });
      } else if (
        m.role === "assistant" && m.tool_calls && i < callsBoundary && !this.#replaced.has(i)
      ) {
        const shortened = shortArguments(m.tool_calls);
        if (!shortened) continue;
        this.#replace(view, size, i, { ...m, tool_calls: shortened.calls });
        const { what, from, to } = shortened;
        made.push({ what, from, to, kind: "arguments" });
      }
    }
    return made;
  }

  /**
   * Keeps only the head and tail of tool results, oldest first, with less kept on each pass,
   * until the request is `budget` tokens or less. Stubs are left alone: they are one line.
   */
  #elide(view: ChatMessage[], size: RequestSize, budget: number): Shortening[] {
    const made: Shortening[] = [];
    const calls = callsById(view);
    for (const keep of ELIDE_KEEPS) {
      for (let i = 0; i < view.length && size.tokens > budget; i++) {
        const m = view[i]!;
        if (m.role !== "tool" || this.#stubs.has(i) || this.#isDropped(i)) continue;
        const whole = this.#originals.get(i) ?? m.content;
        const cut = elideMiddle(whole, keep);
        if (cut === undefined || cut.length >= m.content.length) continue;
        this.#replace(view, size, i, { ...m, content: cut });
        made.push({
          what: callText(calls.get(m.tool_call_id), m.name),
          from: whole.length,
          to: cut.length,
          kind: "elide",
        });
      }
      if (size.tokens <= budget) break;
    }
    return made;
  }

  #replace(view: ChatMessage[], size: RequestSize, i: number, next: ChatMessage): void {
    const old = view[i]!;
    if (old.role === "tool" && !this.#originals.has(i)) this.#originals.set(i, old.content);
    size.change(old, next);
    view[i] = next;
    this.#replaced.set(i, next);
  }

  #report(made: Shortening[], fresh: number): void {
    this.options.onShortened?.(fresh, shorteningNote(made, this.options.cap));
  }
}
