/**
 * What a native turn ends with: its outcome from the loop's result (the answer, the usage, the
 * refused calls), or from the error that ended the loop (a cancel, a request that cannot fit
 * the model's context, or the backend's failure, worded by failures.ts).
 */
import { failedTurn, type TurnOutcome } from "../types.ts";
import { ContextOverflowError } from "./context/budget.ts";
import { EndpointsDownError } from "./endpoint_failover.ts";
import { type BackendNaming, endpointFailure, statusOf } from "./failures.ts";
import { withRepairNote } from "./context/history.ts";
import type { LoopResult } from "./loop.ts";

/** The outcome of a loop that ran to its end; `started` is when the turn began (ms). */
export function loopOutcome(
  result: LoopResult,
  repair: string | undefined,
  started: number,
): TurnOutcome {
  return {
    ok: result.ok,
    resultText: withRepairNote(result.text, repair),
    ...(result.errorText ? { errorText: result.errorText } : {}),
    usage: {
      inputTokens: result.inputTokens,
      outputTokens: result.outputTokens,
      cacheReadTokens: 0,
      cacheCreationTokens: 0,
      numTurns: result.turns,
      durationMs: Math.round(performance.now() - started),
    },
    exitCode: null,
    signal: null,
    permissionDenials: result.denials,
  };
}

/** The outcome of a loop that threw `e`; `aborted` when the job was cancelled or timed out. */
export function loopFailure(
  e: unknown,
  aborted: boolean,
  backend: BackendNaming,
  model: string,
): TurnOutcome {
  if (aborted) return failedTurn("Stopped before the model answered");
  if (e instanceof ContextOverflowError) return failedTurn(e.failure);
  if (e instanceof EndpointsDownError) {
    return { ...failedTurn(e.message), ...(e.failure ? { failure: e.failure } : {}) };
  }
  return failedTurn(endpointFailure(e, backend, model), statusOf(e));
}
