/**
 * A delegate's own git worktree: made from the user's HEAD on a new branch under the state
 * directory (never inside the user's checkout), committed by the server after each turn
 * (delegates cannot write `.git`), summed up as a diff and a patch, and removed when its
 * jobs are pruned. Every command goes through ../git.ts, which keeps what the delegate wrote
 * from running anything on the host.
 *
 * Its parts, in this folder: ref.ts (where it is, how git is run there), carry.ts (the user's
 * uncommitted changes copied in at creation), commit.ts (the server's commits, which never
 * stage a repository the delegate made inside the worktree), policy.ts (the host-run paths
 * and secret files neither carried nor committed); turn.ts follows it across a job's turns,
 * and text.ts puts it in words.
 */
import { lstat, mkdir, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { emptiedFilters, git, GitError } from "../../platform/git.ts";
import { carryUncommitted } from "./carry.ts";
import { commitChanges, notCommittedNote } from "./commit.ts";
import { leftOutKind, notCommittedFilesNote } from "./policy.ts";
import { gitInWorktree, type WorktreeRef } from "./ref.ts";

/** The top level of the git checkout holding `dir`, found without git; undefined outside one. */
export async function findCheckout(dir: string): Promise<string | undefined> {
  let current = dir;
  for (;;) {
    try {
      await lstat(join(current, ".git"));
      return current;
    } catch {
      // Not here: one level up.
    }
    const parent = dirname(current);
    if (parent === current) return undefined;
    current = parent;
  }
}

/** A per-repository line, so that worktrees of one repository are added one at a time. */
const lines = new Map<string, Promise<unknown>>();
function inLine<T>(repo: string, work: () => Promise<T>): Promise<T> {
  const next = (lines.get(repo) ?? Promise.resolve()).catch(() => {}).then(work);
  lines.set(repo, next);
  next.finally(() => lines.get(repo) === next && lines.delete(repo)).catch(() => {});
  return next;
}

/** The commit of carried changes: the checkout's HEAD it sits on, and its `--stat` text. */
export interface Carried {
  from: string;
  stat: string;
}

/**
 * Makes the worktree at `ref.path` on the new branch `ref.branch` from the repository's HEAD.
 * With `includeUncommitted`, the user's uncommitted changes (tracked, and untracked files that
 * are not ignored; never host-run paths nor secret files) are copied in and committed first,
 * as the branch's base commit, described in `carried`. The user's checkout is only read.
 * Returns the ref with its git directory and base commit.
 */
export async function createWorktree(
  ref: WorktreeRef,
  includeUncommitted: boolean,
  allowSecretFiles: readonly string[] = [],
): Promise<Required<WorktreeRef> & { notes: string[]; carried?: Carried }> {
  const { repo, path, branch } = ref;
  const top = (await git(["rev-parse", "--show-toplevel"], { cwd: repo })).stdout.trim();
  if (top === "") throw new GitError([], null, "", `"${repo}" is not a git checkout`);
  const head = await git(["rev-parse", "--verify", "-q", "HEAD^{commit}"], {
    cwd: repo,
    okCodes: [1],
  });
  if (head.code !== 0) {
    throw new GitError([], 1, "", `the repository "${repo}" has no commit yet to branch from`);
  }
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  await inLine(repo, () => git(["worktree", "add", "-b", branch, path, "HEAD"], { cwd: repo }));
  const gitDir = (await git(["rev-parse", "--absolute-git-dir"], { cwd: path })).stdout.trim();
  const from = head.stdout.trim();
  const made: Required<WorktreeRef> & { notes: string[]; carried?: Carried } = {
    repo,
    path,
    branch,
    gitDir,
    base: from,
    notes: [],
  };
  if (includeUncommitted) {
    made.notes.push(...await carryUncommitted(repo, made, allowSecretFiles));
    const carried = await commitChanges(
      made,
      `uncommitted changes of ${repo} at start`,
      allowSecretFiles,
    );
    made.notes.push(
      ...carried.notCommitted.map((p) => notCommittedNote(p, made.path, "made while copying")),
    );
    if (carried.leftOut.length > 0) {
      made.notes.push(notCommittedFilesNote(carried.leftOut, made.path));
    }
    if (carried.commit) {
      made.base = carried.commit;
      const stat = await git(["diff", "--stat=100", ...DIFF_FLAGS, from, carried.commit], {
        ...await gitInWorktree(made),
      });
      made.carried = { from, stat: stat.stdout.trimEnd() };
    }
  }
  return made;
}

/** Diffs show what git stores: no program a delegate's files could name runs. */
const DIFF_FLAGS = ["--no-textconv", "--no-ext-diff", "--no-color", "--ignore-submodules=all"];

/** What a worktree holds beyond its base: the `--stat` text and the patch written to a file. */
export async function summarize(
  wt: Required<WorktreeRef>,
  patchPath: string,
): Promise<{ head: string; diffStat: string }> {
  const run = await gitInWorktree(wt);
  const head = (await git(["rev-parse", "HEAD"], run)).stdout.trim();
  const stat = await git(["diff", "--stat=100", ...DIFF_FLAGS, wt.base, head], run);
  await git(["diff", "--binary", ...DIFF_FLAGS, `--output=${patchPath}`, wt.base, head], run);
  return { head, diffStat: stat.stdout.trimEnd() };
}

/**
 * Why a worktree cannot take another turn (gone, locked, or changed since), or undefined.
 * What the server leaves uncommitted on purpose (and said so) does not count.
 */
export async function unusableReason(
  wt: Required<WorktreeRef>,
  allowSecretFiles: readonly string[] = [],
): Promise<string | undefined> {
  if (!(await isDir(wt.path))) {
    return `its worktree "${wt.path}" no longer exists. Start a new task; the work so far is ` +
      `on branch ${wt.branch}`;
  }
  if (await isFile(join(wt.gitDir, "locked"))) {
    return `its worktree "${wt.path}" is locked (git worktree lock). Unlock it with ` +
      `git -C "${wt.repo}" worktree unlock "${wt.path}", then follow up again`;
  }
  // Never into a repository inside the worktree (its config is the delegate's): only the
  // command-line flag holds, a `.gitmodules` entry overrides the config setting.
  const status = await git(
    ["status", "--porcelain", "-z", "--untracked-files=all", "--ignore-submodules=all"],
    { ...await gitInWorktree(wt), config: await emptiedFilters(wt.gitDir, wt.path) },
  );
  const changed = uncommittedPaths(status.stdout, allowSecretFiles);
  if (changed > 0) {
    return `its worktree "${wt.path}" has changes that no turn committed (${changed} paths). ` +
      `Commit or discard them there (git -C "${wt.path}" status), then follow up again`;
  }
  return undefined;
}

/**
 * Paths in `git status --porcelain -z` output, less repositories inside the worktree
 * (`?? sub/`), host-run paths and secret files: commitChanges leaves those out on purpose and
 * said so when it did.
 */
function uncommittedPaths(porcelain: string, allowSecretFiles: readonly string[]): number {
  const entries = porcelain.split("\0");
  let count = 0;
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!;
    if (entry === "") continue;
    // A rename or copy is followed by its source path.
    if (entry[0] === "R" || entry[0] === "C") i++;
    if (entry.startsWith("?? ") && entry.endsWith("/")) continue;
    if (leftOutKind(entry.slice(3), allowSecretFiles) !== undefined) continue;
    count++;
  }
  return count;
}

/** What removing a worktree did, in words for the person who pruned it. */
export interface RemovedWorktree {
  path: string;
  branch: string;
  /** Commit of changes that no turn had committed (a turn whose server died). */
  rescued?: string;
  /** Repositories inside the worktree: never committed, so removed with it. */
  notKept?: string[];
  /** Host-run paths and secret files: never committed, so removed with it. */
  filesNotKept?: string[];
  branchDeleted: boolean;
  note: string;
}

/**
 * Removes a worktree. What it holds is committed first; the branch stays unless the
 * checkout's HEAD already contains it, and the note says which.
 */
export async function removeWorktree(
  wt: Required<WorktreeRef>,
  label: string,
  allowSecretFiles: readonly string[] = [],
): Promise<RemovedWorktree> {
  const out: RemovedWorktree = { path: wt.path, branch: wt.branch, branchDeleted: false, note: "" };
  if (!(await isDir(wt.repo))) {
    throw new GitError(
      [],
      null,
      "",
      `its repository "${wt.repo}" is gone, so ${wt.path} holds the only copy of the job's ` +
        "work; remove that folder yourself once you no longer need it",
    );
  }
  if (await isDir(wt.path)) {
    const saved = await commitChanges(
      wt,
      `uncommitted work of ${label}, saved at removal`,
      allowSecretFiles,
    );
    if (saved.commit) out.rescued = saved.commit;
    if (saved.notCommitted.length > 0) out.notKept = saved.notCommitted;
    if (saved.leftOut.length > 0) out.filesNotKept = saved.leftOut.map((l) => l.path);
    await inLine(
      wt.repo,
      () => git(["worktree", "remove", "--force", "--force", wt.path], { cwd: wt.repo }),
    );
  } else {
    await git(["worktree", "prune"], { cwd: wt.repo }).catch(() => {});
  }
  const merged = await git(["branch", "--merged", "HEAD", "--list", wt.branch], { cwd: wt.repo });
  if (merged.stdout.trim() !== "") {
    await git(["branch", "-D", wt.branch], { cwd: wt.repo });
    out.branchDeleted = true;
    out.note = `worktree ${wt.path} removed; branch ${wt.branch} deleted (merged into HEAD)`;
  } else {
    out.note = `worktree ${wt.path} removed; branch ${wt.branch} kept (not merged)` +
      (out.rescued ? `, with work no turn had committed (${out.rescued.slice(0, 10)})` : "");
  }
  if (out.notKept) {
    out.note += `; not kept (git repositories of their own inside the worktree, which the ` +
      `server never commits, removed with it): ${out.notKept.map((p) => `${p}/`).join(", ")}`;
  }
  if (out.filesNotKept) {
    out.note += `; not kept (host-run or secret files, which the server never commits, ` +
      `removed with it): ${out.filesNotKept.join(", ")}`;
  }
  return out;
}

async function isDir(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isDirectory() ?? false;
}

async function isFile(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isFile() ?? false;
}
