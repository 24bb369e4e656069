/** What both engines' verifications share: a command not run, and its note in a transcript. */
import { formatElapsed } from "../platform/duration.ts";
import { quoteBlock } from "../platform/plain_text.ts";
import type { CheckRun, VerifySpec } from "./types.ts";

/** What of a command's output its transcript note shows. */
const NOTE_CHARS = 2_000;

/** Output kept of one verification command: its last this many characters. */
export const VERIFY_KEEP_CHARS = 20_000;

/** A command that was not run, and why. */
export function refusedRun(command: string, reason: string): CheckRun {
  return {
    command,
    exitCode: null,
    signal: null,
    durationMs: 0,
    timedOut: false,
    refused: reason,
    output: "",
    droppedChars: 0,
  };
}

/** The transcript's note of one command, marked as the server's and not the model's. */
export function noteOf(spec: Pick<VerifySpec, "round">, run: CheckRun): string {
  const head = `[verify ${spec.round}, run by the server] $ ${run.command}`;
  if (run.refused) return `${head}\nnot run: ${run.refused}`;
  const how = run.timedOut
    ? "timed out"
    : run.exitCode === null
    ? `killed by ${run.signal ?? "a signal"}`
    : `exit ${run.exitCode}`;
  const tail = run.output.length > NOTE_CHARS ? `…${run.output.slice(-NOTE_CHARS)}` : run.output;
  // Quoted line by line: the output is the delegate's program's, and must not pass for a
  // note of the server's (`[verify 2, run by the server] $ ...`).
  const output = tail === "" ? "" : `\n${quoteBlock(tail)}`;
  return `${head}\n${how} after ${formatElapsed(run.durationMs)}${output}`;
}
