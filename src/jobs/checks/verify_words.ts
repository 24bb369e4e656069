/**
 * A job's verification in words, as both front ends print it: the suffix of its state, its
 * `verify:` line (and one line per earlier round), its mark in lists, and the tail of the
 * failing command's output.
 */
import { isTerminal, type JobRecord } from "../record.ts";
import { checkLine, failingRun } from "./verify_text.ts";
import type { ChangedCheck } from "./check_watch.ts";
import { quotePath } from "../../platform/plain_text.ts";

/** Changed files of the check a `verify:` line names; past it they are counted. */
const SHOWN = 5;

const changedFiles = (v: ChangedCheck) => (v.changedCheck?.length ?? 0) + (v.changedCheckMore ?? 0);

/**
 * What the delegate changed of what the check runs, after the verdict:
 * `; the delegate changed what the check runs: test.js, package.json "scripts"`, and why it
 * may have unseen.
 */
export function changedText(v: ChangedCheck | undefined): string {
  if (!v) return "";
  const files = v.changedCheck ?? [];
  const total = changedFiles(v);
  let text = "";
  if (total > 0) {
    const shown = files.slice(0, SHOWN).map((f) =>
      `${quotePath(f.path)}${f.part ? ` "${f.part}"` : ""}${f.turn ? ` (turn ${f.turn})` : ""}`
    );
    const more = total > shown.length ? `, +${total - shown.length} more` : "";
    text += `; the delegate changed what the check runs: ${shown.join(", ")}${more}`;
  }
  if (v.changedCheckUnknown) {
    text += `; it may have changed what the check runs unseen (${v.changedCheckUnknown})`;
  }
  return text;
}

/**
 * `verified`, `verify failed`, `not verified` for an ended job whose check never ran (also one
 * that ended before the server could record that, as when the server stopped while the turn
 * was still being stopped), or undefined for a job without a check. A pass of a check whose
 * files the delegate changed is no verification of its work: `passed a changed check`, without
 * the word a script may look for.
 */
export function verifyMark(r: JobRecord): string | undefined {
  if (!isTerminal(r.state)) return undefined;
  switch (r.verification?.verdict) {
    case "passed":
      return changedFiles(r.verification!) ? "passed a changed check" : "verified";
    case "failed":
      return "verify failed";
    default:
      return r.checks?.verify?.length ? "not verified" : undefined;
  }
}

/** The state as the summary shows it: `completed (verified)`, `failed (verify failed)`. */
export function stateWithVerdict(r: JobRecord, state: string): string {
  const mark = verifyMark(r);
  return mark ? `${state} (${mark})` : state;
}

/** `[label, value]` pairs: the `verify` row, then one per earlier check (`round 1`). */
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
      "verify",
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
    "verify",
    `${checkLine(last)}${after}${stopped}${running}${confined}${changedText(v)}`,
  ]];
  rounds.slice(0, -1).forEach((round, i) => out.push([`round ${i + 1}`, checkLine(round)]));
  return out;
}

/**
 * The end of the failing command's output, for a reply: its command, the tail the record
 * keeps (`quoted`: output of the command, which the reply marks as such) or why there is none.
 * Undefined unless the last check failed.
 */
export function failedOutput(
  r: JobRecord,
): { head: string; text: string; quoted: boolean } | undefined {
  const last = r.verification?.rounds.at(-1);
  if (!last || last.passed) return undefined;
  const run = failingRun(last.runs) ?? last.runs.at(-1);
  if (!run) return undefined;
  if (run.refused) return { head: run.command, text: `not run: ${run.refused}`, quoted: false };
  if (run.tail === undefined) return { head: run.command, text: "(no output)", quoted: false };
  return { head: run.command, text: run.tail, quoted: true };
}
