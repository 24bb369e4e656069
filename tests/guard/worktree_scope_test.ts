import { tempDir } from "../support/temp_dir.ts";
import assert from "node:assert/strict";
import { mkdirSync, realpathSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { isServerWorktree, protectAround } from "../../src/guard/worktree_scope.ts";

const SID = "5e551000-0000-4000-8000-000000000001";

function stateDir(): string {
  const state = realpathSync(tempDir("wt-scope-"));
  for (const d of [".sessions", ".sandbox", `.worktrees/${SID}/sub`, ".worktrees/other", SID]) {
    mkdirSync(join(state, d), { recursive: true });
  }
  return state;
}

Deno.test("protectAround: the state dir is replaced by everything in it but the job's worktree", () => {
  const state = stateDir();
  const keep = join(state, ".worktrees", SID);
  const out = protectAround(["/cfg", state], keep).sort();
  assert.deepEqual(
    out,
    [
      "/cfg",
      join(state, ".sandbox"),
      join(state, ".sessions"),
      join(state, ".worktrees", "other"),
      join(state, SID),
    ].sort(),
  );
  // A protected dir that does not hold the worktree stays whole; the worktree itself goes.
  assert.deepEqual(protectAround([keep, "/x"], keep), ["/x"]);
});

Deno.test("isServerWorktree: only <stateDir>/.worktrees/<session id> named by the turn, and below it", () => {
  const state = stateDir();
  const dir = join(state, ".worktrees");
  const wt = { path: join(dir, SID), gitDir: "/r/.git/worktrees/x" };
  assert.equal(isServerWorktree(join(dir, SID), wt, dir), true);
  assert.equal(isServerWorktree(join(dir, SID, "sub"), wt, dir), true);
  assert.equal(isServerWorktree(join(dir, SID), undefined, dir), false, "the turn names none");
  assert.equal(isServerWorktree(join(dir, SID), wt, undefined), false);
  assert.equal(isServerWorktree(join(state, SID), wt, dir), false, "outside the worktree");
  const other = { path: join(dir, "other"), gitDir: "/r/.git/worktrees/y" };
  assert.equal(isServerWorktree(join(dir, "other"), other, dir), false, "not a session id");
  // A worktree path that resolves elsewhere (a symlink out of the state dir) is not one.
  const outside = realpathSync(tempDir("wt-out-"));
  const SID2 = "5e551000-0000-4000-8000-000000000002";
  symlinkSync(outside, join(dir, SID2));
  assert.equal(isServerWorktree(outside, { path: join(dir, SID2), gitDir: "/g" }, dir), false);
});
