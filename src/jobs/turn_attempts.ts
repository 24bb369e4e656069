/**
 * One round's engine turn, and the attempts it may take: when the backend fails in a way another
 * model may not (429, 5xx, unreachable, the prompt past the context), a job with `fallback`
 * models (an agent's) moves to the next one and runs the turn again, and says so.
 */
import type { Engine, TurnOutcome, TurnSink, TurnSpec, Usage } from "../engines/types.ts";
import { flattenLine } from "../platform/plain_text.ts";
import { addSpent, type Spent, tokensOf } from "./spend/budget.ts";
import { KILL_GRACE_MS, type LiveJob } from "./live_job.ts";
import type { JobStore } from "./store.ts";
import { TurnTokens } from "./spend/usage_bounds.ts";

/** How the `warning:` line of a backend's implausible token counts starts. */
export const USAGE_WARNING =
  "the backend reported token counts outside what this turn's requests and replies allow";

/** The failure a fallback model may not have, or undefined (the job does not move). */
export function fallbackReason(outcome: TurnOutcome): string | undefined {
  if (outcome.ok) return undefined;
  const text = outcome.errorText ?? "";
  const status = outcome.apiErrorStatus;
  if (outcome.failure === "backend_unreachable" || outcome.failure === "context_overflow") {
    return text;
  }
  if (status === 429 || (status !== undefined && status >= 500 && status <= 599)) {
    return text !== "" ? text : `HTTP ${status}`;
  }
  return undefined;
}

/**
 * Runs a turn on the job's model and, while it fails for its backend and the job has fallback
 * models left, on the next one. Stoppable through `live.turn` while it runs. `spent` hears the
 * tokens counted so far after each model response (usage_bounds.ts), before its tools run.
 */
export async function runTurn(
  live: LiveJob,
  engine: Engine,
  spec: TurnSpec,
  sink: TurnSink,
  store?: JobStore,
  spent?: (soFar: Spent) => void,
): Promise<TurnOutcome> {
  const record = live.record;
  let outcome = await attempt(live, engine, spec, sink, spent);
  while (!live.stopReason) {
    const reason = fallbackReason(outcome);
    const [next, ...rest] = record.fallback ?? [];
    if (reason === undefined || next === undefined) break;
    const why = flattenLine(reason).slice(0, 300);
    (record.fallbacks ??= []).push({ from: record.model, to: next, reason: why });
    sink.activity({
      kind: "error",
      text: `[server] ${record.model} failed (${why}); moving to ${next}`,
    });
    record.model = next;
    if (rest.length > 0) record.fallback = rest;
    else delete record.fallback;
    await store?.write(record).catch(() => {});
    // A session the failed attempt created is continued, not made again.
    spec = { ...spec, model: next, resume: spec.resume || record.sessionCreated };
    const earlier = outcome.usage;
    const more = spent && ((s: Spent) => spent(addSpent(earlier, s)));
    outcome = combineOutcomes(outcome, await attempt(live, engine, spec, sink, more));
  }
  return outcome;
}

/**
 * One engine turn, its tokens counted as the one place both engines pass through
 * (usage_bounds.ts): each response as the engine reports it, and the total it ends with.
 */
async function attempt(
  live: LiveJob,
  engine: Engine,
  spec: TurnSpec,
  sink: TurnSink,
  spent: ((soFar: Spent) => void) | undefined,
): Promise<TurnOutcome> {
  const tokens = new TurnTokens();
  // Once a job: its repair rounds and fallbacks meet the same backend.
  const warn = () => {
    const warnings = live.record.warnings ?? [];
    if (tokens.implausible === undefined || warnings.some((w) => w.startsWith(USAGE_WARNING))) {
      return;
    }
    sink.warning?.(
      `${USAGE_WARNING} (${tokens.implausible}, by the server's estimate); they were counted ` +
        "within what the requests and replies it saw allow",
    );
  };
  const turn = await engine.start(spec, {
    ...sink,
    response: (r) => {
      // What wraps the job's sink hears of it too (job_trace.ts: a span per response).
      sink.response?.(r);
      tokens.add(r);
      warn();
      spent?.(tokens.soFar);
    },
  });
  live.turn = turn;
  if (live.stopReason) void turn.stop(KILL_GRACE_MS);
  let outcome: TurnOutcome;
  try {
    outcome = await turn.done;
  } finally {
    if (live.turn === turn) delete live.turn;
  }
  const total = tokens.total(outcome.usage);
  warn();
  // A turn stopped before its engine reported a total (a budget, a cancel) still counts the
  // responses it had; a total below them does not undo them.
  const seen = tokens.soFar;
  if (tokensOf(seen) === 0 || (total && tokensOf(total) >= tokensOf(seen))) {
    return { ...outcome, ...(total ? { usage: total } : {}) };
  }
  return {
    ...outcome,
    usage: { ...seen, numTurns: total?.numTurns ?? 0, durationMs: total?.durationMs ?? 0 },
  };
}

/** Two outcomes as one: the later one's answer, the usage and denials of both. */
export function combineOutcomes(a: TurnOutcome, b: TurnOutcome): TurnOutcome {
  const usage = sumUsage(a.usage, b.usage);
  return {
    ...b,
    ...(usage ? { usage } : {}),
    permissionDenials: [...a.permissionDenials, ...b.permissionDenials],
  };
}

export function sumUsage(a: Usage | undefined, b: Usage | undefined): Usage | undefined {
  if (!a || !b) return a ?? b;
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheReadTokens: a.cacheReadTokens + b.cacheReadTokens,
    cacheCreationTokens: a.cacheCreationTokens + b.cacheCreationTokens,
    numTurns: a.numTurns + b.numTurns,
    durationMs: a.durationMs + b.durationMs,
  };
}
