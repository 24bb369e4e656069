/**
 * The user's uncommitted changes carried into a new worktree (include_uncommitted): tracked
 * changes applied as a patch, untracked files copied without following a symlink at any step,
 * and links copied as links. Host-run paths and secret files (policy.ts) are left in
 * the checkout, tracked or not: the delegate would read them and the branch would hold them.
 * The user's checkout is only read.
 */
import { constants } from "node:fs";
import { lstat, mkdir, open, readlink, realpath, symlink } from "node:fs/promises";
import { dirname, join } from "node:path";
import { errorMessage } from "../../errors.ts";
import { openBeneath } from "../../platform/open_beneath/open_beneath.ts";
import { quotePath } from "../../platform/plain_text.ts";
import { git } from "../../platform/git.ts";
import { type LeftOut, leftOutKind, notCarriedNote } from "./policy.ts";
import { gitInWorktree, type WorktreeRef } from "./ref.ts";

/**
 * Copies the checkout's uncommitted changes into the worktree (not yet committed); returns
 * notes on untracked entries it did not copy. Another delegate may be working in the
 * checkout, so an untracked file is read through a descriptor opened without following a
 * symlink at any step: one swapped in after the listing is skipped, never followed to a
 * file elsewhere (whose bytes would land in this worktree, for this delegate to read).
 */
export async function carryUncommitted(
  repo: string,
  wt: Required<WorktreeRef>,
  allowSecretFiles: readonly string[] = [],
): Promise<string[]> {
  const notes: string[] = [];
  const leftOut: LeftOut[] = [];
  const keep = (rel: string) => {
    const kind = leftOutKind(rel, allowSecretFiles);
    if (kind) leftOut.push({ path: rel, kind });
    return kind === undefined;
  };
  const diff = await git(
    [
      "diff",
      "HEAD",
      "--binary",
      "--no-renames",
      "--no-textconv",
      "--no-ext-diff",
      "--ignore-submodules=all",
    ],
    { cwd: repo },
  );
  if (diff.stdout.trim() !== "") {
    const patch = new TextEncoder().encode(diff.stdout);
    const run = await gitInWorktree(wt);
    // The files this very patch changes (the checkout may change meanwhile), each kept or
    // left out by name: a left-out file's changed bytes never reach the worktree.
    const listed = await git(["apply", "--numstat", "-z", "-"], { ...run, stdin: patch });
    const files = listed.stdout.split("\0").filter((e) => e !== "").map((e) =>
      e.split("\t").slice(2).join("\t")
    );
    const excluded = files.filter((p) => !keep(p)).map((p) => `--exclude=${literalGlob(p)}`);
    await git(["apply", "--binary", "--whitespace=nowarn", ...excluded, "-"], {
      ...run,
      stdin: patch,
    });
  }
  const others = await git(["ls-files", "--others", "--exclude-standard", "-z"], { cwd: repo });
  const root = await realpath(repo);
  for (const rel of others.stdout.split("\0").filter((p) => p !== "")) {
    const skipped = (why: string) => notes.push(`not carried over: ${quotePath(rel)} (${why})`);
    // git lists a repository inside the checkout as `sub/`, without its files.
    if (rel.endsWith("/")) {
      skipped("a git repository of its own; the server never commits one");
      continue;
    }
    if (!keep(rel)) continue;
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
  const note = notCarriedNote(leftOut);
  return note ? [note, ...notes] : notes;
}

/** `path` as a git wildmatch pattern that matches only itself. */
function literalGlob(path: string): string {
  return path.replace(/[\\*?[\]]/g, "\\$&");
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
