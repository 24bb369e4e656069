/**
 * Taking a delegate's work after `include_uncommitted: true`, as a user would right after the
 * reply: the default engine (the real Claude Code CLI against the emulator) edits the very file
 * the user has uncommitted changes in, and the first "take it" command of the reply, run as
 * printed on the still-dirty checkout, brings the delegate's change in on top of the user's.
 */
import { git } from "../support/git_repo.ts";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { defaultLayout } from "../support/default_layout.ts";
import { field, tempDir } from "../support/harness.ts";
import { startInProcessScene } from "../support/in_process_scene.ts";

const GIT_ENV = { PATH: "/usr/bin:/bin", GIT_CONFIG_NOSYSTEM: "1" };

Deno.test({
  name:
    "take it after include_uncommitted: the first command is git apply, says why, and works on the dirty checkout",
  ignore: process.platform !== "linux",
  async fn() {
    await using scene = await startInProcessScene(defaultLayout("od-take-home-"));
    const repo = realpathSync(tempDir("od-take-repo-"));
    git(repo, "init", "-q", "-b", "main");
    writeFileSync(join(repo, "shared.txt"), "original\n");
    git(repo, "add", "-A");
    git(repo, "-c", "user.name=u", "-c", "user.email=u@x", "commit", "-qm", "first");
    // The user's work in progress: an uncommitted change to a tracked file and a new file.
    writeFileSync(join(repo, "shared.txt"), "original\nuser's line\n");
    writeFileSync(join(repo, "notes.txt"), "the user's notes\n");
    const head = git(repo, "rev-parse", "HEAD");

    const reply = await scene.call("delegate_start", {
      prompt: `@bash echo "delegate's line" >> shared.txt\n@reply added it\nadd a line`,
      cwd: repo,
      isolation: "worktree",
      include_uncommitted: true,
      wait_seconds: 150,
    }, { timeoutMs: 240_000 });
    assert.equal(field(reply.text, "state"), "completed", reply.text);
    assert.match(field(reply.text, "changes")!, /^shared\.txt \| 1 \+$/, reply.text);

    const take = reply.text.slice(reply.text.indexOf("take it:")).split("\n");
    const commands = take.slice(0, 5).map((l, i) =>
      i === 0 ? l.replace(/^take it:\s+/, "") : l.trim()
    );
    assert.equal(
      commands[0],
      "# your checkout still has the uncommitted changes this branch started from: apply adds " +
        "only the delegate's changes on top of them (cherry-pick and merge stop at files with " +
        "uncommitted changes)",
      reply.text,
    );
    assert.match(commands[1]!, /^git -C ".*" apply ".*changes\.patch"$/);
    assert.match(commands[2]!, /^git -C ".*" cherry-pick [0-9a-f]+\.\.delegate\/[0-9a-f]{8}$/);
    assert.match(commands[3]!, /^git -C ".*" merge delegate\/[0-9a-f]{8} +# also brings in/);

    // The cherry-pick listed second stops on a copy of that checkout, as the line says (and
    // leaves a cherry-pick in progress behind).
    const copy = `${repo}-copy`;
    execFileSync("cp", ["-a", repo, copy]);
    const pick = commands[2]!.replace(JSON.stringify(repo), JSON.stringify(copy));
    assert.throws(
      () => execFileSync("sh", ["-c", pick], { env: { ...GIT_ENV, HOME: copy }, stdio: "pipe" }),
      (e: { stderr?: Uint8Array }) => /would be overwritten/.test(String(e.stderr)),
    );

    // The first command, as printed, on the checkout that still has the user's changes.
    execFileSync("sh", ["-c", commands[1]!], { env: { ...GIT_ENV, HOME: repo } });
    assert.equal(
      readFileSync(join(repo, "shared.txt"), "utf8"),
      "original\nuser's line\ndelegate's line\n",
    );
    assert.equal(readFileSync(join(repo, "notes.txt"), "utf8"), "the user's notes\n");
    assert.equal(git(repo, "rev-parse", "HEAD"), head, "nothing was committed");
  },
});
