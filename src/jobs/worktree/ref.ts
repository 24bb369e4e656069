/**
 * Where a delegate's worktree is (as the job record keeps it), and how the server runs git
 * there: with the worktree's own git dir named, and only while that still leads to the
 * repository. The other worktree modules run git in a worktree only through `pinned`.
 */
import { readFile, realpath } from "node:fs/promises";
import { join, resolve } from "node:path";
import { GitError } from "../../platform/git.ts";

/** Where a worktree is, as the job record keeps it. */
export interface WorktreeRef {
  /** The top level of the user's checkout the worktree was made from. */
  repo: string;
  path: string;
  branch: string;
  /** The worktree's own git directory, in the repository's `.git/worktrees/`. */
  gitDir?: string;
  /** The commit the delegate's work starts from: HEAD, or the commit of carried changes. */
  base?: string;
}

/**
 * How the server runs git in a worktree: its git dir named, so that a rewritten `.git` file
 * is not followed, and only once its `commondir` still leads to the repository (git follows
 * that file even when GIT_COMMON_DIR is set, and a config it led to could run commands).
 * Delegates cannot write either place; this holds should that ever change.
 */
export async function gitInWorktree(wt: Required<WorktreeRef>) {
  const common = join(wt.gitDir, "..", "..");
  const named = (await readFile(join(wt.gitDir, "commondir"), "utf8").catch(() => "")).trim();
  const real = (p: string) => realpath(p).catch(() => p);
  if (named === "" || (await real(resolve(wt.gitDir, named))) !== (await real(common))) {
    throw new GitError(
      [],
      null,
      "",
      `the worktree's git dir "${wt.gitDir}" no longer points at its repository (commondir ` +
        `is "${named}"); git was not run there`,
    );
  }
  return { cwd: wt.path, gitDir: wt.gitDir, commonDir: common, workTree: wt.path };
}
