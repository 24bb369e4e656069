/**
 * A delegate's own git worktree: made from the user's HEAD on a new branch under the state
 * directory (never inside the user's checkout), committed by the server after each turn
 * (delegates cannot write `.git`), summed up as a diff and a patch, and removed when its
 * jobs are pruned. Every command goes through git.ts, which keeps what the delegate wrote
 * from running anything on the host.
 */
import {
  copyFile,
  lstat,
  mkdir,
  readFile,
  readlink,
  realpath,
  stat,
  symlink,
} from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { HOST_RUN_PATHS } from "../engines/protected_paths.ts";
import { DELEGATE_AUTHOR, emptiedFilters, git, GitError } from "./git.ts";

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

const author = [`user.name=${DELEGATE_AUTHOR.name}`, `user.email=${DELEGATE_AUTHOR.email}`];

/**
 * How the server runs git in a worktree: its git dir named, so that a rewritten `.git` file
 * is not followed, and only once its `commondir` still leads to the repository (git follows
 * that file even when GIT_COMMON_DIR is set, and a config it led to could run commands).
 * Delegates cannot write either place; this holds should that ever change.
 */
async function pinned(wt: Required<WorktreeRef>) {
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

/**
 * Makes the worktree at `ref.path` on the new branch `ref.branch` from the repository's HEAD.
 * With `includeUncommitted`, the user's uncommitted changes (tracked, and untracked files that
 * are not ignored) are copied in and committed first. The user's checkout is only read.
 * Returns the ref with its git directory and base commit.
 */
export async function createWorktree(
  ref: WorktreeRef,
  includeUncommitted: boolean,
): Promise<Required<WorktreeRef>> {
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
  const made = { repo, path, branch, gitDir, base: head.stdout.trim() };
  if (includeUncommitted) {
    await carryUncommitted(repo, made);
    made.base = await commitAll(made, `uncommitted changes of ${repo} at start`) ?? made.base;
  }
  return made;
}

/** Copies the checkout's uncommitted changes into the worktree (not yet committed). */
async function carryUncommitted(repo: string, wt: Required<WorktreeRef>): Promise<void> {
  const diff = await git(
    ["diff", "HEAD", "--binary", "--no-textconv", "--no-ext-diff", "--ignore-submodules=all"],
    { cwd: repo },
  );
  if (diff.stdout.trim() !== "") {
    await git(["apply", "--binary", "--whitespace=nowarn", "-"], {
      ...await pinned(wt),
      stdin: new TextEncoder().encode(diff.stdout),
    });
  }
  const others = await git(["ls-files", "--others", "--exclude-standard", "-z"], { cwd: repo });
  for (const rel of others.stdout.split("\0").filter((p) => p !== "")) {
    const from = join(repo, rel);
    const to = join(wt.path, rel);
    const info = await lstat(from).catch(() => undefined);
    if (!info || !(info.isFile() || info.isSymbolicLink())) continue;
    await mkdir(dirname(to), { recursive: true });
    if (info.isSymbolicLink()) await symlink(await readlink(from), to);
    else await copyFile(from, to);
  }
}

/**
 * Commits everything changed in the worktree to its branch, as the server; returns the new
 * commit, or undefined when nothing changed. Host-run paths are left out: delegates cannot
 * write them, so what is there are the sandbox's empty mount points.
 */
export async function commitAll(
  wt: Required<WorktreeRef>,
  message: string,
): Promise<string | undefined> {
  const run = await pinned(wt);
  const config = [...await emptiedFilters(wt.gitDir, wt.path), ...author];
  const skip = HOST_RUN_PATHS.filter((n) => n !== ".git").map((n) => `:(top,exclude)${n}`);
  // The worktree's HEAD says which branch a commit goes to: it must still be the job's own.
  const head = await git(["symbolic-ref", "-q", "HEAD"], { ...run, okCodes: [1] });
  if (head.stdout.trim() !== `refs/heads/${wt.branch}`) {
    throw new GitError(
      [],
      null,
      "",
      `the worktree's HEAD no longer names branch ${wt.branch} ` +
        `(it is "${head.stdout.trim() || "detached"}"); nothing was committed`,
    );
  }
  await git(["add", "-A", "--", ".", ...skip], { ...run, config });
  const staged = await git(["diff", "--cached", "--quiet", "--no-ext-diff"], {
    ...run,
    config,
    okCodes: [1],
  });
  if (staged.code === 0) return undefined;
  await git(["commit", "--no-verify", "-q", "-m", message], { ...run, config });
  return (await git(["rev-parse", "HEAD"], run)).stdout.trim();
}

/** What a worktree holds beyond its base: the `--stat` text and the patch written to a file. */
export async function summarize(
  wt: Required<WorktreeRef>,
  patchPath: string,
): Promise<{ head: string; diffStat: string }> {
  const run = await pinned(wt);
  const head = (await git(["rev-parse", "HEAD"], run)).stdout.trim();
  const flags = ["--no-textconv", "--no-ext-diff", "--no-color"];
  const stat = await git(["diff", "--stat=100", ...flags, wt.base, head], run);
  await git(["diff", "--binary", ...flags, `--output=${patchPath}`, wt.base, head], run);
  return { head, diffStat: stat.stdout.trimEnd() };
}

/** Why a worktree cannot take another turn (gone, locked, or changed since), or undefined. */
export async function unusableReason(wt: Required<WorktreeRef>): Promise<string | undefined> {
  if (!(await isDir(wt.path))) {
    return `its worktree "${wt.path}" no longer exists. Start a new task; the work so far is ` +
      `on branch ${wt.branch}`;
  }
  if (await isFile(join(wt.gitDir, "locked"))) {
    return `its worktree "${wt.path}" is locked (git worktree lock). Unlock it with ` +
      `git -C "${wt.repo}" worktree unlock "${wt.path}", then follow up again`;
  }
  const status = await git(["status", "--porcelain", "--untracked-files=all"], {
    ...await pinned(wt),
    config: await emptiedFilters(wt.gitDir, wt.path),
  });
  if (status.stdout.trim() !== "") {
    return `its worktree "${wt.path}" has changes that no turn committed (${
      status.stdout.trim().split("\n").length
    } paths). Commit or discard them there (git -C "${wt.path}" status), then follow up again`;
  }
  return undefined;
}

/** What removing a worktree did, in words for the person who pruned it. */
export interface RemovedWorktree {
  path: string;
  branch: string;
  /** Commit of changes that no turn had committed (a turn whose server died). */
  rescued?: string;
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
    const rescued = await commitAll(wt, `uncommitted work of ${label}, saved at removal`);
    if (rescued) out.rescued = rescued;
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
  return out;
}

async function isDir(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isDirectory() ?? false;
}

async function isFile(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isFile() ?? false;
}
