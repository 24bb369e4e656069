import assert from "node:assert/strict";
import { worktreeFileRules } from "../../../src/engines/claude/file_rules.ts";
import { sandboxSettings } from "../../../src/engines/claude/sandbox.ts";

Deno.test("claude sandbox: a worktree job hides the state dir but its worktree, keeps .git read-only", () => {
  const s = sandboxSettings({
    cwd: "/state/.worktrees/w",
    addDirs: [],
    protect: ["/cfg"],
    readOnly: ["/repo/.git", "/repo/.git/worktrees/w"],
    hiddenExcept: { dir: "/state", keep: "/state/.worktrees/w" },
  });
  assert.ok(s.filesystem.denyRead.includes("/state"));
  assert.deepEqual(s.filesystem.allowRead, ["/state/.worktrees/w"]);
  assert.ok(s.filesystem.denyWrite.includes("/repo/.git"));
  assert.ok(s.filesystem.denyWrite.includes("/repo/.git/worktrees/w"));
  assert.ok(!s.filesystem.denyRead.includes("/repo/.git"), "git must read it");
  // Without a worktree nothing changes.
  const plain = sandboxSettings({ cwd: "/p", addDirs: [], protect: ["/cfg"] });
  assert.equal(plain.filesystem.allowRead, undefined);
});

Deno.test("claude file rules of a worktree job: other jobs by name shape, no edits to the checkout", () => {
  const rules = worktreeFileRules({
    stateDir: "/state",
    checkout: "/repo",
    worktree: "/state/.worktrees/w",
  });
  for (
    const rule of [
      "Read(//state/*-*-*-*-*/**)",
      "Edit(//state/*-*-*-*-*)",
      "Read(//state/.sessions/**)",
      "Edit(//repo/**)",
      "Edit(//state/.worktrees/w/.git)",
    ]
  ) assert.ok(rules.includes(rule), `${rule} in ${rules.join(" ")}`);
  assert.ok(!rules.some((r) => r.startsWith("Read(//repo")), "the checkout stays readable");
});
