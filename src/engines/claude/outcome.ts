/**
 * What a Claude Code turn ends with: its outcome from the stream's result event and the exit
 * status, a turn failed before its child started, a turn whose prompt Ollama cut (judged
 * by context_check.ts) failed although Claude Code reported success, and a turn that ended on
 * a tool call the model wrote as text, which Claude Code did not run.
 */
import type { TurnFailure } from "../backend_failures.ts";
import { TOOL_CALL_UNPARSED } from "../text_calls/types.ts";
import { unrunCall } from "../text_calls/unrun_call.ts";
import { failedTurn, type RunningTurn, type TurnOutcome, type TurnSink } from "../types.ts";
import type { judgeTurn } from "./context_check.ts";
import type { ResultEvent } from "./stream.ts";

/** Exit 0 without a result event is a failure: the run did not finish. */
export function outcomeOf(
  result: ResultEvent | undefined,
  exitCode: number | null,
  signal: string | null,
  stderrTail: string,
): TurnOutcome {
  const base = { exitCode, signal, permissionDenials: result?.permissionDenials ?? [] };
  if (result) {
    const ok = !result.isError && exitCode === 0;
    const outcome: TurnOutcome = {
      ...base,
      ok,
      resultText: result.text,
      usage: result.usage,
      ...(result.apiErrorStatus !== undefined ? { apiErrorStatus: result.apiErrorStatus } : {}),
    };
    if (!ok) {
      outcome.errorText = result.isError
        ? (result.errors.join("; ") || result.text || `Claude Code reported ${result.subtype}`)
        : exitText(exitCode, signal, stderrTail);
    }
    return outcome;
  }
  return {
    ...base,
    ok: false,
    resultText: "",
    errorText: exitCode === 0
      ? "Claude Code exited without a result event; the run did not finish"
      : exitText(exitCode, signal, stderrTail),
  };
}

function exitText(code: number | null, signal: string | null, stderrTail: string): string {
  const tail = stderrTail.trim();
  if (tail) return tail;
  return signal ? `claude was ended by ${signal}` : `claude exited with code ${code}`;
}

/**
 * A turn whose prompts Ollama cut fails: the model answered without all of its instructions,
 * tools or task, so its answer is no result. What it said stays as partial output beside the
 * warning. A turn whose requests only reached the loaded context keeps its state, with the
 * warning beside it.
 */
export function applyContextVerdict(
  outcome: TurnOutcome,
  verdict: NonNullable<ReturnType<typeof judgeTurn>>,
  sink: TurnSink,
): TurnOutcome {
  sink.warning?.(verdict.warning);
  if (verdict.kind !== "cut" || !outcome.ok) return outcome;
  const cut = failedTurn({
    kind: "context_overflow",
    text: "Ollama cut this job's prompt to fit the model's context (see the warning); what " +
      "the model answered was written without the whole of it",
  });
  return { ...outcome, ok: false, errorText: cut.errorText, failure: cut.failure };
}

/**
 * A turn whose answer is a tool call written as text fails, with a warning: Claude Code runs
 * only structured `tool_use` blocks, so a local model that writes its call as text
 * (ollama/ollama#15529) ends the turn "successfully" with the call as its answer and nothing
 * done. The native engine reads such calls and runs them; the warning says how to switch.
 * `tools` are the turn's tools, which formats without markers must name.
 */
export function withUnrunCall(
  outcome: TurnOutcome,
  tools: readonly string[],
  sink: TurnSink,
): TurnOutcome {
  if (!outcome.ok) return outcome;
  const what = unrunCall(outcome.resultText, tools);
  if (!what) return outcome;
  sink.warning?.(
    `the model wrote a tool call as text (${what}); Claude Code runs only structured tool ` +
      `calls, so it did not run and the turn ended on it. The native engine runs such calls: ` +
      `start the job again with engine: "native" (or make it the default: ollama-delegate ` +
      `config --engine native)`,
  );
  return {
    ...outcome,
    ok: false,
    errorText: `${TOOL_CALL_UNPARSED}: the turn ended on a tool call the model wrote as text, ` +
      "which Claude Code does not run (see the warning); what came after it was never done",
  };
}

/** A turn that failed before Claude Code started: nothing runs, nothing to stop. */
export function failedStart(error: string | TurnFailure): RunningTurn {
  return { done: Promise.resolve(failedTurn(error)), stop: () => Promise.resolve() };
}
