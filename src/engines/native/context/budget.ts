/**
 * How large a native request may be and how large a context to ask Ollama for: the job's
 * context cap and where it came from, the tokens kept for the reply, the chars/4 estimate, the
 * power-of-two context sizes, and the context_overflow error with its numbers and fixes.
 *
 * Sizes are estimated as characters / 4 of the request's messages and tools as JSON, the
 * usual estimate and the one the project's Ollama emulator applies.
 */
import type { ChatMessage, ChatTool } from "../../../backends/chat_types.ts";
import { DelegateError } from "../../../errors.ts";
import { failureLine, type TurnFailure } from "../../backend_failures.ts";
import { estimateTokens, LARGEST_CONTEXT_TOKENS } from "../../../models/tokens.ts";
import { formatCount } from "../../../platform/count_text.ts";

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
/**
 * The most of a backend's claim about the model's context that is believed while maxContext
 * is not set: 2^20 tokens. The conversation a job keeps and resends grows to what the context
 * holds, so a claim of a billion tokens would let a backend make the server hold gigabytes.
 * A million tokens is the largest context open models are served with today: Qwen2.5's
 * Instruct-1M models ship 1,010,000, Llama 4 Maverick 1M, and vLLM's Llama 4 guide serves
 * Scout, whose card claims 10M, at 1M on eight H100s (3.6M on eight H200s). It is also
 * about what one turn may add (MAX_TURN_GROWTH_CHARS, 4 million characters). A user whose
 * server really runs more sets maxContext, which is believed up to the model's claim.
 */
export const MAX_CLAIMED_CONTEXT_TOKENS = LARGEST_CONTEXT_TOKENS;

export type CapSource = "model" | "clamped" | "setting" | "assumed";

/** The largest context a job may use, and where that number came from. */
export interface ContextCap {
  tokens: number;
  source: CapSource;
  /** With source "clamped": what the backend claimed. */
  claimed?: number;
}

/** The cap from the model's maximum (when the backend reports one) and `maxContext` (0 = none). */
export function contextCap(modelMax: number | undefined, maxContext: number): ContextCap {
  const known = modelMax !== undefined && Number.isFinite(modelMax) && modelMax > 0;
  if (maxContext > 0 && (!known || maxContext < modelMax)) {
    return { tokens: maxContext, source: "setting" };
  }
  if (known && maxContext <= 0 && modelMax > MAX_CLAIMED_CONTEXT_TOKENS) {
    return { tokens: MAX_CLAIMED_CONTEXT_TOKENS, source: "clamped", claimed: modelMax };
  }
  if (known) return { tokens: modelMax, source: "model" };
  return { tokens: ASSUMED_CONTEXT_TOKENS, source: "assumed" };
}

/** Where a cap came from, for messages. */
export function capText(cap: ContextCap): string {
  const tokens = `${formatCount(cap.tokens)} tokens`;
  switch (cap.source) {
    case "model":
      return `${tokens}, the model's maximum`;
    case "clamped":
      return `${tokens}, the most a backend's claim is taken for while maxContext is not set ` +
        `(it claims ${formatCount(cap.claimed ?? 0)})`;
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
    super(failureLine(overflowFailure(estimatedTokens, cap, shortened, parts)));
  }

  /** The failure as data: its kind and its sentence. */
  get failure(): TurnFailure {
    return overflowFailure(this.estimatedTokens, this.cap, this.shortened, this.parts);
  }
}

/** The request's tokens by what holds them, for the overflow message. */
export function partsOf(
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
    ["system prompt and tools", estimateTokens(chars.system)],
    ["task and user messages", estimateTokens(chars.user)],
    ["the model's replies", estimateTokens(chars.assistant)],
    ["tool results", estimateTokens(chars.tool)],
  ];
}

function overflowFailure(
  estimated: number,
  cap: ContextCap,
  shortened: number,
  parts: ReadonlyArray<readonly [string, number]>,
): TurnFailure {
  const reserve = replyReserve(cap.tokens);
  const fixes = [
    cap.source === "setting"
      ? "raise maxContext (ollama-delegate config --max-context <tokens>) if the GPU memory " +
        "allows"
      : cap.source === "assumed" || cap.source === "clamped"
      ? "set maxContext (ollama-delegate config --max-context <tokens>) to the context " +
        "the server runs the model with, if it is larger"
      : "",
    "use a model with a larger context window",
    "or give the job a shorter task or fewer and smaller files (split the work into " +
    "several jobs)",
  ].filter(Boolean);
  const where = parts.length > 0
    ? `: ${parts.map(([what, tokens]) => `${what} ${formatCount(tokens)}`).join(", ")}`
    : "";
  const text = `the request needs about ${formatCount(estimated)} tokens (chars/4${where}) plus ` +
    `${formatCount(reserve)} for the reply, but the context is capped at ${capText(cap)}` +
    (shortened > 0
      ? `, even after shortening ${shortened} older tool output${shortened === 1 ? "" : "s"}`
      : "") +
    `. The system prompt and the task are never cut. To fix: ${fixes.join(", ")}`;
  return { kind: "context_overflow", text };
}
