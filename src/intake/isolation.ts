/**
 * A call's `isolation` and `include_uncommitted`, checked before the job exists: a worktree
 * needs a git checkout to be made from, and must never land inside it.
 */
import { realpath } from "node:fs/promises";
import { join, relative } from "node:path";
import { DelegateError } from "../errors.ts";
import { WORKTREES_DIR } from "../guard/worktree_scope.ts";
import { findCheckout } from "../jobs/worktree/worktree.ts";
import type { Isolation } from "../settings/types.ts";

/** The checkout a job's worktree is made from, or undefined for isolation "none". */
export async function worktreeRequest(
  isolation: Isolation,
  includeUncommitted: boolean | undefined,
  cwd: string,
  stateDir: string,
): Promise<{ repo: string; includeUncommitted: boolean } | undefined> {
  if (isolation !== "worktree") {
    if (includeUncommitted) {
      throw new DelegateError(
        'Cannot use include_uncommitted without isolation "worktree": it says what the ' +
          'worktree starts with. Pass isolation: "worktree" too, or leave it out',
      );
    }
    return undefined;
  }
  const repo = await findCheckout(cwd);
  if (repo === undefined) {
    throw new DelegateError(
      `Cannot use isolation "worktree": cwd "${cwd}" is not in a git repository (no .git in ` +
        `it or above it), and a worktree is made from one. Pass a cwd inside a repository, ` +
        `or isolation "none"`,
    );
  }
  const worktrees = join(await realpath(stateDir).catch(() => stateDir), WORKTREES_DIR);
  const rel = relative(repo, worktrees);
  if (rel === "" || (!rel.startsWith("..") && !rel.startsWith("/"))) {
    throw new DelegateError(
      `Cannot use isolation "worktree": the state directory "${stateDir}" lies inside the ` +
        `repository "${repo}", and a worktree must never be inside your checkout. The user ` +
        "can move it with `ollama-delegate config --state-dir <dir>`",
    );
  }
  return { repo, includeUncommitted: includeUncommitted === true };
}
