/**
 * A job's worktree in words, the same for the MCP reply and the terminal: where it is, its
 * branch, what changed against the base and how to take it.
 */
import { escapeLine, quotePath } from "../../platform/plain_text.ts";
import type { JobRecord } from "../record.ts";
import { takeCommands } from "./turn.ts";

/** Diff stat lines shown; the patch file holds everything. */
const STAT_LINES = 20;

/**
 * `[label, value]` rows; a value may span lines (later lines are to be indented under it).
 * The changes and the commands only once a turn ended and was committed.
 */
export function worktreeRows(r: JobRecord): Array<[string, string]> {
  const wt = r.worktree;
  if (!wt) return [];
  const base = wt.base
    ? ` (base ${wt.base.slice(0, 10)}${
      wt.includeUncommitted ? ": HEAD plus your uncommitted changes" : ""
    })`
    : " (made when the job starts)";
  const rows: Array<[string, string]> = [
    ["worktree", quotePath(wt.path)],
    ["branch", wt.branch + base],
  ];
  // The base commit is on the branch too: a merge brings it in with the delegate's changes.
  if (wt.carried && wt.base) {
    rows.push([
      "base",
      `${wt.base.slice(0, 10)}, the branch's first commit, on your HEAD ` +
      `${wt.carried.from.slice(0, 10)}: your uncommitted changes, carried over (not the ` +
      "delegate's; merging the branch brings them in too)\n" + statText(wt.carried.stat),
    ]);
  }
  if (!wt.head) return rows;
  const stat = statText(wt.diffStat ?? "");
  if (stat === "") {
    rows.push(["changes", "none: the branch holds nothing beyond its base"]);
    return rows;
  }
  rows.push(["changes", stat]);
  if (wt.patch) rows.push(["patch", quotePath(wt.patch)]);
  rows.push(["take it", takeCommands(wt).join("\n")]);
  return rows;
}

/** A `--stat` text, trimmed, at most STAT_LINES files and its summary line. */
function statText(text: string): string {
  const stat = text.split("\n").filter((l) => l.trim() !== "");
  const shown = stat.length > STAT_LINES + 1
    ? [...stat.slice(0, STAT_LINES), `... ${stat.length - 1 - STAT_LINES} more files`, stat.at(-1)!]
    : stat;
  return shown.map((l) => l.trim()).join("\n");
}

/**
 * The rows as text: labels padded to `width`, continuation lines indented to match, each line
 * escaped (git quotes the names in its diff stat, but the checkout's own path is the user's).
 */
export function worktreeText(r: JobRecord, width: number, label = (l: string) => l): string[] {
  return worktreeRows(r).map(([name, value]) =>
    value.split("\n").map((v, i) =>
      (i === 0 ? label(name).padEnd(width) : " ".repeat(width)) + escapeLine(v)
    ).join("\n")
  );
}
