/**
 * What `jobs tail` prints of a job's activity: one line (or a few) per event of the job's
 * activity file, and the call that runs now on the live status line. Everything in an event is
 * the delegate's or its backend's, and goes to a terminal: escaped, so that it cannot clear
 * the screen, retitle the window or write lines that pass for the console's own.
 */
import { cutTo } from "../../platform/text_cut.ts";
import type { LiveEvent } from "../../engines/types.ts";
import { escapeBlock, escapeLine, flattenLine } from "../../platform/plain_text.ts";
import { humanDuration } from "./common.ts";

const TEXT_SHOWN = 2000;
/** A line of a running command's output, at most. */
const OUTPUT_SHOWN = 500;
/** A running call's detail on the live status line, at most. */
const CALL_SHOWN = 50;
/**
 * A call running this long without output, on an engine that shows none while it runs, gets
 * a note on the status line that its output comes at its end.
 */
const QUIET_NOTE_MS = 5000;

/**
 * A printable line of activity (`said` is the model's own text when the line shows it), or
 * the end of the delegate's run as its engine records it (Claude Code's `result` event).
 */
export type ActivityLine =
  | {
    line: string;
    /** The model's own words, when the line shows them. */
    said?: string;
    /** A running command's output: the call it belongs to is still running. */
    output?: true;
    /** A tool call, in short, for the live status line while it runs. */
    call?: string;
  }
  | { end: true };

/** What `jobs tail` prints for one event of a job's activity file. */
export function activityLine(event: LiveEvent): ActivityLine {
  switch (event.kind) {
    case "init":
      return {
        line: `[init] session started` + (event.model ? `, model ${escapeLine(event.model)}` : "") +
          (event.permissionMode ? `, permission ${escapeLine(event.permissionMode)}` : ""),
      };
    case "tool":
      return {
        line: `[tool] ${flat(event.name, 80)}${event.detail ? `: ${flat(event.detail, 300)}` : ""}`,
        call: `${flat(event.name, 20)}${event.detail ? `: ${flat(event.detail, CALL_SHOWN)}` : ""}`,
      };
    case "text":
      return { line: labelled("[text]", event.text), said: event.text };
    case "error":
      return { line: `[error] ${flat(event.text, 300)}` };
    case "result":
      return { line: `[result] ${flat(event.text, 300)}` };
    case "output":
      return { line: outputLines(event.text), output: true };
    case "end":
      return { end: true };
  }
}

/**
 * A running command's output, one `[output]` line per line of it, each escaped and cut. Of a
 * line a progress bar rewrote with CR, what a terminal would show: the text after the last CR.
 */
function outputLines(text: string): string {
  const lines = text.endsWith("\n") ? text.slice(0, -1).split("\n") : text.split("\n");
  return lines.map((raw) => {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    const shown = escapeLine(line.slice(line.lastIndexOf("\r") + 1));
    const cut = cutTo(shown, OUTPUT_SHOWN);
    return cut === "" ? "[output]" : `[output] ${cut}`;
  }).join("\n");
}

/** Turns one line of a job's activity file into printable lines, with its engine's reader. */
export function activityLinesOf(
  read: (line: string) => LiveEvent[],
  line: string,
): ActivityLine[] {
  if (line.trim() === "") return [];
  return read(line).map(activityLine);
}

function flat(text: string, max: number): string {
  return cutTo(flattenLine(text), max);
}

/** A label followed by multi-line text, later lines indented under the first. */
function labelled(label: string, text: string): string {
  const cut = escapeBlock(text.length > TEXT_SHOWN ? `${text.slice(0, TEXT_SHOWN)}…` : text);
  return `${label} ${cut.trim().split("\n").join(`\n${" ".repeat(label.length + 1)}`)}`;
}

/**
 * The status line with the call running now: `... · Bash: npm test for 12.0s`, the call cut
 * to fit `width` before anything else. On an engine that shows a command's output only at its
 * end (Claude Code's stream), a call quiet for a while says so, lest it look hung.
 */
export function withCall(
  status: string,
  r: { call: string; since?: number; output: boolean },
  showsOutput: boolean,
  width: number,
): string {
  const ms = r.since === undefined ? undefined : Date.now() - r.since;
  const quiet = !showsOutput && !r.output && ms !== undefined && ms >= QUIET_NOTE_MS;
  const after = (ms === undefined ? "" : ` for ${humanDuration(ms)}`) +
    (quiet ? " (output shows when it ends)" : "");
  const room = Math.max(12, width - status.length - 3 - after.length);
  return `${status} · ${cutTo(r.call, room)}${after}`;
}
