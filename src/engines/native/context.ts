/**
 * Fitting each native request into the model's context window, so that nothing is cut
 * silently. Ollama drops the front of a prompt that does not fit its loaded context without
 * a word (the system prompt and the task go first), so the engine never sends one that does
 * not fit: it sizes Ollama's context per request, and when the conversation outgrows the cap
 * it shortens old tool output itself, says so in the transcript and the job's status, and
 * fails with the numbers when even that is not enough.
 *
 * Sizes are estimated as characters / 4 of the request's messages and tools as JSON, the
 * usual estimate and the one the project's Ollama emulator applies.
 */
import type { ChatMessage, ChatRequest, ChatTool } from "../../backends/chat_types.ts";
import { DelegateError } from "../../errors.ts";
import { describeCall } from "../tool_detail.ts";

/** Tool results kept whole when older ones are stubbed (claude-delegate-local-mcp keeps 6). */
export const RECENT_TOOL_RESULTS = 6;
/**
 * The fewest results kept whole when stubbing makes room for the next requests: a rewrite
 * breaks the prefix the server has cached, so one rewrite should serve several requests.
 */
export const BATCH_RECENT_TOOL_RESULTS = 3;
/**
 * Tokens kept free for the reply. Ollama's context holds the prompt and the reply together,
 * and a reply that runs past it shifts the context, dropping the front of the prompt. Aider
 * sizes Ollama's context as the request plus 8k for the same reason; a delegate's longest
 * replies are Write and Edit calls carrying a file, and 8k tokens hold about 32 KB of one.
 */
export const REPLY_RESERVE_TOKENS = 8192;
/** The smallest context asked for; contexts are powers of two from here. */
export const MIN_CONTEXT_BUCKET = 8192;
/** The context assumed when nothing says what it is, as one-shot files assume too. */
export const ASSUMED_CONTEXT_TOKENS = 100_000;
/** An old tool-call argument longer than this is shortened with the old tool results. */
const LONG_ARGUMENT_CHARS = 1000;
/** Head plus tail kept of a tool result that must be elided, tried from the largest. */
const ELIDE_KEEPS = [4000, 1000, 200];

export type CapSource = "model" | "setting" | "assumed";

/** The largest context a job may use, and where that number came from. */
export interface ContextCap {
  tokens: number;
  source: CapSource;
}

/** The cap from the model's maximum (when the backend reports one) and `maxContext` (0 = none). */
export function contextCap(modelMax: number | undefined, maxContext: number): ContextCap {
  const known = modelMax !== undefined && Number.isFinite(modelMax) && modelMax > 0;
  if (maxContext > 0 && (!known || maxContext < modelMax)) {
    return { tokens: maxContext, source: "setting" };
  }
  if (known) return { tokens: modelMax, source: "model" };
  return { tokens: ASSUMED_CONTEXT_TOKENS, source: "assumed" };
}

/** Where a cap came from, for messages. */
export function capText(cap: ContextCap): string {
  const tokens = `${fmt(cap.tokens)} tokens`;
  switch (cap.source) {
    case "model":
      return `${tokens}, the model's maximum`;
    case "setting":
      return `${tokens}, set by maxContext`;
    case "assumed":
      return `${tokens}, assumed because the backend does not report the model's context`;
  }
}

/** The reply reserve under a cap: 8k, or a quarter of a small window so a prompt still fits. */
export function replyReserve(cap: number): number {
  return Math.min(REPLY_RESERVE_TOKENS, Math.floor(cap / 4));
}

/** chars/4 of the messages and tools as JSON. */
export function estimateTokens(
  messages: readonly ChatMessage[],
  tools: readonly ChatTool[] = [],
): number {
  const chars = JSON.stringify(messages).length +
    (tools.length > 0 ? JSON.stringify(tools).length : 0);
  return Math.ceil(chars / 4);
}

/**
 * The context to ask Ollama for: a power of two from MIN_CONTEXT_BUCKET that holds `needed`,
 * never below `previous` (a different `num_ctx` reloads the model, so it only grows within a
 * job), at most `cap`.
 */
export function contextBucket(needed: number, cap: number, previous = 0): number {
  let bucket = MIN_CONTEXT_BUCKET;
  while (bucket < needed) bucket *= 2;
  return Math.min(cap, Math.max(bucket, previous));
}

/** A request that cannot fit under the cap even after shortening: the job fails with this. */
export class ContextOverflowError extends DelegateError {
  override name = "ContextOverflowError";
  constructor(
    readonly estimatedTokens: number,
    readonly cap: ContextCap,
    readonly shortened: number,
    /** Where the tokens are, e.g. [["tool results", 1200], ...]. */
    readonly parts: ReadonlyArray<readonly [string, number]> = [],
  ) {
    super(overflowText(estimatedTokens, cap, shortened, parts));
  }
}

/** The request's tokens by what holds them, for the overflow message. */
function partsOf(
  view: readonly ChatMessage[],
  tools: readonly ChatTool[],
): Array<[string, number]> {
  const chars = {
    system: tools.length > 0 ? JSON.stringify(tools).length : 0,
    user: 0,
    assistant: 0,
    tool: 0,
  };
  for (const m of view) chars[m.role] += JSON.stringify(m).length;
  return [
    ["system prompt and tools", Math.ceil(chars.system / 4)],
    ["task and user messages", Math.ceil(chars.user / 4)],
    ["the model's replies", Math.ceil(chars.assistant / 4)],
    ["tool results", Math.ceil(chars.tool / 4)],
  ];
}

function overflowText(
  estimated: number,
  cap: ContextCap,
  shortened: number,
  parts: ReadonlyArray<readonly [string, number]>,
): string {
  const reserve = replyReserve(cap.tokens);
  const fixes = [
    cap.source === "setting"
      ? "raise maxContext (ollama-delegate config --max-context <tokens>) if the GPU memory " +
        "allows"
      : cap.source === "assumed"
      ? "set maxContext (ollama-delegate config --max-context <tokens>) to the context " +
        "the server runs the model with, if it is larger"
      : "",
    "use a model with a larger context window",
    "or give the job a shorter task or fewer and smaller files (split the work into " +
    "several jobs)",
  ].filter(Boolean);
  const where = parts.length > 0
    ? `: ${parts.map(([what, tokens]) => `${what} ${fmt(tokens)}`).join(", ")}`
    : "";
  return `context_overflow: the request needs about ${
    fmt(estimated)
  } tokens (chars/4${where}) plus ` +
    `${fmt(reserve)} for the reply, but the context is capped at ${capText(cap)}` +
    (shortened > 0
      ? `, even after shortening ${shortened} older tool output${shortened === 1 ? "" : "s"}`
      : "") +
    `. The system prompt and the task are never cut. To fix: ${fixes.join(", ")}`;
}

/** One shortening the fitter made, for the transcript. */
interface Shortening {
  what: string;
  from: number;
  to: number;
  kind: "stub" | "elide" | "arguments";
}

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
}

/**
 * Fits the requests of one turn. Shortening happens only when a request would not fit, and
 * then in this order: every tool result older than the newest six becomes a one-line stub;
 * while less than a quarter of the budget is free, older ones of the newest six too, down to
 * the newest three; then tool results keep only their head and tail, oldest first. The system
 * prompt and the user's messages are never touched. Shortenings are kept from request to
 * request (a message once stubbed stays stubbed) and made in batches: every change to an
 * earlier message breaks the prefix the server has cached (Ollama reuses its KV cache only for
 * the unchanged start of a prompt), so the conversation is rewritten rarely, not a little on
 * every request.
 */
export class ContextFitter {
  /** Message index -> replacement, applied to every later request. */
  #replaced = new Map<number, ChatMessage>();
  /** Tool results as they were, for elisions that keep less of them later. */
  #originals = new Map<number, string>();
  #stubs = new Set<number>();
  #bucket = 0;

  constructor(readonly options: ContextFitterOptions) {
    this.#bucket = options.loadedContext ?? 0;
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
    const size = new Size(view, tools);
    const before = this.#replaced.size;
    const made: Shortening[] = [];
    if (size.tokens > budget) {
      // Each request adds a tool result, so shortening only to the budget would rewrite the
      // conversation again on the next request: it goes on until a quarter is free.
      const roomy = budget - Math.floor(budget / 4);
      made.push(...this.#stubBefore(view, size, RECENT_TOOL_RESULTS));
      if (size.tokens > roomy) {
        made.push(...this.#stubBefore(view, size, BATCH_RECENT_TOOL_RESULTS, roomy));
      }
      if (size.tokens > budget) made.push(...this.#elide(view, size, roomy));
    }
    if (size.tokens > budget) {
      throw new ContextOverflowError(size.tokens, cap, this.shortened, partsOf(view, tools));
    }
    if (made.length > 0) this.#report(made, this.#replaced.size - before);
    if (!this.options.sizeContext) return { ...request, messages: view };
    this.#bucket = contextBucket(size.tokens + reserve, cap.tokens, this.#bucket);
    return { ...request, messages: view, numCtx: this.#bucket };
  }

  /**
   * Stubs, oldest first, the tool results before the newest `keep` (and long arguments of the
   * calls before them); with `until`, only until the request is that small.
   */
  #stubBefore(view: ChatMessage[], size: Size, keep: number, until = -1): Shortening[] {
    const made: Shortening[] = [];
    const toolIndexes = view.flatMap((m, i) => (m.role === "tool" ? [i] : []));
    const boundary = toolIndexes.length > keep ? toolIndexes[toolIndexes.length - keep]! : -1;
    // The call that the oldest kept result answers keeps its arguments too.
    let callsBoundary = boundary;
    while (callsBoundary > 0 && view[callsBoundary]!.role !== "assistant") callsBoundary--;
    const calls = callsById(view);
    for (let i = 0; i < boundary && size.tokens > until; i++) {
      const m = view[i]!;
      if (this.#stubs.has(i)) continue;
      if (m.role === "tool") {
        const whole = this.#originals.get(i) ?? m.content;
        const what = callText(calls.get(m.tool_call_id), m.name);
        const stub = `[tool result of ${what}: ${fmt(whole.length)} chars, shown earlier]`;
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
  #elide(view: ChatMessage[], size: Size, budget: number): Shortening[] {
    const made: Shortening[] = [];
    const calls = callsById(view);
    for (const keep of ELIDE_KEEPS) {
      for (let i = 0; i < view.length && size.tokens > budget; i++) {
        const m = view[i]!;
        if (m.role !== "tool" || this.#stubs.has(i)) continue;
        const whole = this.#originals.get(i) ?? m.content;
        const cut = elided(whole, keep);
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

  #replace(view: ChatMessage[], size: Size, i: number, next: ChatMessage): void {
    const old = view[i]!;
    if (old.role === "tool" && !this.#originals.has(i)) this.#originals.set(i, old.content);
    size.change(old, next);
    view[i] = next;
    this.#replaced.set(i, next);
  }

  #report(made: Shortening[], fresh: number): void {
    const { cap } = this.options;
    const shown = made.slice(0, 8).map((s) => {
      switch (s.kind) {
        case "stub":
          return `stubbed ${s.what} (${fmt(s.from)} chars)`;
        case "arguments":
          return `shortened the arguments of ${s.what} (${fmt(s.from)} -> ${fmt(s.to)} chars)`;
        case "elide":
          return `kept the head and tail of ${s.what} (${fmt(s.from)} -> ${fmt(s.to)} chars)`;
      }
    });
    const more = made.length > shown.length ? `; and ${made.length - shown.length} more` : "";
    const note = `[context shortened] To fit the context (${capText(cap)}; ` +
      `${fmt(replyReserve(cap.tokens))} kept for the reply): ${shown.join("; ")}${more}. ` +
      `The system prompt and the task are whole; the job's history keeps everything`;
    this.options.onShortened?.(fresh, note);
  }
}

/** The estimated size of a request, updated exactly as messages are replaced. */
class Size {
  #chars: number;

  constructor(view: readonly ChatMessage[], tools: readonly ChatTool[]) {
    this.#chars = JSON.stringify(view).length +
      (tools.length > 0 ? JSON.stringify(tools).length : 0);
  }

  get tokens(): number {
    return Math.ceil(this.#chars / 4);
  }

  /** A message's JSON is one element of the array's, so the array changes by the difference. */
  change(old: ChatMessage, next: ChatMessage): void {
    this.#chars += JSON.stringify(next).length - JSON.stringify(old).length;
  }
}

/** The tool calls of the conversation by id. */
function callsById(view: readonly ChatMessage[]): Map<string, { name: string; input: unknown }> {
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
function callText(call: { name: string; input: unknown } | undefined, name?: string): string {
  if (!call) return name ?? "a tool";
  const detail = typeof call.input === "object" && call.input !== null &&
      !Array.isArray(call.input)
    ? describeCall(call.name, call.input as Record<string, unknown>)
    : "";
  const short = detail.length > 80 ? `${detail.slice(0, 77)}...` : detail;
  return short ? `${call.name} ${short}` : call.name;
}

/** Calls whose long string arguments (a Write's content) are replaced by a note. */
function shortArguments(
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
        next[key] = `[${fmt(value.length)} characters, left out to fit the model's context]`;
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
function elided(text: string, keep: number): string | undefined {
  if (text.length <= keep) return undefined;
  const head = text.slice(0, Math.ceil(keep / 2));
  const tail = keep > 0 ? text.slice(text.length - Math.floor(keep / 2)) : "";
  const cut = text.length - head.length - tail.length;
  return `${head}\n[... ${fmt(cut)} of ${fmt(text.length)} characters of this tool result ` +
    `left out to fit the model's context ...]\n${tail}`;
}

const fmt = (n: number) => n.toLocaleString("en-US");
