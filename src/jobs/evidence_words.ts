/**
 * A job's evidence in words, as both front ends print it (the replies' `commands:` and
 * `files:` lines, the `commands` and `changed` rows of `jobs show`): every command the server
 * saw run, each with its exit code, and the files the job's turns changed, from what the
 * server observed rather than the model's account. Commands and file names are the delegate's
 * text: each is escaped onto the line (platform/plain_text.ts) before it is cut.
 */
import { cutTo } from "../platform/text_cut.ts";
import { join, relative } from "node:path";
import { escapeLine, quotePath } from "../platform/plain_text.ts";
import type { JobRecord } from "./record.ts";

type CommandRun = NonNullable<JobRecord["commands"]>[number];

/** Commands listed in order, at most; past them only the ones that did not end well. */
export const COMMANDS_SHOWN = 5;
/** Of the commands past COMMANDS_SHOWN, those that did not end well named, at most. */
const LATER_SHOWN = 5;
/** A command's characters shown; longer ones end in `…`. */
const COMMAND_CHARS = 60;
/** Masked failures named beside the command that hid them; the rest are counted. */
const MASKED_SHOWN = 2;
/** Changed files named on a line; the rest are counted. */
const FILES_SHOWN = 10;

/**
 * `3 run, 1 failed: npm test (exit 2), npm run lint (exit 0), ls (exit 0)`: the counts first
 * (what failed stands out there, and a script may read them), then every command in the order
 * it ran with how it ended, the first COMMANDS_SHOWN of them, then `+K more` and, among those,
 * each that failed, hid a failure, was refused or has no exit code, so that a failure is never
 * in the part left out. A masked failure is one a later command's exit code hid
 * (`npm test | tee log`): `(exit 0; masked exit 1: npm test)`.
 */
export function commandsText(commands: readonly CommandRun[]): string {
  const refused = commands.filter((c) => c.refused !== undefined);
  const ran = commands.filter((c) => c.refused === undefined);
  const failed = ran.filter((c) => c.exitCode !== 0);
  const masked = ran.reduce((n, c) => n + (c.masked?.length ?? 0) + (c.maskedMore ?? 0), 0);
  const counts = [`${ran.length} run`];
  if (failed.length > 0) counts.push(`${failed.length} failed`);
  if (masked > 0) counts.push(`${masked} masked failure${masked === 1 ? "" : "s"}`);
  if (refused.length > 0) counts.push(`${refused.length} refused`);
  const list = commands.slice(0, COMMANDS_SHOWN).map(commandText);
  const rest = commands.slice(COMMANDS_SHOWN);
  if (rest.length > 0) {
    const notClean = rest.filter((c) => !clean(c));
    const named = notClean.slice(0, LATER_SHOWN).map(commandText);
    if (notClean.length > LATER_SHOWN) named.push("…");
    list.push(`+${rest.length} more${named.length > 0 ? `, among them: ${named.join(", ")}` : ""}`);
  }
  return `${counts.join(", ")}: ${list.join(", ")}`;
}

/** Ran, exited 0 and hid no failure. */
const clean = (c: CommandRun) =>
  c.refused === undefined && c.exitCode === 0 && !c.masked?.length && !c.maskedMore;

/** `npm test (exit 2)`, `sleep 100 (no exit code)`, `rm -rf / (refused)`. */
function commandText(c: CommandRun): string {
  const how = c.refused !== undefined
    ? "refused"
    : c.exitCode !== null
    ? `exit ${c.exitCode}`
    : c.signal
    ? `signal ${c.signal}`
    : "no exit code";
  const hidden = c.masked ?? [];
  const hiddenMore = Math.max(0, hidden.length - MASKED_SHOWN) + (c.maskedMore ?? 0);
  const maskedText = hidden.length + (c.maskedMore ?? 0) > 0
    ? `; masked ${
      hidden.slice(0, MASKED_SHOWN).map((m) => `exit ${m.exitCode}: ${cut(m.command, 40)}`)
        .join(", ")
    }${hiddenMore > 0 ? `, +${hiddenMore} more` : ""}`
    : "";
  return `${cut(c.command, COMMAND_CHARS)} (${how}${maskedText})`;
}

/**
 * `2 changed: src/a.ts, src/a.test.ts`, and why the list may be incomplete when it may be
 * (`; incomplete: ...`); `none` when the server looked for every change the job's turns could
 * make and found none; undefined when it did not look (a turn that could change nothing, or
 * one that ended before the look): no line rather than a "none" nobody checked.
 */
export function filesText(r: JobRecord): string | undefined {
  const named = r.changedFiles ?? [];
  const total = named.length + (r.changedFilesMore ?? 0);
  const partial = r.changedFilesPartial ? `incomplete: ${r.changedFilesPartial}` : undefined;
  if (total === 0) {
    if (partial) return `none seen; ${partial}`;
    return r.changesTracked ? "none" : undefined;
  }
  const base = r.worktree ? join(r.worktree.path, relative(r.worktree.repo, r.cwd)) : r.cwd;
  const shown = named.slice(0, FILES_SHOWN).map((f) => quotePath(relativeTo(f, base)));
  const more = total > FILES_SHOWN ? `, +${total - FILES_SHOWN} more` : "";
  return `${total} changed: ${shown.join(", ")}${more}${partial ? `; ${partial}` : ""}`;
}

function relativeTo(path: string, cwd: string): string {
  return path.startsWith(cwd + "/") ? path.slice(cwd.length + 1) : path;
}

/** A command escaped on one line (its line breaks shown), then cut to `max`. */
function cut(text: string, max: number): string {
  return cutTo(escapeLine(text.trim()), max);
}
