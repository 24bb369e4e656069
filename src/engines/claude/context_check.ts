/**
 * Whether a claude delegate's requests fit the context Ollama runs the model with.
 *
 * Ollama silently drops what does not fit its loaded context, from the front, and the
 * Anthropic-compatible `/v1/messages` that Claude Code talks to cannot ask for a larger one
 * (only `options.num_ctx` on Ollama's native API can). Claude Code's system prompt and tool
 * definitions come first in every request, so a small context loses them and often the task
 * too, while the job still ends "successfully". Before a turn, a model that `/api/ps` shows
 * loaded with too small a context is refused; after it, the input tokens Ollama reported for
 * each request are compared with what that request carried (request_sizes.ts).
 */
import { canonicalModelName, hasCloudSuffix } from "../../settings/model_names.ts";
import { estimateTokens } from "../../models/tokens.ts";
import type { PermissionMode } from "../../settings/types.ts";
import type { TurnFailure } from "../backend_failures.ts";
import type { Usage } from "../types.ts";
import type { RequestTokens } from "./request_sizes.ts";
import { formatCount } from "../../platform/count_text.ts";

/**
 * Prompt tokens (chars/4 of the system prompt, messages and tool definitions: the part Ollama
 * renders into the model's prompt) of the first request Claude Code 2.1.332 sends, measured
 * with `deno run -A bench/first_request_bench.ts --table` against the Ollama emulator. Update
 * them with that command when the pinned Claude Code changes.
 */
export const CLAUDE_PROMPT_TOKENS = {
  /** System prompt and reminders with no tools (`--tools=`), without the task. */
  base: 2_099,
  /** Sent with any tool: the DeferredToolPlaceholder entry and the list's brackets. */
  anyTool: 51,
  /**
   * Per built-in tool: its definition and the reminders it brings (Bash its git attribution,
   * Skill and Agent their listings, Workflow its catalogue).
   */
  tools: {
    Bash: 1_132,
    Read: 480,
    Edit: 242,
    Write: 160,
    Glob: 183,
    Grep: 807,
    Agent: 1_684,
    ListAgents: 350,
    ReportFindings: 605,
    ScheduleWakeup: 1_222,
    Skill: 2_086,
    ToolSearch: 0,
    Workflow: 5_685,
    NotebookEdit: 406,
    WebFetch: 271,
    WebSearch: 216,
  } as Readonly<Record<string, number>>,
  /** A tool this table does not know (it may not exist at all: Claude Code skips those). */
  unknownTool: 500,
  /** `--tools=default`: Claude Code's whole set, with its agent and skill listings. */
  defaultSet: 12_169,
  /** Plan mode adds its instructions as a reminder. */
  planMode: 1_246,
  /**
   * Claude Code's sandbox on (Linux with bubblewrap): a system message describing it, with up
   * to 50 of its paths per list, and a longer Bash description.
   */
  sandbox: 1_950,
} as const;

/**
 * The same for the lean harness (`claudeHarness` "lean": `--bare` and our short system
 * prompt), measured the same way (`--table`).
 */
export const CLAUDE_LEAN_PROMPT_TOKENS = {
  /** Claude Code's two short leading blocks, our system prompt and the first message. */
  base: 178,
  anyTool: 1,
  tools: { Bash: 388, Read: 288, Edit: 157 } as Readonly<Record<string, number>>,
  unknownTool: 500,
  /** Minimal mode sends no plan-mode reminder. */
  planMode: 0,
  /** No sandbox system message in minimal mode; the Bash description grows. */
  sandbox: 208,
} as const;

/**
 * Headroom over the measured size: Claude Code's reminders grow with the working directory and
 * date, tokenizers count JSON differently from chars/4, and the model needs room to answer.
 */
export const PROMPT_MARGIN = 0.1;

/**
 * Below this share of the estimate, what Ollama reports reading cannot be the whole request:
 * every request repeats the system prompt, the tools and the task. When Ollama cuts a prompt
 * whose system part alone does not fit, it keeps about half its context of the tail.
 */
export const CUT_BELOW_SHARE = 0.5;

/** Requests this close to the loaded context were probably shortened to fit it. */
export const NEAR_FULL_SHARE = 0.97;

/** The context suggested in the fixes; Ollama's docs recommend 64000 for coding agents. */
export const SUGGESTED_MIN_CONTEXT = 32_768;

/** The prompt tokens of one request: what the first request of a turn carries, at least. */
export function estimatePromptTokens(input: {
  tools: readonly string[];
  permissionMode: PermissionMode;
  taskChars: number;
  appendChars?: number;
  /** Claude Code's sandbox confines Bash in this turn. */
  sandbox?: boolean;
  /** The lean harness (`--bare`); else Claude Code's full one. */
  lean?: boolean;
}): number {
  const t = input.lean ? CLAUDE_LEAN_PROMPT_TOKENS : CLAUDE_PROMPT_TOKENS;
  let tokens = t.base + estimateTokens(input.taskChars) + estimateTokens(input.appendChars ?? 0);
  if (!input.lean && input.tools.includes("default")) {
    tokens = Math.max(tokens - t.base, 0) + CLAUDE_PROMPT_TOKENS.defaultSet;
  } else if (input.tools.length > 0) {
    tokens += t.anyTool;
    for (const name of input.tools) tokens += t.tools[name] ?? t.unknownTool;
  }
  if (input.permissionMode === "plan") tokens += t.planMode;
  if (input.sandbox) tokens += t.sandbox;
  return tokens;
}

/** The context a request needs: the estimate with headroom. */
export function requiredContext(estimate: number): number {
  return Math.ceil(estimate * (1 + PROMPT_MARGIN));
}

/** A context to suggest: a power of two that holds the request, at least 32k. */
export function suggestedContext(required: number): number {
  let n = SUGGESTED_MIN_CONTEXT;
  while (n < required) n *= 2;
  return n;
}

/** Cloud models run on ollama.com with their full context: nothing to check. */
export function skipsContextCheck(model: string): boolean {
  return hasCloudSuffix(model);
}

const n = formatCount;

/** The ways out, in the order a user tries them. */
export function fixesText(model: string, required: number): string {
  const ctx = suggestedContext(required);
  const name = canonicalModelName(model);
  return `Fix: restart Ollama with OLLAMA_CONTEXT_LENGTH=${ctx} in its environment (Ollama ` +
    `recommends at least 64000 for coding agents); or give the model its own context with ` +
    `ollama-delegate models derive ${name} --ctx ${ctx} and delegate to the derived model; ` +
    `or run the task with engine: "native", which sets the context on every request`;
}

/** Why a turn is refused before it starts, or undefined when it may run. */
export function refusalText(input: {
  model: string;
  loadedContext: number | undefined;
  estimate: number;
}): TurnFailure | undefined {
  if (input.loadedContext === undefined || skipsContextCheck(input.model)) return undefined;
  const required = requiredContext(input.estimate);
  if (input.loadedContext >= required) return undefined;
  return overflow(
    `Cannot start the claude engine with ${input.model}: Ollama has it ` +
      `loaded with a context of ${n(input.loadedContext)} tokens, and every request Claude Code ` +
      `sends is about ${n(input.estimate)} tokens (its system prompt, tool definitions and this ` +
      `task; ${n(required)} with room to answer). Ollama would silently cut the start of every ` +
      `request, the instructions and the task included. ${fixesText(input.model, required)}`,
  );
}

/**
 * Why a turn on a server that is not Ollama (vLLM, llama-server: a backend of kind anthropic)
 * is refused before it starts: the context it serves the model with cannot hold Claude Code's
 * request. Such a server refuses a request that does not fit instead of cutting it, so the turn
 * would fail at its first request anyway.
 */
export function servedRefusalText(input: {
  model: string;
  where: string;
  servedContext: number | undefined;
  estimate: number;
}): TurnFailure | undefined {
  if (input.servedContext === undefined) return undefined;
  const required = requiredContext(input.estimate);
  if (input.servedContext >= required) return undefined;
  return overflow(
    `Cannot start the claude engine with ${input.model}: ${input.where} ` +
      `serves it with a context of ${
        n(input.servedContext)
      } tokens, and every request Claude Code ` +
      `sends is about ${n(input.estimate)} tokens (${n(required)} with room to answer), which ` +
      `the server would refuse. Fix: serve the model with more context (vLLM --max-model-len ` +
      `${suggestedContext(required)}, llama-server --ctx-size ${suggestedContext(required)}), or ` +
      `run the task with engine: "native", whose requests are smaller`,
  );
}

/** What the numbers after a turn say about its prompts. */
export type TurnContextVerdict =
  /** Ollama read less than every request carries: the prompts were cut. */
  | { kind: "cut"; warning: string }
  /** Requests filled the loaded context: Ollama may have dropped older messages. */
  | { kind: "full"; warning: string };

/** One request as judged: what it carried (estimated) and what Ollama reported reading. */
interface Judged {
  sent: number;
  reported: number;
  /** 1-based, of `of`; undefined when only the turn's total was known. */
  index?: number;
  of: number;
}

/**
 * What each request of a turn carried: the first the estimate, each later one what the one
 * before it carried (or Ollama read of it, when more) plus what the turn added in between.
 * Claude Code with an Ollama model name assumes a context of a million tokens, so it does not
 * compact a conversation these sizes reach.
 */
function sentSizes(estimate: number, requests: readonly RequestTokens[]): Judged[] {
  const out: Judged[] = [];
  let before: Judged | undefined;
  for (const [i, r] of requests.entries()) {
    const sent = before ? Math.max(before.sent, before.reported) + r.added : estimate;
    before = { sent, reported: r.reported, index: i + 1, of: requests.length };
    out.push(before);
  }
  return out;
}

/**
 * Compares what Ollama reported reading with what was sent, request by request (`requests`,
 * from the stream), or on average over the turn when the stream gave no per-request figures
 * (`usage`, Claude Code's total over `numTurns` requests). `loadedContext` is what `/api/ps`
 * shows after the turn, when the model is still loaded. A report far under what a request
 * carried is a cut unless the loaded context holds the request anyway (a report that counts
 * only what Ollama had to evaluate, beside a prefix kept from the request before, is not one);
 * a report at the loaded context is one when the request did not fit it.
 */
export function judgeTurn(input: {
  model: string;
  estimate: number;
  usage: Usage | undefined;
  requests?: readonly RequestTokens[];
  loadedContext: number | undefined;
}): TurnContextVerdict | undefined {
  const { usage, loadedContext, estimate } = input;
  if (!usage || skipsContextCheck(input.model)) return undefined;
  const reported = usage.inputTokens + usage.cacheReadTokens + usage.cacheCreationTokens;
  const requests = Math.max(1, usage.numTurns);
  const known = (input.requests ?? []).filter((r) => r.reported > 0).length > 0;
  const judged = known
    ? sentSizes(estimate, input.requests!).filter((r) => r.reported > 0)
    : reported > 0
    ? [{ sent: estimate, reported: Math.round(reported / requests), of: requests }]
    : [];
  const loadedText = loadedContext === undefined
    ? ""
    : `${input.model} is loaded with a context of ${n(loadedContext)} tokens; `;
  const numbers = (r: Judged) =>
    r.index === undefined
      ? `Ollama reported reading about ${n(r.reported)} input tokens per request ` +
        `(${n(reported)} over ${requests} request${requests === 1 ? "" : "s"}), and every ` +
        `request of this engine is about ${n(estimate)} tokens`
      : `Ollama reported reading about ${n(r.reported)} input tokens of request ${r.index} ` +
        `of ${r.of}, ` + (r.index === 1
          ? `and every request of this engine is about ${n(estimate)} tokens`
          : `which carried about ${n(r.sent)} tokens: every request of this engine is about ` +
            `${n(estimate)} tokens, and what the turn read and wrote before it added about ` +
            `${n(r.sent - estimate)}`);
  const verdicts = judged.map((r) => ({ r, ...requestVerdict(r, loadedContext) }));
  const cut = verdicts.find((v) => v.kind === "cut");
  if (cut) {
    return {
      kind: "cut",
      warning: `Ollama cut the prompt: ${loadedText}${numbers(cut.r)}. The model did not see ` +
        `all of Claude Code's instructions, tools and the task, so its answer cannot be ` +
        `trusted. ${fixesText(input.model, cut.required)}`,
    };
  }
  const full = verdicts.find((v) => v.kind === "full");
  if (full) {
    return {
      kind: "full",
      warning: `The prompt may have been cut: ${loadedText}${numbers(full.r)}, and requests ` +
        `reached the loaded context, where Ollama drops the oldest messages (the task among ` +
        `them). ${fixesText(input.model, Math.max(full.required, (loadedContext ?? 0) * 2))}`,
    };
  }
  return undefined;
}

/** One request's verdict, and the context it needed. */
function requestVerdict(
  r: Judged,
  loadedContext: number | undefined,
): { kind?: TurnContextVerdict["kind"]; required: number } {
  const required = requiredContext(r.sent);
  const fits = loadedContext !== undefined && loadedContext >= required;
  const low = r.reported < r.sent * CUT_BELOW_SHARE;
  // Ollama never reports more than the context it ran with: more means nothing was cut (the
  // model was reloaded with another context since, or the server does not cut).
  const nearFull = loadedContext !== undefined && r.reported <= loadedContext &&
    r.reported >= loadedContext * NEAR_FULL_SHARE;
  if (!fits && (low || nearFull)) return { kind: "cut", required };
  if (fits && nearFull) return { kind: "full", required };
  return { required };
}

/** A refusal for a context too small: the kind the job layer may move to a fallback model on. */
const overflow = (text: string): TurnFailure => ({ kind: "context_overflow", text });
