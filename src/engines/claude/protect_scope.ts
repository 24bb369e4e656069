/**
 * What a claude turn, and the verification after it, must not read or write: the server's own
 * directories, with the job's own worktree carved out of the state dir when the turn works in
 * it.
 */
import { realpath } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { TurnSpec } from "../types.ts";
import {
  commonGitDir,
  isServerWorktree,
  protectAround,
  WORKTREES_DIR,
} from "../../guard/worktree_scope.ts";
import { worktreeFileRules } from "./file_rules.ts";

export interface ProtectScope {
  protect: string[];
  extraRules: string[];
  readOnly: string[];
  hiddenExcept?: { dir: string; keep: string };
}

export interface ProtectConfig {
  protect?: readonly string[];
  claudeConfigDir: string;
  stateDir?: string;
}

export async function protectScope(
  config: ProtectConfig,
  spec: Pick<TurnSpec, "cwd" | "worktree">,
): Promise<ProtectScope> {
  const listed = [...(config.protect ?? []), config.claudeConfigDir];
  const stateDir = config.stateDir;
  const worktreesDir = stateDir && join(stateDir, WORKTREES_DIR);
  const cwd = await realpath(spec.cwd).catch(() => spec.cwd);
  if (!stateDir || !spec.worktree || !isServerWorktree(cwd, spec.worktree, worktreesDir)) {
    return { protect: listed, extraRules: [], readOnly: [] };
  }
  const real = (p: string) => realpath(p).catch(() => p);
  const keep = await real(spec.worktree.path);
  const gitCommon = await real(commonGitDir(spec.worktree));
  return {
    // The worktree's own git dir lies below it: its HEAD and commondir steer the server's
    // commits, so they stay read-only like the rest.
    readOnly: [gitCommon, await real(spec.worktree.gitDir)],
    hiddenExcept: { dir: await real(stateDir), keep },
    protect: protectAround(await Promise.all(listed.map(real)), keep),
    extraRules: worktreeFileRules({
      stateDir: await real(stateDir),
      checkout: dirname(gitCommon),
      worktree: keep,
    }),
  };
}
