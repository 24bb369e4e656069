/**
 * A job's worktree in words, the same for the MCP reply and the terminal: where it is, its
 * branch, what changed against the base and how to take it.
 */
import { escapeLine, quotePath } from "../platform/plain_text.ts";
import type { JobRecord } from "./record.ts";
import { takeCommands } from "./worktree_turn.ts";

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
  if (!wt.head) return rows;
  const stat = (wt.diffStat ?? "").split("\n").filter((l) => l.trim() !== "");
  if (stat.length === 0) {
    rows.push(["changes", "none: the branch holds nothing beyond its base"]);
    return rows;
  }
  const shown = stat.length > STAT_LINES + 1
    ? [...stat.slice(0, STAT_LINES), `... ${stat.length - 1 - STAT_LINES} more files`, stat.at(-1)!]
    : stat;
  rows.push(["changes", shown.map((l) => l.trim()).join("\n")]);
  if (wt.patch) rows.push(["patch", quotePath(wt.patch)]);
  rows.push(["take it", takeCommands(wt).join("\n")]);
  return rows;
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
