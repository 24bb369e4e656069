/**
 * The server's commits in a delegate's worktree (delegates cannot write `.git`): everything
 * the delegate changed goes to the job's branch, made by the server with hooks, fsmonitor and
 * filter drivers off, and only while the worktree's HEAD still names that branch.
 *
 * A repository the delegate makes inside its worktree (`git init sub`) is never staged: as a
 * gitlink it would make `git status` there, ours or Claude Code's own at a follow-up's start,
 * descend into it and read its config, which is the delegate's and may name a filter that
 * runs on the host. Its files stay in the worktree and the turn says they were not committed.
 * Nor is a host-run path or a secret file at any depth (policy.ts): staged with the
 * rest, each is unstaged again before the commit, and stays in the worktree.
 */
import { join } from "node:path";
import { HOST_RUN_PATHS } from "../../guard/protected_paths.ts";
import { quotePath } from "../../platform/plain_text.ts";
import { emptiedFilters, git, GitError } from "../../platform/git.ts";
import { type LeftOut, leftOutKind } from "./policy.ts";
import { gitInWorktree, type WorktreeRef } from "./ref.ts";

/** The server's own identity for the commits it makes: works without any user git config. */
const DELEGATE_AUTHOR = { name: "ollama-delegate", email: "delegate@localhost" };
const author = [`user.name=${DELEGATE_AUTHOR.name}`, `user.email=${DELEGATE_AUTHOR.email}`];

/** The note for a repository inside a worktree that was left out of its branch. */
export function notCommittedNote(path: string, worktree: string, how: string): string {
  return `not committed: ${quotePath(`${path}/`)} is a git repository of its own (${how}); the ` +
    `server never commits one (git would read its config, which may run programs on the ` +
    `host). Its files stay in ${quotePath(join(worktree, path))}, not on the branch`;
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
  /** Changed host-run paths and secret files, left out (sorted by path). */
  leftOut: LeftOut[];
}

/**
 * Commits everything changed in the worktree to its branch, as the server. Host-run paths
 * at the top are not even staged: delegates cannot write them there, so what is there are
 * the sandbox's empty mount points. Below the top a delegate can make them (`sub/.claude/`,
 * `docs/CLAUDE.md`), and with secret files (by the file tools' read policy and
 * `allowSecretFiles`) they are unstaged again and reported. So are repositories inside the
 * worktree, and no gitlink is ever committed: one git staged anyway (a repository made while
 * this ran) is unstaged again. Should any of these still be staged after that, nothing is
 * committed (an error).
 */
export async function commitChanges(
  wt: Required<WorktreeRef>,
  message: string,
  allowSecretFiles: readonly string[] = [],
): Promise<Committed> {
  const run = await gitInWorktree(wt);
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
  const unwanted = (entries: Staged[]) => {
    const links = entries.filter((e) => e.mode === GITLINK).map((e) => e.path);
    const leftOut = entries.flatMap(({ path }) => {
      const kind = leftOutKind(path, allowSecretFiles);
      return kind ? [{ path, kind }] : [];
    });
    return { links, leftOut };
  };
  const first = unwanted(await stagedEntries(run, config));
  const unstage = [...new Set([...first.links, ...first.leftOut.map((l) => l.path)])];
  if (unstage.length > 0) {
    await git(["reset", "-q", "--no-refresh", "--pathspec-from-file=-", "--pathspec-file-nul"], {
      ...run,
      config,
      stdin: nulList(unstage.map((p) => `:(top,literal)${p}`)),
    });
    const left = unwanted(await stagedEntries(run, config));
    if (left.links.length > 0 || left.leftOut.length > 0) {
      const named = [...left.links, ...left.leftOut.map((l) => l.path)].join(", ");
      throw new GitError(
        [],
        null,
        "",
        `${named} stayed staged (a git repository of its own, a host-run path or a secret ` +
          `file), which the server never commits; nothing was committed`,
      );
    }
  }
  const notCommitted = [...new Set([...embedded, ...first.links])].sort();
  const leftOut = first.leftOut.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const staged = await git(
    ["diff", "--cached", "--quiet", "--no-ext-diff", "--ignore-submodules=none"],
    { ...run, config, okCodes: [1] },
  );
  if (staged.code === 0) return { notCommitted, leftOut };
  await git(["commit", "--no-verify", "-q", "-m", message], { ...run, config });
  return { commit: (await git(["rev-parse", "HEAD"], run)).stdout.trim(), notCommitted, leftOut };
}

const nulList = (items: readonly string[]) => new TextEncoder().encode(items.join("\0"));

/**
 * Directories below the worktree's top that git takes for repositories of their own, as
 * `git add -A` would find them: its listing of untracked paths names each as `sub/` rather
 * than listing its files. (A `.git` inside a directory git already tracks is not one: git
 * adds that directory's files one by one and never a `.git`.)
 */
async function embeddedRepos(
  run: Awaited<ReturnType<typeof gitInWorktree>>,
  config: readonly string[],
): Promise<string[]> {
  const out = await git(["ls-files", "--others", "--exclude-standard", "-z"], { ...run, config });
  return out.stdout.split("\0").filter((p) => p.endsWith("/")).map((p) => p.slice(0, -1));
}

const GITLINK = "160000";

/** A staged change against HEAD: its path and new mode (`000000` when deleted). */
interface Staged {
  path: string;
  mode: string;
}

/**
 * What the index changes against HEAD, path by path. Index against HEAD only: no work tree,
 * so no repository inside it, is read.
 */
async function stagedEntries(
  run: Awaited<ReturnType<typeof gitInWorktree>>,
  config: readonly string[],
): Promise<Staged[]> {
  const out = await git(
    ["diff", "--cached", "--raw", "-z", "--no-abbrev", "--no-renames", "--ignore-submodules=none"],
    { ...run, config },
  );
  const parts = out.stdout.split("\0");
  const entries: Staged[] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) {
    // ":<old mode> <new mode> <old id> <new id> <status>", then the path.
    entries.push({ path: parts[i + 1]!, mode: parts[i]!.split(" ")[1]! });
  }
  return entries;
}
