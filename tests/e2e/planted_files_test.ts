/**
 * A native delegate tries to plant what the host runs later, unconfined: git's fsmonitor and
 * hooks, Claude Code project settings with hooks, direnv's .envrc. With the real server, real
 * bubblewrap and the real Claude Code CLI, nothing it planted may run at the user's next
 * `git status` or `git commit`, nor in the next delegate working there.
 */
import { git } from "../support/git_repo.ts";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { field, tempDir } from "../support/harness.ts";
import { startScene } from "../support/scene.ts";

Deno.test("planted fsmonitor, git hooks and Claude Code settings never run on the host or in a later delegate", async () => {
  await using scene = await startScene();
  const top = tempDir("od-planted-");
  const work = join(top, "proj");
  mkdirSync(work);
  git(work, "init", "-q", ".");
  writeFileSync(join(work, "a.txt"), "a\n");
  git(work, "add", "a.txt");
  git(work, "commit", "-qm", "first");
  const markers = join(top, "markers");
  mkdirSync(markers);
  const touch = (name: string) => `touch ${join(markers, name)}`;
  const settings = JSON.stringify({
    hooks: {
      SessionStart: [{ hooks: [{ type: "command", command: touch("session-start") }] }],
      UserPromptSubmit: [{ hooks: [{ type: "command", command: touch("prompt-submit") }] }],
    },
  });
  const attack = [
    `@bash git config core.fsmonitor '${touch("fsmonitor")}'`,
    `@bash printf '#!/bin/sh\\n${touch("pre-commit")}\\n' > .git/hooks/pre-commit && ` +
    `chmod +x .git/hooks/pre-commit`,
    `@bash mkdir -p .claude && printf '%s' '${settings}' > .claude/settings.json`,
    `@bash echo '${touch("direnv")}' > .envrc`,
    `@tool Write {"file_path":".claude/settings.local.json","content":${JSON.stringify(settings)}}`,
    `@tool Write {"file_path":".git/config","content":"[core]\\n\\tfsmonitor = ${
      touch("fsmonitor")
    }\\n"}`,
    "@bash echo legit > b.txt",
    "@reply planted",
  ].join("\n");
  const configBefore = readFileSync(join(work, ".git", "config"), "utf8");
  const reply = await scene.call("delegate_start", {
    engine: "native",
    model: "qwen3:8b",
    prompt: `${attack}\nset up the project`,
    cwd: work,
    wait_seconds: 120,
  });
  assert.equal(field(reply.text, "state"), "completed", reply.text);
  // Every planting command failed and the server saw the real exit codes, but for the
  // .envrc, which has no placeholder: it was moved out of the project as the command ended.
  assert.match(field(reply.text, "commands") ?? "", /^5 run, 3 failed/, reply.text);
  assert.match(reply.text, /^warning: +planted: moved out of the project: \.envrc \(kept at /m);
  assert.equal(readFileSync(join(work, "b.txt"), "utf8"), "legit\n", "ordinary work still works");
  assert.equal(readFileSync(join(work, ".git", "config"), "utf8"), configBefore);
  assert.ok(!existsSync(join(work, ".git", "hooks", "pre-commit")));
  assert.ok(!existsSync(join(work, ".claude")), "no .claude folder, not even an empty one");
  assert.ok(!existsSync(join(work, ".envrc")));

  // The user's next git commands on the host run nothing.
  git(work, "status");
  git(work, "add", "b.txt");
  git(work, "commit", "-qm", "second");

  // The next delegate there, on the claude engine with the real CLI, runs no planted hook.
  const next = await scene.call("delegate_start", {
    prompt: "@reply hello\nsay hello",
    model: "qwen3:8b",
    cwd: work,
    wait_seconds: 120,
  });
  assert.equal(field(next.text, "state"), "completed", next.text);
  assert.deepEqual(Deno.readDirSync(markers).toArray(), [], "no planted command ran");
});
