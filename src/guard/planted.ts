/**
 * Host-run paths at the top of a delegate's directories that did not exist when a command
 * started and do when it ends: moved out of the project at once, into a folder of the
 * server's, and named in the reply. For the names the host acts on only at a user's later
 * step (direnv and mise ask for trust, hook managers run at the next commit, Claude Code reads
 * a project's CLAUDE.md when a session starts), that keeps the protection of a placeholder
 * mounted there beforehand, without the placeholder: a delegate's `ls` then shows the
 * project's own files, not a dozen empty ones named after config files it cannot read
 * (issue 18, item 4). Nothing is deleted: what was there is kept where the reply says.
 */
import { lstatSync, mkdirSync, readdirSync, renameSync, rmdirSync } from "node:fs";
import { basename, join } from "node:path";
import process from "node:process";
import { HOST_RUN_PATHS } from "./protected_paths.ts";

/** The top-level host-run paths of `roots` that are missing now. */
export function missingHostRun(roots: readonly string[], names = HOST_RUN_PATHS): string[] {
  const out: string[] = [];
  for (const root of roots) {
    for (const name of names) {
      const path = join(root, name);
      if (!exists(path)) out.push(path);
    }
  }
  return out;
}

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** A planted path and where it went (or why it could not be moved). */
export interface Quarantined {
  path: string;
  movedTo?: string;
  /** Why it is still there (another file system, a permission): the reply says so. */
  stuck?: string;
}

const instance = crypto.getRandomValues(new Uint32Array(1))[0]!;
let counter = 0;

/**
 * Moves each of `missing` that exists now into `folder` (created), under a unique name.
 * A rename moves what the path is, file, folder or link, without following links and
 * without reading it; a move across file systems is not attempted (it would copy): the path
 * then stays, and the result says why.
 */
export function quarantinePlanted(
  missing: readonly string[],
  folder: string,
): Quarantined[] {
  const out: Quarantined[] = [];
  for (const path of missing) {
    if (!exists(path)) continue;
    const target = join(
      folder,
      `${Date.now()}-${process.pid}-${instance}${++counter}-${basename(path)}`,
    );
    try {
      mkdirSync(folder, { recursive: true, mode: 0o700 });
      renameSync(path, target);
      out.push({ path, movedTo: target });
    } catch (e) {
      const code = (e as { code?: string }).code ?? (e as Error).message;
      out.push({ path, stuck: code === "EXDEV" ? "it lies on another file system" : code });
    }
  }
  return out;
}

/** The reply's words for what was moved: one line, paths as the caller shows them. */
export function quarantineText(done: readonly Quarantined[], show: (p: string) => string): string {
  const moved = done.filter((q) => q.movedTo).map((q) => `${show(q.path)} (kept at ${q.movedTo})`);
  const stuck = done.filter((q) => q.stuck).map((q) => `${show(q.path)} (${q.stuck})`);
  return [
    ...(moved.length > 0
      ? [
        `moved out of the project: ${moved.join(", ")}: git, coding agents, package managers, ` +
        "direnv, mise or commit hooks run or trust these on the host, so delegates may not " +
        "create them",
      ]
      : []),
    ...(stuck.length > 0
      ? [`could not move: ${stuck.join(", ")}: check them before working in that folder`]
      : []),
  ].join("; ");
}

/**
 * Claude Code's own trace in a project: with its sandbox on it makes `.claude/.cc-writes`, an
 * empty folder. When `.claude` did not exist before the turn and holds nothing else now, both
 * are removed, so that a job leaves nothing in the project it was not asked to make; anything
 * else in them is left for quarantinePlanted to move and name.
 */
export function removeClaudeTrace(root: string, missingBefore: readonly string[]): void {
  const dir = join(root, ".claude");
  if (!missingBefore.includes(dir)) return;
  try {
    const names = readdirSync(dir);
    if (names.length !== 1 || names[0] !== ".cc-writes") return;
    rmdirSync(join(dir, ".cc-writes"));
    rmdirSync(dir);
  } catch {
    // Not Claude Code's empty trace (or gone): quarantinePlanted deals with it.
  }
}
