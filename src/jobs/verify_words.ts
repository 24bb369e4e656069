/**
 * A job's verification in words, as both front ends print it: the suffix of its state, its
 * `verify:` line (and one line per earlier round), its mark in lists, and the tail of the
 * failing command's output.
 */
import { checkLine } from "./rounds.ts";
import { isTerminal, type JobRecord } from "./record.ts";
import { failingRun } from "./verify_text.ts";

/** `verified`, `verify failed`, or undefined when the job has no verification verdict. */
export function verifyMark(r: JobRecord): string | undefined {
  if (!isTerminal(r.state) || !r.verification) return undefined;
  switch (r.verification.verdict) {
    case "passed":
      return "verified";
    case "failed":
      return "verify failed";
    case "not-run":
      return r.checks?.verify?.length ? "not verified" : undefined;
  }
}

/** The state as the summary shows it: `completed (verified)`, `failed (verify failed)`. */
export function stateWithVerdict(r: JobRecord, state: string): string {
  const mark = verifyMark(r);
  return mark ? `${state} (${mark})` : state;
}

/** `[label, value]` pairs: the `verify:` line, then one per earlier check (`round 1:`). */
export function verifyLines(r: JobRecord): Array<[string, string]> {
  const commands = r.checks?.verify ?? [];
  if (commands.length === 0) return [];
  const v = r.verification;
  const rounds = v?.rounds ?? [];
  const confined = v?.confinement ? ` [${v.confinement}]` : "";
  const last = rounds.at(-1);
  if (!last) {
    const planned = `${commands.join(" && ")}; up to ${r.checks?.verifyRounds ?? 2} repair rounds`;
    return [[
      "verify:",
      isTerminal(r.state)
        ? `not run: ${v?.stopped ?? "the job ended first"}`
        : `pending: ${planned}`,
    ]];
  }
  const repairs = rounds.length - 1;
  const after = repairs > 0 ? `, after ${repairs} repair round${repairs === 1 ? "" : "s"}` : "";
  const stopped = v?.stopped && !last.passed ? `; ${v.stopped}` : "";
  const running = !isTerminal(r.state) && !last.passed ? "; repairing" : "";
  const out: Array<[string, string]> = [[
    "verify:",
    `${checkLine(last)}${after}${stopped}${running}${confined}`,
  ]];
  rounds.slice(0, -1).forEach((round, i) => out.push([`round ${i + 1}:`, checkLine(round)]));
  return out;
}

/**
 * The end of the failing command's output, for a reply: its command, how it ended, the tail
 * the record keeps. Undefined unless the last check failed.
 */
export function failedOutput(r: JobRecord): { head: string; text: string } | undefined {
  const last = r.verification?.rounds.at(-1);
  if (!last || last.passed) return undefined;
  const run = failingRun(last.runs) ?? last.runs.at(-1);
  if (!run) return undefined;
  const text = run.refused ? `not run: ${run.refused}` : run.tail ?? "(no output)";
  return { head: run.command, text };
}
