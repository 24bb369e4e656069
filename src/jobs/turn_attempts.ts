/**
 * One round's engine turn, and the attempts it may take: when the backend fails in a way another
 * model may not (429, 5xx, unreachable, the prompt past the context), a job with `fallback`
 * models (an agent's) moves to the next one and runs the turn again, and says so.
 */
import type { Engine, TurnOutcome, TurnSink, TurnSpec, Usage } from "../engines/types.ts";
import { flattenLine } from "../platform/plain_text.ts";
import { KILL_GRACE_MS, type LiveJob } from "./live_job.ts";
import type { JobStore } from "./store.ts";

/** The failure a fallback model may not have, or undefined (the job does not move). */
export function fallbackReason(outcome: TurnOutcome): string | undefined {
  if (outcome.ok) return undefined;
  const text = outcome.errorText ?? "";
  const status = outcome.apiErrorStatus;
  if (/^(backend_unreachable|context_overflow):/.test(text)) return text;
  if (status === 429 || (status !== undefined && status >= 500 && status <= 599)) {
    return text !== "" ? text : `HTTP ${status}`;
  }
  return undefined;
}

/**
 * Runs a turn on the job's model and, while it fails for its backend and the job has fallback
 * models left, on the next one. Stoppable through `live.turn` while it runs.
 */
export async function runTurn(
  live: LiveJob,
  engine: Engine,
  spec: TurnSpec,
  sink: TurnSink,
  store?: JobStore,
): Promise<TurnOutcome> {
  const record = live.record;
  let outcome = await attempt(live, engine, spec, sink);
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
    outcome = combined(outcome, await attempt(live, engine, spec, sink));
  }
  return outcome;
}

async function attempt(
  live: LiveJob,
  engine: Engine,
  spec: TurnSpec,
  sink: TurnSink,
): Promise<TurnOutcome> {
  const turn = await engine.start(spec, sink);
  live.turn = turn;
  if (live.stopReason) void turn.stop(KILL_GRACE_MS);
  try {
    return await turn.done;
  } finally {
    if (live.turn === turn) delete live.turn;
  }
}

/** Two outcomes as one: the later one's answer, the usage and denials of both. */
export function combined(a: TurnOutcome, b: TurnOutcome): TurnOutcome {
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
