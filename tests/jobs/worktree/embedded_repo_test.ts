/**
 * A git repository inside a worktree (the delegate ran `git init sub` there, or the user's
 * repository has a submodule): its config is not the user's and may name a filter, which git
 * runs on the host when it descends into that repository (`git status` and `git diff` do, for
 * a gitlink). The server never stages one, never descends into one, and says what it left out.
 * Real git, real files; the "delegate" is this test writing into the worktree.
 */
import { tempDir } from "../../support/harness.ts";
import { committedRepo, git } from "../../support/git_repo.ts";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import {
  createWorktree,
  removeWorktree,
  summarize,
  unusableReason,
} from "../../../src/jobs/worktree/worktree.ts";
import { commitChanges } from "../../../src/jobs/worktree/commit.ts";

/** A repository with one commit (a.txt), its state dir and a marker path beside it. */
function repo(): { repo: string; state: string; marker: string } {
  const top = realpathSync(tempDir("wt-embedded-"));
  const repo = committedRepo(join(top, "repo"), { "a.txt": "one\n" });
  return { repo, state: join(top, "state"), marker: join(top, "PWNED") };
}

const ref = (repo: string, state: string, name = "s1") => ({
  repo,
  path: join(state, ".worktrees", name),
  branch: `delegate/${name}`,
});

/**
 * What a delegate does in `dir`: makes it a repository whose filter writes `marker`, commits
 * a file through it, then changes that file (size too), so that any `git status` or `git
 * diff` reading it must run the filter.
 */
function plantRepo(dir: string, marker: string): void {
  mkdirSync(dir, { recursive: true });
  git(dir, "init", "-q");
  writeFileSync(join(dir, "f.txt"), "hi\n");
  writeFileSync(join(dir, ".gitattributes"), "* filter=x\n");
  git(dir, "add", "-A");
  git(dir, "commit", "-qm", "x");
  git(dir, "config", "filter.x.clean", `touch ${marker}; cat`);
  writeFileSync(join(dir, "f.txt"), "changed by the delegate\n");
}

const ran = (marker: string) =>
  existsSync(marker) ? `the embedded repository's filter ran on the host` : undefined;

Deno.test("embedded repo: a repository the delegate made is not committed, not descended into, and named", async () => {
  const { repo: r, state, marker } = repo();
  const wt = await createWorktree(ref(r, state), false);
  plantRepo(join(wt.path, "sub"), marker);
  writeFileSync(join(wt.path, "ok.txt"), "ordinary work\n");

  // A turn's end, and the next turn's check, as the server runs them.
  const first = await commitChanges(wt, "turn 1");
  const { diffStat } = await summarize(wt, join(state, "p.patch"));
  writeFileSync(join(wt.path, "sub", "f.txt"), "changed again, longer than before\n");
  const unusable = await unusableReason(wt);
  assert.equal(ran(marker), undefined);
  assert.deepEqual(first.notCommitted, ["sub"]);
  assert.ok(first.commit);
  assert.equal(git(r, "ls-tree", "-r", "--name-only", "delegate/s1"), "a.txt\nok.txt\n");
  assert.match(diffStat, /ok\.txt/);
  assert.doesNotMatch(diffStat + readFileSync(join(state, "p.patch"), "utf8"), /sub/);
  // The repository left out is no stray change that would stop a follow-up.
  assert.equal(unusable, undefined);
  // Its files are still there, untouched.
  assert.equal(
    readFileSync(join(wt.path, "sub", "f.txt"), "utf8"),
    "changed again, longer than before\n",
  );

  // A repository nested deeper, in a new folder, is found as well.
  plantRepo(join(wt.path, "deep", "er", "inner"), marker);
  writeFileSync(join(wt.path, "deep", "plain.txt"), "p\n");
  const second = await commitChanges(wt, "turn 2");
  assert.deepEqual(second.notCommitted, ["deep/er/inner", "sub"]);
  assert.equal(git(r, "show", "delegate/s1:deep/plain.txt"), "p\n");
  assert.equal(await unusableReason(wt), undefined);

  const removed = await removeWorktree(wt, "job j");
  assert.deepEqual(removed.notKept, ["deep/er/inner", "sub"]);
  assert.match(
    removed.note,
    /not kept \(git repositories of their own .*\): deep\/er\/inner\/, sub\/$/,
  );
  assert.equal(existsSync(wt.path), false);
  assert.equal(ran(marker), undefined);
});

Deno.test("embedded repo: a submodule of the user's repository the delegate made a repository is never staged or read", async () => {
  const { repo: r, state, marker } = repo();
  // A submodule in the user's repository: a gitlink, left uninitialised (an empty folder).
  const other = join(r, "..", "other");
  git(join(r, ".."), "init", "-q", "-b", "main", other);
  writeFileSync(join(other, "o.txt"), "o\n");
  git(other, "add", "-A");
  git(other, "commit", "-qm", "o");
  const linked = git(other, "rev-parse", "HEAD").trim();
  git(r, "update-index", "--add", "--cacheinfo", `160000,${linked},lib`);
  writeFileSync(join(r, ".gitmodules"), '[submodule "lib"]\n\tpath = lib\n\turl = ../other\n');
  git(r, "add", ".gitmodules");
  git(r, "commit", "-qm", "submodule");
  const wt = await createWorktree(ref(r, state), false);

  // The delegate turns the empty folder into a repository with a filter, and asks that git
  // look inside it whatever the config says.
  plantRepo(join(wt.path, "lib"), marker);
  writeFileSync(
    join(wt.path, ".gitmodules"),
    '[submodule "lib"]\n\tpath = lib\n\turl = ../other\n\tignore = none\n',
  );
  const done = await commitChanges(wt, "turn 1");
  await summarize(wt, join(state, "p.patch"));
  const unusable = await unusableReason(wt);
  assert.equal(ran(marker), undefined);
  assert.equal(git(r, "rev-parse", "delegate/s1:lib").trim(), linked, "the gitlink moved");
  assert.deepEqual(done.notCommitted, ["lib"]);
  assert.ok(done.commit, "the .gitmodules change is committed");
  assert.equal(unusable, undefined);
  await removeWorktree(wt, "job j");
  assert.equal(ran(marker), undefined);
});

Deno.test("embedded repo: include_uncommitted names a repository it does not carry, and copies a symlink as a symlink", async () => {
  const { repo: r, state, marker } = repo();
  plantRepo(join(r, "nested"), marker);
  symlinkSync("a.txt", join(r, "link"));
  writeFileSync(join(r, "new.txt"), "new\n", { mode: 0o755 });
  const wt = await createWorktree(ref(r, state), true);
  assert.equal(ran(marker), undefined);
  assert.deepEqual(wt.notes.length, 1, wt.notes.join("\n"));
  assert.match(wt.notes[0]!, /^not carried over: nested\/ \(a git repository of its own/);
  assert.equal(existsSync(join(wt.path, "nested")), false);
  assert.ok(lstatSync(join(wt.path, "link")).isSymbolicLink());
  assert.equal(readFileSync(join(wt.path, "new.txt"), "utf8"), "new\n");
  assert.equal(lstatSync(join(wt.path, "new.txt")).mode & 0o111, 0o111, "mode kept");
  assert.equal(git(r, "show", "delegate/s1:new.txt"), "new\n");
  assert.equal(await unusableReason(wt), undefined);
  assert.equal(ran(marker), undefined);
});

Deno.test("embedded repo: include_uncommitted never copies the file an untracked file is swapped for a link to", async () => {
  const { repo: r, state } = repo();
  const secret = join(r, "..", "secret.txt");
  writeFileSync(secret, "THE-SECRET\n");
  // Another process in the checkout swaps f.txt between a plain file and a link to the
  // secret, as fast as it can (each rename is atomic: f.txt is always one or the other).
  const f = join(r, "f.txt");
  const link = join(r, ".git", "swap-link");
  const plain = join(r, ".git", "swap-plain");
  const swapper = spawn("python3", [
    "-c",
    `import os\nwhile True:\n  os.symlink(${JSON.stringify(secret)}, ${JSON.stringify(link)})\n` +
    `  os.rename(${JSON.stringify(link)}, ${JSON.stringify(f)})\n` +
    `  open(${JSON.stringify(plain)}, "w").write("plain\\n")\n` +
    `  os.rename(${JSON.stringify(plain)}, ${JSON.stringify(f)})\n`,
  ], { stdio: "ignore" });
  const leaked: string[] = [];
  try {
    for (let i = 0; i < 30 && leaked.length === 0; i++) {
      const wt = await createWorktree(ref(r, state, `race${i}`), true).catch(() => undefined);
      if (!wt) continue;
      const copied = join(wt.path, "f.txt");
      const st = existsSync(copied) ? lstatSync(copied) : undefined;
      if (st?.isFile() && readFileSync(copied, "utf8").includes("THE-SECRET")) leaked.push(wt.path);
    }
  } finally {
    swapper.kill("SIGKILL");
  }
  assert.deepEqual(leaked, [], "the secret was copied into a worktree");
});
