/**
 * A job's worktree across its turns: planned when the session starts, made (or checked) when
 * a turn starts, committed and summed up when it ends, carried to follow-ups.
 */
import { join, relative } from "node:path";
import { errorMessage } from "../../errors.ts";
import { WORKTREES_DIR } from "../../guard/worktree_scope.ts";
import type { JobRecord } from "../record.ts";
import type { JobStore } from "../store.ts";
import { createWorktree, summarize, unusableReason } from "./worktree.ts";
import { commitChanges, notCommittedNote } from "./commit.ts";
import { notCommittedFilesNote } from "./policy.ts";
import type { WorktreeRef } from "./ref.ts";

export type JobWorktree = NonNullable<JobRecord["worktree"]>;

/** The patch of what a job's branch holds beyond its base, in the job folder. */
export const PATCH_FILE = "changes.patch";

/** Where a session's worktree goes and its branch's name (`delegate/<short session id>`). */
export function plannedWorktree(
  stateDir: string,
  sessionId: string,
  repo: string,
  includeUncommitted: boolean,
  allowSecretFiles: readonly string[] = [],
): JobWorktree {
  return {
    repo,
    path: join(stateDir, WORKTREES_DIR, sessionId.toLowerCase()),
    branch: `delegate/${sessionId.slice(0, 8).toLowerCase()}`,
    ...(includeUncommitted ? { includeUncommitted: true } : {}),
    ...(allowSecretFiles.length > 0 ? { allowSecretFiles: [...allowSecretFiles] } : {}),
  };
}

/** What a follow-up inherits: where the worktree is, not the last turn's results. */
export function carriedWorktree(previous: JobWorktree): JobWorktree {
  const { diffStat: _d, patch: _p, head: _h, leftOut: _l, ...kept } = previous;
  return kept;
}

function made(wt: JobWorktree): Required<WorktreeRef> | undefined {
  return wt.gitDir && wt.base
    ? { repo: wt.repo, path: wt.path, branch: wt.branch, gitDir: wt.gitDir, base: wt.base }
    : undefined;
}

/**
 * Makes the session's worktree at its first turn, or checks that a follow-up can use it.
 * Returns the directory the turn works in: the worktree, at the place of the job's cwd in
 * the checkout. Throws with a reason a job error can carry.
 */
export async function prepareWorktree(record: JobRecord, store: JobStore): Promise<string> {
  const wt = record.worktree!;
  const ready = made(wt);
  if (ready) {
    const reason = await unusableReason(ready, wt.allowSecretFiles);
    if (reason) throw new Error(reason);
  } else {
    let created;
    try {
      created = await createWorktree(wt, wt.includeUncommitted === true, wt.allowSecretFiles);
    } catch (e) {
      throw new Error(`cannot make a worktree of "${wt.repo}": ${errorMessage(e)}`, { cause: e });
    }
    wt.gitDir = created.gitDir;
    wt.base = created.base;
    if (created.carried) wt.carried = created.carried;
    if (created.notes.length > 0) (record.warnings ??= []).push(...created.notes);
    await store.write(record);
  }
  return join(wt.path, relative(wt.repo, record.cwd));
}

/**
 * Commits what the turn changed to the branch and writes the patch and diff stat into the
 * record. A failure is a warning on the job, never a lost change: the files stay in the
 * worktree.
 */
export async function finishWorktree(record: JobRecord, store: JobStore): Promise<void> {
  const wt = record.worktree;
  const ready = wt && made(wt);
  if (!wt || !ready) return;
  try {
    const preview = record.promptPreview.split("\n")[0]!.slice(0, 72);
    const done = await commitChanges(
      ready,
      `ollama-delegate job ${record.id}, turn ${record.turn} (${record.state})\n\n${preview}`,
      wt.allowSecretFiles,
    );
    for (const path of done.notCommitted) {
      (record.warnings ??= []).push(notCommittedNote(path, wt.path, "the delegate made it"));
    }
    if (done.leftOut.length > 0) {
      (record.warnings ??= []).push(notCommittedFilesNote(done.leftOut, wt.path));
    }
    const leftOut = [...done.notCommitted.map((p) => `${p}/`), ...done.leftOut.map((l) => l.path)];
    if (leftOut.length > 0) wt.leftOut = leftOut.sort();
    else delete wt.leftOut;
    const patch = join(store.dirOf(record.id), PATCH_FILE);
    const { head, diffStat } = await summarize(ready, patch);
    Object.assign(wt, { head, diffStat, patch });
  } catch (e) {
    (record.warnings ??= []).push(
      `cannot commit the turn's changes to ${wt.branch} (${errorMessage(e)}); they are still ` +
        `in the worktree ${wt.path}`,
    );
  }
}

/**
 * Why the patch comes first after include_uncommitted: git refuses a cherry-pick or a merge
 * that would overwrite a file with uncommitted changes ("Your local changes to the following
 * files would be overwritten"), and the delegate most often changed the very files the user
 * was working on; `git apply` patches the working tree as it is.
 */
const APPLY_FIRST = "# your checkout still has the uncommitted changes this branch started " +
  "from: apply adds only the delegate's changes on top of them (cherry-pick and merge stop " +
  "at files with uncommitted changes)";

/**
 * The commands that take a job's work into the checkout, for the person reading its result:
 * merge or cherry-pick the branch, or apply the patch. When the branch's first commit holds
 * carried changes (which the checkout still has uncommitted) the patch comes first, after a
 * line that says why, and the merge says it brings that commit in too. When the turn left files out of the branch, a
 * comment line comes first, so nobody takes the branch believing it holds everything.
 */
export function takeCommands(wt: JobWorktree): string[] {
  const repo = JSON.stringify(wt.repo);
  const merge = `git -C ${repo} merge ${wt.branch}`;
  const pick = `git -C ${repo} cherry-pick ${wt.base ?? "<base>"}..${wt.branch}`;
  const apply = wt.patch ? [`git -C ${repo} apply ${JSON.stringify(wt.patch)}`] : [];
  const out = wt.carried
    ? [
      ...(apply.length > 0 ? [APPLY_FIRST] : []),
      ...apply,
      pick,
      `${merge}   # also brings in the base commit (your uncommitted changes)`,
    ]
    : [merge, pick, ...apply];
  const left = wt.leftOut ?? [];
  if (left.length > 0) {
    const shown = left.slice(0, 5).join(", ") + (left.length > 5 ? ` (+${left.length - 5})` : "");
    const see = '(see the "not committed" warnings)';
    out.unshift(`# not on the branch, so none of these bring them in: ${shown} ${see}`);
  }
  return out;
}
