import assert from "node:assert/strict";
import { baseRecord, cliEnv, runCli, writeJob } from "./jobs_support.ts";

const SID = "5e55107e-0000-4000-8000-000000000001";
const JID = "10b10b00-0000-4000-8000-000000000001";

Deno.test("jobs list and show: a job's branch, worktree, changes and how to take them", async () => {
  const ctx = cliEnv();
  const worktree = {
    repo: "/work/repo",
    path: `${ctx.stateDir}/.worktrees/${SID}`,
    branch: "delegate/5e55107e",
    gitDir: "/work/repo/.git/worktrees/x",
    base: "0123456789abcdef0123456789abcdef01234567",
    head: "fedcba9876543210fedcba9876543210fedcba98",
    diffStat: " a.txt | 2 +-\n 1 file changed, 1 insertion(+), 1 deletion(-)",
    patch: `${ctx.stateDir}/${JID}/changes.patch`,
  };
  writeJob(ctx.stateDir, baseRecord(JID, SID, { cwd: "/work/repo", worktree }));
  const list = await runCli(ctx, ["jobs"]);
  assert.equal(list.code, 0, list.stderr);
  assert.match(list.stdout, new RegExp(`branch delegate/5e55107e  worktree ${worktree.path}`));
  const show = await runCli(ctx, ["jobs", "show", JID]);
  assert.equal(show.code, 0, show.stderr);
  const lines = show.stdout.split("\n");
  assert.ok(lines.includes(`worktree    ${worktree.path}`), show.stdout);
  assert.ok(lines.includes("branch      delegate/5e55107e (base 0123456789)"), show.stdout);
  assert.ok(lines.includes("changes     a.txt | 2 +-"), show.stdout);
  assert.ok(lines.includes(`patch       ${worktree.patch}`), show.stdout);
  assert.ok(lines.includes('take it     git -C "/work/repo" merge delegate/5e55107e'), show.stdout);
  assert.ok(
    lines.includes(
      `            git -C "/work/repo" cherry-pick ${worktree.base}..delegate/5e55107e`,
    ),
    show.stdout,
  );
  assert.ok(lines.includes(`            git -C "/work/repo" apply "${worktree.patch}"`));
});
