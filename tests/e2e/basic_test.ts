/**
 * The claude engine end to end through the real Claude Code CLI: a Bash command runs, and the
 * files it changes are on the reply, whatever their names (in the Node pass too).
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { field, sandboxClaude, tempDir } from "../support/harness.ts";
import { startScene } from "../support/scene.ts";

Deno.test("a delegate runs a real Bash command through the real Claude Code CLI", async () => {
  await using scene = await startScene();
  const work = tempDir("od-work-");
  const reply = await scene.call("delegate_start", {
    prompt: "@bash echo hello-from-delegate > marker.txt\nplease do it",
    model: "qwen3:8b",
    cwd: work,
    allowed_tools: ["Bash"],
    wait_seconds: 90,
  });
  assert.equal(reply.isError, false, reply.text);
  assert.equal(field(reply.text, "state"), "completed");
  assert.equal(readFileSync(join(work, "marker.txt"), "utf8"), "hello-from-delegate\n");
  assert.match(field(reply.text, "tool calls") ?? "", /^1$/);
  const id = field(reply.text, "job_id")!;
  assert.ok(existsSync(join(scene.stateDir, id, "stream.jsonl")));
});

/**
 * Issue 28: `files:` left out changes in folders named like credential stores, and on Node a new
 * `.npmrc` and names that are not UTF-8, saying nothing; the `.npmrc` points npm's script-shell
 * at the payload (here a nested one: a new one at the top is moved out of the project). Written by a program, whose file names Claude Code's own checks cannot see.
 * Under Deno the change journal finds them; in the Node pass, the walk.
 */
Deno.test("a claude delegate's files in credential-named folders, a new .npmrc and a name that is not UTF-8 are each on files:", async () => {
  await using scene = await startScene({ claudeBin: sandboxClaude() });
  const work = tempDir("od-work-");
  const script = "import os; os.makedirs('lib/.ssh'); os.makedirs('lib/.docker'); " +
    "open('lib/.ssh/payload.js', 'w').write('require(1)'); " +
    "open('lib/.docker/config.json', 'w').write('{}'); " +
    "os.makedirs('app'); open('app/.npmrc', 'w').write('script-shell=../lib/.ssh/payload.js'); " +
    "open(b'caf\\xe9.txt', 'w').write('x')";
  const reply = await scene.call("delegate_start", {
    prompt: `@bash python3 -c ${JSON.stringify(script)}\nplease do it`,
    model: "qwen3:8b",
    cwd: work,
    permission_mode: "bypassPermissions",
    wait_seconds: 90,
  });
  assert.equal(field(reply.text, "state"), "completed", reply.text);
  // The attack happened: the sandboxed command made every file.
  assert.equal(
    readFileSync(join(work, "app", ".npmrc"), "utf8"),
    "script-shell=../lib/.ssh/payload.js",
  );
  assert.ok(existsSync(join(work, "lib", ".ssh", "payload.js")));
  assert.equal(
    field(reply.text, "files"),
    '4 changed: app/.npmrc, "caf\\351.txt", lib/.docker/config.json, lib/.ssh/payload.js',
    reply.text,
  );
  // A nested .npmrc is host-run (npm runs its script-shell): flagged, since only one at the top
  // is moved out of the project (tests/in_process/instruction_files_test.ts).
  assert.match(reply.text, /planted:.*app\/\.npmrc/, reply.text);
});
