import { tempDir } from "../../support/harness.ts";
import { committedRepo, git } from "../../support/git_repo.ts";
import assert from "node:assert/strict";
import { existsSync, readFileSync, realpathSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  createWorktree,
  findCheckout,
  removeWorktree,
  summarize,
  unusableReason,
} from "../../../src/jobs/worktree/worktree.ts";
import { commitAll } from "../../../src/jobs/worktree/commit.ts";

/** A repository with one commit (a.txt), its state dir beside it. */
function repo(): { repo: string; state: string } {
  const top = realpathSync(tempDir("wt-test-"));
  const repo = committedRepo(join(top, "repo"), {
    "a.txt": "one\n",
    ".gitignore": "ignored.log\n",
  });
  return { repo, state: join(top, "state") };
}

const ref = (repo: string, state: string, name = "s1") => ({
  repo,
  path: join(state, ".worktrees", name),
  branch: `delegate/${name}`,
});

Deno.test("worktree: made from HEAD on a new branch, committed by the server, patch applies", async () => {
  const { repo: r, state } = repo();
  const wt = await createWorktree(ref(r, state), false);
  assert.equal(readFileSync(join(wt.path, "a.txt"), "utf8"), "one\n");
  assert.equal(wt.base, git(r, "rev-parse", "HEAD").trim());
  assert.equal(git(r, "rev-parse", "delegate/s1").trim(), wt.base);
  assert.equal(await findCheckout(join(r)), r);

  writeFileSync(join(wt.path, "a.txt"), "two\n");
  writeFileSync(join(wt.path, "new.txt"), "new\n");
  const commit = await commitAll(wt, "delegate job j turn 1");
  assert.ok(commit);
  assert.equal(
    git(r, "log", "-1", "--format=%an <%ae>|%s", "delegate/s1").trim(),
    "ollama-delegate <delegate@localhost>|delegate job j turn 1",
  );
  assert.equal(await commitAll(wt, "nothing"), undefined, "no empty commits");
  assert.equal(await unusableReason(wt), undefined);

  const patch = join(state, "changes.patch");
  const { diffStat } = await summarize(wt, patch);
  assert.match(diffStat, /a\.txt +\| 2/);
  assert.match(diffStat, /2 files changed/);
  // The user's checkout is untouched until they take the patch.
  assert.equal(git(r, "status", "--porcelain"), "");
  git(r, "apply", patch);
  assert.equal(readFileSync(join(r, "a.txt"), "utf8"), "two\n");
});

Deno.test("worktree: uncommitted changes are carried over, the checkout stays byte for byte", async () => {
  const { repo: r, state } = repo();
  writeFileSync(join(r, "a.txt"), "edited\n");
  writeFileSync(join(r, "untracked.txt"), "u\n");
  writeFileSync(join(r, "ignored.log"), "i\n");
  const before = git(r, "status", "--porcelain");
  const index = readFileSync(join(r, ".git", "index"));
  const wt = await createWorktree(ref(r, state), true);
  assert.equal(readFileSync(join(wt.path, "a.txt"), "utf8"), "edited\n");
  assert.equal(readFileSync(join(wt.path, "untracked.txt"), "utf8"), "u\n");
  assert.equal(existsSync(join(wt.path, "ignored.log")), false, "ignored files stay behind");
  assert.notEqual(wt.base, git(r, "rev-parse", "HEAD").trim(), "a base commit holds them");
  assert.equal(
    git(r, "log", "-1", "--format=%s", wt.base).trim(),
    `uncommitted changes of ${r} at start`,
  );
  assert.equal(git(r, "status", "--porcelain"), before);
  assert.deepEqual(readFileSync(join(r, ".git", "index")), index);
  assert.equal(readFileSync(join(r, "a.txt"), "utf8"), "edited\n");
  // The delegate's diff is against the carried state, not HEAD.
  writeFileSync(join(wt.path, "b.txt"), "b\n");
  await commitAll(wt, "turn");
  const { diffStat } = await summarize(wt, join(state, "p.patch"));
  assert.match(diffStat, /b\.txt/);
  assert.doesNotMatch(diffStat, /a\.txt|untracked/);
});

Deno.test("worktree: a filter driver named by a planted .gitattributes never runs", async () => {
  const { repo: r, state } = repo();
  const marker = join(state, "PWNED");
  git(r, "config", "filter.evil.clean", `touch ${marker}; cat`);
  git(r, "config", "filter.evil.process", `touch ${marker}`);
  git(r, "config", "core.fsmonitor", `touch ${marker}; false`);
  const wt = await createWorktree(ref(r, state), false);
  writeFileSync(join(wt.path, ".gitattributes"), "* filter=evil diff=evil\n");
  writeFileSync(join(wt.path, "x.txt"), "x\n");
  git(r, "config", "diff.evil.textconv", `touch ${marker}; cat`);
  // A hook in the main repository: the server's commit must not run it either.
  writeFileSync(join(r, ".git", "hooks", "pre-commit"), `#!/bin/sh\ntouch ${marker}\n`, {
    mode: 0o755,
  });
  await commitAll(wt, "turn");
  await summarize(wt, join(state, "p.patch"));
  await unusableReason(wt);
  assert.equal(existsSync(marker), false, "nothing from the worktree ran on the host");
  assert.equal(git(r, "show", "delegate/s1:x.txt"), "x\n");
});

Deno.test("worktree: removal keeps an unmerged branch, saves stray work, deletes a merged one", async () => {
  const { repo: r, state } = repo();
  const a = await createWorktree(ref(r, state, "a"), false);
  writeFileSync(join(a.path, "left.txt"), "left by a dead server\n");
  const removed = await removeWorktree(a, "job j");
  assert.equal(existsSync(a.path), false);
  assert.ok(removed.rescued);
  assert.equal(removed.branchDeleted, false);
  assert.match(removed.note, /branch delegate\/a kept \(not merged\)/);
  assert.equal(git(r, "show", "delegate/a:left.txt"), "left by a dead server\n");

  // A repository that is gone: its worktree holds the only copy, so it stays.
  const c = await createWorktree(ref(r, state, "c"), false);
  const moved = `${r}-moved`;
  renameSync(r, moved);
  await assert.rejects(removeWorktree(c, "job l"), /is gone, so .* holds the only copy/);
  assert.equal(existsSync(c.path), true);
  renameSync(moved, r);

  const b = await createWorktree(ref(r, state, "b"), false);
  const gone = await removeWorktree(b, "job k");
  assert.equal(gone.branchDeleted, true);
  assert.match(gone.note, /deleted \(merged into HEAD\)/);
  assert.equal(git(r, "branch", "--list", "delegate/b"), "");
});

Deno.test("worktree: a locked, changed or missing worktree cannot take a turn; no HEAD is an error", async () => {
  const { repo: r, state } = repo();
  const wt = await createWorktree(ref(r, state), false);
  writeFileSync(join(wt.path, "stray.txt"), "x");
  assert.match((await unusableReason(wt))!, /has changes that no turn committed/);
  await commitAll(wt, "t");
  git(r, "worktree", "lock", wt.path);
  assert.match((await unusableReason(wt))!, /is locked/);
  await assert.rejects(createWorktree(ref(r, state), false), /already exists/);

  const top = realpathSync(tempDir("wt-empty-"));
  git(top, "init", "-q");
  await assert.rejects(
    createWorktree(ref(top, join(top, "..", "st")), false),
    /has no commit yet/,
  );
  assert.equal(await findCheckout("/"), undefined);
});

Deno.test("worktree: a rewritten .git file, commondir or HEAD never steers the server's git", async () => {
  const { repo: r, state } = repo();
  const wt = await createWorktree(ref(r, state), false);
  // A repository of the delegate's making, whose config would run a command on the host.
  const evil = join(state, "evil");
  git(state, "init", "-q", evil);
  const marker = join(state, "PWNED");
  git(evil, "config", "core.fsmonitor", `touch ${marker}; false`);
  git(evil, "config", "core.hooksPath", join(evil, "hooks"));
  writeFileSync(join(wt.path, ".git"), `gitdir: ${join(evil, ".git")}\n`);
  writeFileSync(join(wt.gitDir, "commondir"), `${join(evil, ".git")}\n`);
  writeFileSync(join(wt.path, "x.txt"), "x\n");
  await assert.rejects(commitAll(wt, "turn"), /no longer points at its repository/);
  assert.equal(existsSync(marker), false);
  // With commondir intact, a rewritten .git file alone is not followed.
  writeFileSync(join(wt.gitDir, "commondir"), "../..\n");
  await commitAll(wt, "turn");
  assert.equal(existsSync(marker), false);
  assert.equal(git(r, "show", "delegate/s1:x.txt"), "x\n", "committed to the job's branch");
  // HEAD moved to the user's branch: nothing is committed there.
  writeFileSync(join(wt.gitDir, "HEAD"), "ref: refs/heads/main\n");
  writeFileSync(join(wt.path, "y.txt"), "y\n");
  const main = git(r, "rev-parse", "main");
  await assert.rejects(commitAll(wt, "turn 2"), /HEAD no longer names branch delegate\/s1/);
  assert.equal(git(r, "rev-parse", "main"), main);
});
