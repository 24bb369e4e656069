/**
 * A delegate's own git worktree: made from the user's HEAD on a new branch under the state
 * directory (never inside the user's checkout), committed by the server after each turn
 * (delegates cannot write `.git`), summed up as a diff and a patch, and removed when its
 * jobs are pruned. Every command goes through git.ts, which keeps what the delegate wrote
 * from running anything on the host.
 *
 * A repository the delegate makes inside its worktree (`git init sub`) is never staged: as a
 * gitlink it would make `git status` there, ours or Claude Code's own at a follow-up's start,
 * descend into it and read its config, which is the delegate's and may name a filter that
 * runs on the host. Its files stay in the worktree and the turn says they were not committed.
 */
import { constants } from "node:fs";
import { lstat, mkdir, open, readFile, readlink, realpath, stat, symlink } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { HOST_RUN_PATHS } from "../engines/protected_paths.ts";
import { errorMessage } from "../errors.ts";
import { openBeneath } from "../platform/beneath.ts";
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
): Promise<Required<WorktreeRef> & { notes: string[] }> {
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
  const made = { repo, path, branch, gitDir, base: head.stdout.trim(), notes: [] as string[] };
  if (includeUncommitted) {
    made.notes.push(...await carryUncommitted(repo, made));
    const carried = await commitChanges(made, `uncommitted changes of ${repo} at start`);
    made.base = carried.commit ?? made.base;
    made.notes.push(
      ...carried.notCommitted.map((p) => notCommittedNote(p, made.path, "made while copying")),
    );
  }
  return made;
}

/** The note for a repository inside a worktree that was left out of its branch. */
export function notCommittedNote(path: string, worktree: string, how: string): string {
  return `not committed: ${path}/ is a git repository of its own (${how}); the server never ` +
    `commits one (git would read its config, which may run programs on the host). Its ` +
    `files stay in ${join(worktree, path)}, not on the branch`;
}

/**
 * Copies the checkout's uncommitted changes into the worktree (not yet committed); returns
 * notes on untracked entries it did not copy. Another delegate may be working in the
 * checkout, so an untracked file is read through a descriptor opened without following a
 * symlink at any step: one swapped in after the listing is skipped, never followed to a
 * file elsewhere (whose bytes would land in this worktree, for this delegate to read).
 */
async function carryUncommitted(repo: string, wt: Required<WorktreeRef>): Promise<string[]> {
  const notes: string[] = [];
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
  const root = await realpath(repo);
  for (const rel of others.stdout.split("\0").filter((p) => p !== "")) {
    const skipped = (why: string) => notes.push(`not carried over: ${rel} (${why})`);
    // git lists a repository inside the checkout as `sub/`, without its files.
    if (rel.endsWith("/")) {
      skipped("a git repository of its own; the server never commits one");
      continue;
    }
    const from = join(root, rel);
    const to = join(wt.path, rel);
    const info = await lstat(from).catch(() => undefined);
    if (!info || !(info.isFile() || info.isSymbolicLink())) {
      if (info) skipped("not a regular file or a symlink");
      continue;
    }
    await mkdir(dirname(to), { recursive: true });
    if (info.isSymbolicLink()) {
      // The link itself, as git would commit it; never the file it names.
      const target = await readlink(from).catch(() => undefined);
      if (target === undefined) skipped("it changed while it was copied");
      else await symlink(target, to);
      continue;
    }
    const why = await copyNoFollow(root, from, to);
    if (why) skipped(why);
  }
  return notes;
}

/**
 * Copies the regular file `from` (beneath `root`) to the new file `to`, neither end
 * following a symlink; returns why it did not, or undefined once copied.
 */
async function copyNoFollow(root: string, from: string, to: string): Promise<string | undefined> {
  let source;
  try {
    source = await openBeneath(from, "read", { roots: [root] });
  } catch (e) {
    return `it could not be read safely: ${errorMessage(e)}`;
  }
  try {
    // A symlink inside the checkout was followed to reach it: not the listed file.
    if (source.real !== from) return "it became a symlink while it was copied";
    const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL |
      (constants.O_NOFOLLOW ?? 0);
    const target = await open(to, flags, source.stats.mode & 0o777);
    try {
      const buffer = new Uint8Array(1024 * 1024);
      for (;;) {
        const { bytesRead } = await source.handle.read(buffer, 0, buffer.length, null);
        if (bytesRead === 0) break;
        await target.write(buffer, 0, bytesRead);
      }
    } finally {
      await target.close();
    }
    return undefined;
  } finally {
    await source.handle.close();
  }
}

/** As commitChanges; returns only the new commit, or undefined when nothing changed. */
export async function commitAll(
  wt: Required<WorktreeRef>,
  message: string,
): Promise<string | undefined> {
  return (await commitChanges(wt, message)).commit;
}

/** What commitChanges did. */
export interface Committed {
  /** The new commit; undefined when nothing changed. */
  commit?: string;
  /** Repositories inside the worktree, left out (relative paths, no trailing `/`). */
  notCommitted: string[];
}

/**
 * Commits everything changed in the worktree to its branch, as the server. Host-run paths
 * are left out: delegates cannot write them, so what is there are the sandbox's empty mount
 * points. So are repositories inside the worktree, and no gitlink is ever committed: one git
 * staged anyway (a repository made while this ran) is unstaged again, and should one still
 * be staged after that, nothing is committed (an error).
 */
export async function commitChanges(
  wt: Required<WorktreeRef>,
  message: string,
): Promise<Committed> {
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
  const embedded = await embeddedRepos(run, config);
  const pathspecs = [".", ...skip, ...embedded.map((p) => `:(top,exclude,literal)${p}`)];
  // From stdin: any number of exclusions, whatever the command line's limit.
  await git(["add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul"], {
    ...run,
    config,
    stdin: nulList(pathspecs),
  });
  const links = await stagedGitlinks(run, config);
  if (links.length > 0) {
    await git(["reset", "-q", "--no-refresh", "--pathspec-from-file=-", "--pathspec-file-nul"], {
      ...run,
      config,
      stdin: nulList(links.map((p) => `:(top,literal)${p}`)),
    });
    const left = await stagedGitlinks(run, config);
    if (left.length > 0) {
      throw new GitError(
        [],
        null,
        "",
        `${left.join(", ")} stayed staged as a git repository of its own (a gitlink), which ` +
          `the server never commits; nothing was committed`,
      );
    }
  }
  const notCommitted = [...new Set([...embedded, ...links])].sort();
  const staged = await git(
    ["diff", "--cached", "--quiet", "--no-ext-diff", "--ignore-submodules=none"],
    { ...run, config, okCodes: [1] },
  );
  if (staged.code === 0) return { notCommitted };
  await git(["commit", "--no-verify", "-q", "-m", message], { ...run, config });
  return { commit: (await git(["rev-parse", "HEAD"], run)).stdout.trim(), notCommitted };
}

const nulList = (items: readonly string[]) => new TextEncoder().encode(items.join("\0"));

/**
 * Directories below the worktree's top that git takes for repositories of their own, as
 * `git add -A` would find them: its listing of untracked paths names each as `sub/` rather
 * than listing its files. (A `.git` inside a directory git already tracks is not one: git
 * adds that directory's files one by one and never a `.git`.)
 */
async function embeddedRepos(
  run: Awaited<ReturnType<typeof pinned>>,
  config: readonly string[],
): Promise<string[]> {
  const out = await git(["ls-files", "--others", "--exclude-standard", "-z"], { ...run, config });
  return out.stdout.split("\0").filter((p) => p.endsWith("/")).map((p) => p.slice(0, -1));
}

/**
 * Paths staged as gitlinks (mode 160000) that HEAD does not hold as they are. Index against
 * HEAD only: no work tree, so no repository inside it, is read.
 */
async function stagedGitlinks(
  run: Awaited<ReturnType<typeof pinned>>,
  config: readonly string[],
): Promise<string[]> {
  const out = await git(
    ["diff", "--cached", "--raw", "-z", "--no-abbrev", "--no-renames", "--ignore-submodules=none"],
    { ...run, config },
  );
  const parts = out.stdout.split("\0");
  const links: string[] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) {
    // ":<old mode> <new mode> <old id> <new id> <status>", then the path.
    if (parts[i]!.split(" ")[1] === "160000") links.push(parts[i + 1]!);
  }
  return links;
}

/** What a worktree holds beyond its base: the `--stat` text and the patch written to a file. */
export async function summarize(
  wt: Required<WorktreeRef>,
  patchPath: string,
): Promise<{ head: string; diffStat: string }> {
  const run = await pinned(wt);
  const head = (await git(["rev-parse", "HEAD"], run)).stdout.trim();
  const flags = ["--no-textconv", "--no-ext-diff", "--no-color", "--ignore-submodules=all"];
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
  // Never into a repository inside the worktree (its config is the delegate's): only the
  // command-line flag holds, a `.gitmodules` entry overrides the config setting.
  const status = await git(
    ["status", "--porcelain", "-z", "--untracked-files=all", "--ignore-submodules=all"],
    { ...await pinned(wt), config: await emptiedFilters(wt.gitDir, wt.path) },
  );
  const changed = uncommittedPaths(status.stdout);
  if (changed > 0) {
    return `its worktree "${wt.path}" has changes that no turn committed (${changed} paths). ` +
      `Commit or discard them there (git -C "${wt.path}" status), then follow up again`;
  }
  return undefined;
}

/**
 * Paths in `git status --porcelain -z` output, less repositories inside the worktree
 * (`?? sub/`): commitChanges leaves those out on purpose and said so when it did.
 */
function uncommittedPaths(porcelain: string): number {
  const entries = porcelain.split("\0");
  let count = 0;
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!;
    if (entry === "") continue;
    // A rename or copy is followed by its source path.
    if (entry[0] === "R" || entry[0] === "C") i++;
    if (entry.startsWith("?? ") && entry.endsWith("/")) continue;
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
    const saved = await commitChanges(wt, `uncommitted work of ${label}, saved at removal`);
    if (saved.commit) out.rescued = saved.commit;
    if (saved.notCommitted.length > 0) out.notKept = saved.notCommitted;
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
  return out;
}

async function isDir(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isDirectory() ?? false;
}

async function isFile(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isFile() ?? false;
}
