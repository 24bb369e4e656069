/**
 * The one place where what a backend reports about tokens becomes what the server counts
 * (issue 28, item 8: one response reporting `prompt_eval_count: -1000000000` erased a day's
 * spend and lifted `budget_tokens`). Every turn of both engines passes through here
 * (turn_attempts.ts), so budgets, job records, the ledgers and the daily budgets only ever see
 * counted figures:
 *
 * - each figure is a whole number of tokens, 0 or more;
 * - a response's prompt counts at least the server's own estimate of its request (characters
 *   / 4, models/tokens.ts) and at most PROMPT_FACTOR times that plus PROMPT_SLACK, never more
 *   than the largest context (but never less than the estimate);
 * - its output counts at least the estimate of the reply the server read (text, thinking, tool
 *   calls) and at most REPLY_FACTOR times that plus REPLY_SLACK, never more than the largest
 *   context;
 * - a turn's total (the engine's outcome, e.g. Claude Code's result event) is held between the
 *   sums of its responses' bounds.
 *
 * Reading figures recorded before this (job.json, ledger lines) goes through `wholeTokens` too,
 * so a negative figure already on disk counts as 0, never as a credit.
 */
import type { ResponseTokens, RunningUsage, Usage } from "../../engines/types.ts";
import { LARGEST_CONTEXT_TOKENS } from "../../models/tokens.ts";

/**
 * A prompt counts at most 8 times the estimate: two tokens per character, where chars/4
 * assumes a quarter of one. Tokenizers spend one or two on a character of CJK text and up to
 * four on a rare emoji; a whole request of those is not a coding agent's.
 */
export const PROMPT_FACTOR = 8;
/**
 * What a request carries that the server's estimate leaves out: the chat template's role and
 * tool markers, and Claude Code's reminders beside the prompt the engine measured.
 */
export const PROMPT_SLACK = 4096;
/** The same for a reply: two tokens per character the backend sent. */
export const REPLY_FACTOR = 8;
/**
 * What a reply costs beyond what it sent: end-of-turn and tool-call markers, and a little
 * reasoning a backend keeps to itself.
 */
export const REPLY_SLACK = 1024;

/** Whole tokens, 0 or more: negative and NaN count 0, a fraction counts up. */
export function wholeTokens(v: number): number {
  if (!(v > 0)) return 0;
  return Math.min(Math.ceil(v), Number.MAX_SAFE_INTEGER);
}

/** A recorded usage read back: every figure whole and 0 or more (records from before). */
export function wholeUsage(u: Usage): Usage {
  return {
    inputTokens: wholeTokens(u.inputTokens),
    outputTokens: wholeTokens(u.outputTokens),
    cacheReadTokens: wholeTokens(u.cacheReadTokens),
    cacheCreationTokens: wholeTokens(u.cacheCreationTokens),
    numTurns: wholeTokens(u.numTurns),
    durationMs: wholeTokens(u.durationMs),
  };
}

/** The range a response's prompt and output are counted in. */
export interface ResponseBounds {
  promptLow: number;
  promptHigh: number;
  outputLow: number;
  outputHigh: number;
}

/** What the server's estimates of a response allow it to have used. */
export function responseBounds(r: ResponseTokens): ResponseBounds {
  const promptLow = wholeTokens(r.requestTokens);
  const outputLow = wholeTokens(r.replyTokens);
  const within = (low: number, factor: number, slack: number) =>
    Math.max(low, Math.min(LARGEST_CONTEXT_TOKENS, factor * low + slack));
  return {
    promptLow,
    // An unseen part (a resumed session's history) may hold anything the context holds.
    promptHigh: r.requestUnseen
      ? Math.max(promptLow, LARGEST_CONTEXT_TOKENS)
      : within(promptLow, PROMPT_FACTOR, PROMPT_SLACK),
    outputLow,
    outputHigh: within(outputLow, REPLY_FACTOR, REPLY_SLACK),
  };
}

const promptOf = (s: RunningUsage) => s.inputTokens + s.cacheReadTokens + s.cacheCreationTokens;

/**
 * `reported` counted within `b`: each figure whole; the prompt's parts (fresh, cache read,
 * cache written) scaled down together past the high end, the fresh part raised below the low.
 */
export function countWithin(reported: RunningUsage, b: ResponseBounds): RunningUsage {
  const parts = {
    inputTokens: wholeTokens(reported.inputTokens),
    cacheReadTokens: wholeTokens(reported.cacheReadTokens),
    cacheCreationTokens: wholeTokens(reported.cacheCreationTokens),
  };
  const prompt = promptOf({ ...parts, outputTokens: 0 });
  if (prompt > b.promptHigh) {
    const share = b.promptHigh / prompt;
    parts.cacheReadTokens = Math.floor(parts.cacheReadTokens * share);
    parts.cacheCreationTokens = Math.floor(parts.cacheCreationTokens * share);
    parts.inputTokens = b.promptHigh - parts.cacheReadTokens - parts.cacheCreationTokens;
  } else if (prompt < b.promptLow) {
    parts.inputTokens += b.promptLow - prompt;
  }
  const output = wholeTokens(reported.outputTokens);
  return { ...parts, outputTokens: Math.min(b.outputHigh, Math.max(b.outputLow, output)) };
}

/**
 * Why a report is no count at all (negative, fractional, past what the response allows), for
 * the job's `warning:` line; undefined when it is only low. A low prompt is normal: Ollama
 * reports only the tokens it had to evaluate, leaving out a prefix it kept from the previous
 * request, and Claude Code's stream shows a reply's output before it is written.
 */
export function implausible(reported: RunningUsage, b: ResponseBounds): string | undefined {
  const figures = [
    reported.inputTokens,
    reported.outputTokens,
    reported.cacheReadTokens,
    reported.cacheCreationTokens,
  ];
  const prompt = reported.inputTokens + reported.cacheReadTokens + reported.cacheCreationTokens;
  if (figures.every((n) => Number.isInteger(n) && n >= 0)) {
    if (prompt <= b.promptHigh && reported.outputTokens <= b.outputHigh) return undefined;
  }
  return `prompt ${prompt} and output ${reported.outputTokens} tokens for a request of about ` +
    `${b.promptLow} and a reply of about ${b.outputLow}`;
}

/**
 * The responses of one engine turn, counted as they come: what a budget is checked against
 * while the turn runs, and the bounds of the total the turn reports at its end.
 */
export class TurnTokens {
  #responses = new Map<string, { counted: RunningUsage; bounds: ResponseBounds }>();
  #soFar: RunningUsage = {
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheCreationTokens: 0,
  };
  /** The first implausible report of the turn, when there was one (see `implausible`). */
  implausible: string | undefined;

  /** Counts a response (again, replacing it, when its id was seen). */
  add(r: ResponseTokens): void {
    const bounds = responseBounds(r);
    this.implausible ??= implausible(r.reported, bounds);
    this.#responses.set(r.id, { counted: countWithin(r.reported, bounds), bounds });
    const sum = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheCreationTokens: 0 };
    for (const { counted: c } of this.#responses.values()) {
      sum.inputTokens += c.inputTokens;
      sum.outputTokens += c.outputTokens;
      sum.cacheReadTokens += c.cacheReadTokens;
      sum.cacheCreationTokens += c.cacheCreationTokens;
    }
    this.#soFar = sum;
  }

  /** The responses' counted tokens so far. */
  get soFar(): RunningUsage {
    return this.#soFar;
  }

  /**
   * The turn's total as counted: the engine's figures held between the sums of its responses'
   * bounds (Claude Code's result event has the outputs its stream showed before they were
   * written). An engine that reported no response is only made whole: nothing bounds it.
   */
  total(usage: Usage | undefined): Usage | undefined {
    if (!usage) return undefined;
    const whole = wholeUsage(usage);
    if (this.#responses.size === 0) return whole;
    const sum: ResponseBounds = { promptLow: 0, promptHigh: 0, outputLow: 0, outputHigh: 0 };
    for (const { bounds } of this.#responses.values()) {
      sum.promptLow += bounds.promptLow;
      sum.promptHigh += bounds.promptHigh;
      sum.outputLow += bounds.outputLow;
      sum.outputHigh += bounds.outputHigh;
    }
    this.implausible ??= implausible(usage, sum);
    return { ...whole, ...countWithin(usage, sum) };
  }
}
