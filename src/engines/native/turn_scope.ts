/**
 * Where a native turn may work and what it must not touch: its working directory and
 * add_dirs, resolved and judged again against the workdir policy (the native engine makes them
 * writable), and the server's own directories, protected as written and as resolved, with the
 * job's own worktree carved out of the state dir when the turn works in it.
 */
import { realpath } from "node:fs/promises";
import type { TurnSpec } from "../types.ts";
import {
  defaultWorkdirPolicy,
  realContext,
  refusalOf,
  type WorkdirPolicy,
} from "../../guard/workdirs.ts";
import { isServerWorktree, protectAround } from "../../guard/worktree_scope.ts";
import { protectedPaths } from "../../guard/real_paths.ts";

/** The directories of one turn, as real paths. */
export interface TurnScope {
  cwd: string;
  /** cwd first, then add_dirs. */
  roots: string[];
  /** The server's own directories, each as written and as it resolves. */
  protect: string[];
}

export interface TurnScopeConfig {
  workdirs?: WorkdirPolicy;
  worktreesDir?: string;
  protect?: readonly string[];
}

/** What of a turn (or a verification after it) decides its directories. */
export type ScopeRequest = Pick<TurnSpec, "cwd" | "worktree"> & {
  options: { addDirs: readonly string[] };
};

/** The turn's directories, or why one of them is refused (the job's error text). */
export async function turnScope(
  spec: ScopeRequest,
  config: TurnScopeConfig,
): Promise<TurnScope | { refused: string }> {
  const cwd = await realpath(spec.cwd);
  const roots = [cwd, ...(await Promise.all(spec.options.addDirs.map((d) => realpath(d))))];
  // The server checked these already; judged again here because the directories are
  // resolved anew and anything may have changed since (a follow-up, a restart).
  const context = realContext(config.workdirs ?? defaultWorkdirPolicy());
  for (const root of roots) {
    // The server made this worktree for the job, inside its own state dir.
    if (root === cwd && isServerWorktree(cwd, spec.worktree, config.worktreesDir)) continue;
    const refusal = refusalOf(root, context);
    if (refusal) {
      return {
        refused: `Cannot run job: the native engine makes cwd and add_dirs writable, and ` +
          `"${root}" is refused: ${refusal.reason}. Use a project directory`,
      };
    }
  }
  // As written and as resolved, also when missing: a directory created later stays protected.
  const listed = await protectedPaths(config.protect ?? []);
  const worktree = spec.worktree && await realpath(spec.worktree.path);
  const protect = worktree ? protectAround(listed, worktree) : listed;
  return { cwd, roots, protect };
}
