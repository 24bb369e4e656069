/**
 * A verification's evidence in the forms the job keeps and passes on: the record's round (the
 * tail of each command's output), the full log in the job folder, what a failure says about
 * itself ("4 failing"), whether two failures are the same, and the prompt of a repair round.
 */
import { formatElapsed } from "../../platform/duration.ts";
import type { CheckResult } from "../../engines/types.ts";
import type { JobRecord } from "../record.ts";

export type CheckRound = NonNullable<JobRecord["verification"]>["rounds"][number];
type KeptRun = CheckRound["runs"][number];

/** The tail of a command's output the record keeps (shown in replies). */
export const RECORD_TAIL_CHARS = 1_500;
/**
 * The failing output a repair prompt carries at most: about 1,000 tokens, so that it fits
 * beside the conversation in a local model loaded with Ollama's default 4,096-token context.
 */
export const REPAIR_OUTPUT_CHARS = 4_000;

const tailOf = (text: string, max: number) =>
  text.length > max ? `…${text.slice(text.length - max + 1)}` : text;

/** A check as the record keeps it. */
export function keptRound(check: CheckResult): CheckRound {
  return {
    passed: check.passed,
    runs: check.runs.map((r): KeptRun => ({
      command: r.command,
      exitCode: r.exitCode,
      signal: r.signal,
      durationMs: r.durationMs,
      ...(r.timedOut ? { timedOut: true } : {}),
      ...(r.refused ? { refused: r.refused } : {}),
      ...(r.output !== "" ? { tail: tailOf(r.output, RECORD_TAIL_CHARS) } : {}),
    })),
  };
}

/** The log file of a check, in the job folder: every command with all the output kept. */
export function checkLog(round: number, check: CheckResult): string {
  const parts = [
    `verification ${round}: ${check.passed ? "passed" : "failed"}` +
    (check.confinement ? ` (${check.confinement})` : ""),
  ];
  for (const r of check.runs) {
    parts.push(`\n$ ${r.command}\n${runResult(r)}`);
    if (r.droppedChars > 0) parts.push(`[the first ${r.droppedChars} characters were dropped]`);
    if (r.output !== "") parts.push(r.output);
  }
  return parts.join("\n") + "\n";
}

/** `exit 1, 4.2s`, `timed out after 600.0s`, `not run: ...`. */
export function runResult(
  r: Pick<KeptRun, "exitCode" | "signal" | "durationMs" | "timedOut" | "refused">,
): string {
  if (r.refused) return `not run: ${r.refused}`;
  const seconds = formatElapsed(r.durationMs);
  if (r.timedOut) return `timed out after ${seconds}`;
  if (r.exitCode === null) return `killed by ${r.signal ?? "a signal"} after ${seconds}`;
  return `exit ${r.exitCode}, ${seconds}`;
}

/** The run that decided a failed check: the first that did not exit 0. */
export function failingRun<R extends Pick<KeptRun, "exitCode">>(runs: readonly R[]): R | undefined {
  return runs.find((r) => r.exitCode !== 0);
}

/**
 * What a test runner's own summary says failed: "4 failing" (mocha), "4 failed" (jest, deno,
 * pytest, vitest), "4 failures" (rspec, minitest), "4 errors". The last such count wins: a
 * summary comes last. Undefined when the output says none.
 */
export function failingCount(output: string): string | undefined {
  const re = /\b(\d+)\s+(failing|failed|failures?|errors?)\b/gi;
  let last: RegExpExecArray | undefined;
  for (let m = re.exec(output); m; m = re.exec(output)) {
    if (m[1] !== "0") last = m;
  }
  return last ? `${last[1]} ${last[2]!.toLowerCase()}` : undefined;
}

/**
 * What makes two failures the same failure: the command, its end and its output with what
 * changes from run to run (durations, clock times, addresses) taken out.
 */
export function failureKey(round: CheckRound): string {
  const run = failingRun(round.runs);
  if (!run) return "";
  const output = (run.tail ?? "")
    .replace(/\b\d+(\.\d+)?\s*(ms|s|sec|seconds|µs|us|ns|m)\b/g, "#t")
    .replace(/\(\d+(\.\d+)?m?s\)/g, "(#t)")
    .replace(/\b\d{1,2}:\d{2}:\d{2}(\.\d+)?\b/g, "#clock")
    .replace(/\b0x[0-9a-f]+\b/gi, "#addr")
    .replace(/\/tmp\/[^\s/]+/g, "/tmp/#");
  return `${run.command}\0${run.exitCode}\0${run.signal ?? ""}\0${run.refused ?? ""}\0${output}`;
}

/**
 * The message of a repair round: what the server ran, how it ended, the end of its output
 * (trimmed to REPAIR_OUTPUT_CHARS), and what the delegate must do about it.
 */
export function repairPrompt(
  check: CheckResult,
  repair: number,
  maxRepairs: number,
): string {
  const run = failingRun(check.runs) ?? check.runs.at(-1);
  const lines = [
    `The server ran the verification after your turn, and it failed (repair round ${repair} ` +
    `of at most ${maxRepairs}):`,
    "",
  ];
  if (run) {
    lines.push(`$ ${run.command}`, runResult(run));
    if (run.output !== "") {
      lines.push("The end of its output:", "```", tailOf(run.output, REPAIR_OUTPUT_CHARS), "```");
    }
  }
  lines.push(
    "",
    "Find the cause and fix it, then run the check yourself. Do not change, skip or weaken " +
      "the check itself (its command, its tests or their configuration) to make it pass. End " +
      "with a short report of what you changed.",
  );
  return lines.join("\n");
}

/** `passed (npm test: exit 0, 12.3s)`, `failed (npm test: exit 1, 4.2s, 4 failing)`. */
export function checkLine(round: NonNullable<JobRecord["verification"]>["rounds"][number]): string {
  const run = round.passed ? round.runs.at(-1) : failingRun(round.runs) ?? round.runs.at(-1);
  if (!run) return round.passed ? "passed" : "failed";
  const failing = round.passed ? undefined : failingCount(run.tail ?? "");
  const what = `${run.command}: ${runResult(run)}${failing ? `, ${failing}` : ""}`;
  const more = round.passed && round.runs.length > 1 ? ` and ${round.runs.length - 1} more` : "";
  return `${round.passed ? "passed" : "failed"} (${what}${more})`;
}
