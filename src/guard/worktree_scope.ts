/**
 * A job in its own git worktree works in `<stateDir>/.worktrees/<session id>`, inside the
 * state directory that every delegate is otherwise kept out of. The engines accept that
 * directory as a working directory only because the server made it there for this job, and
 * keep the rest of the state directory (other jobs' records, other worktrees) protected.
 */
import { readdirSync, realpathSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { isInside } from "../platform/path_inside.ts";

/** A session id (a UUID): the only name the server gives a worktree's folder. */
const SESSION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The state dir's folder of job worktrees. */
export const WORKTREES_DIR = ".worktrees";

/** What a turn in a worktree tells its engine (from the job record, which the server owns). */
export interface TurnWorktree {
  /** The worktree's top level. */
  path: string;
  /** Its git directory, `<repository>/.git/worktrees/<name>`. */
  gitDir: string;
}

/**
 * Whether the real path `cwd` lies in the worktree the server made for this turn: the turn
 * names it, and it is `<worktreesDir>/<session id>` exactly (real paths compared).
 */
export function isServerWorktree(
  cwd: string,
  worktree: TurnWorktree | undefined,
  worktreesDir: string | undefined,
): boolean {
  if (!worktree || !worktreesDir) return false;
  let top: string;
  let dir: string;
  try {
    top = realpathSync(worktree.path);
    dir = realpathSync(worktreesDir);
  } catch {
    return false;
  }
  const rel = relative(dir, top);
  return SESSION_ID.test(rel) && isInside(top, cwd);
}

/** The repository's common git directory, which git inside the worktree reads. */
export function commonGitDir(worktree: TurnWorktree): string {
  return join(worktree.gitDir, "..", "..");
}

/**
 * `protect` with the worktree carved out: a protected directory that holds it is replaced by
 * its entries, level by level down to the worktree, except the worktree's own path. Entries
 * created later are not in the list; they lie outside the job's directories, which is what
 * keeps the file tools and the native sandbox away from them.
 */
export function protectAround(protect: readonly string[], keep: string): string[] {
  const out: string[] = [];
  for (const p of protect) {
    if (p === keep || !isInside(p, keep)) {
      if (p !== keep) out.push(p);
      continue;
    }
    let dir = p;
    for (const step of relative(p, keep).split(sep)) {
      let names: string[] = [];
      try {
        names = readdirSync(dir);
      } catch {
        // Missing: nothing in it to protect.
      }
      for (const name of names) if (name !== step) out.push(join(dir, name));
      dir = join(dir, step);
    }
  }
  return [...new Set(out)];
}
