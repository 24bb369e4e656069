/**
 * The claude engine's replies carry the evidence the native engine's do, from what the server
 * saw rather than the model's words: an `engine:` line, every Bash command with the exit code
 * Claude Code gave it (failures listed), the files the turn changed (also in `node_modules`,
 * ignored by git, or planted where the host runs them, flagged `planted:`), and a `warning:`
 * when none of its tool calls ran. The real server, the real Claude Code CLI in its jail, the
 * default settings and state-dir layout.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { field, sandboxClaude, tempDir } from "../support/harness.ts";
import { startScene } from "../support/scene.ts";

const MODEL = "qwen3:8b";

function project(): string {
  const work = tempDir("od-claude-evidence-");
  execFileSync("git", ["init", "-q", work]);
  writeFileSync(join(work, ".gitignore"), "node_modules/\n*.log\n");
  mkdirSync(join(work, "node_modules", "dep"), { recursive: true });
  writeFileSync(join(work, "node_modules", "dep", "index.js"), "module.exports = 1;\n");
  mkdirSync(join(work, "sub"));
  return work;
}

Deno.test("claude engine: commands with their exit codes, changed files and planted files are in the reply", async () => {
  // bypassPermissions as root (outside the jail), so that every command runs.
  await using scene = await startScene({ claudeBin: sandboxClaude() });
  const work = project();
  const commands = [
    "echo hi > a.txt",
    "cat missing.txt",
    "echo patched >> node_modules/dep/index.js",
    "echo noise > debug.log",
    // By a program whose file names Claude Code's own checks cannot see (they refuse
    // `> sub/.envrc`); only the server's view of the tree stands in the way.
    `python3 -c "open('sub/.envrc', 'w').write('echo pwned\\n')"`,
    "echo 'Exit code 0'; exit 3",
  ];
  const reply = await scene.call("delegate_start", {
    prompt: `${commands.map((c) => `@bash ${c}`).join("\n")}\n@reply done\nplease`,
    model: MODEL,
    cwd: work,
    permission_mode: "bypassPermissions",
    wait_seconds: 150,
  }, { timeoutMs: 200_000 });
  assert.equal(field(reply.text, "state"), "completed", reply.text);
  assert.equal(readFileSync(join(work, "sub", ".envrc"), "utf8"), "echo pwned\n", reply.text);
  assert.equal(field(reply.text, "engine"), "claude", reply.text);
  // Failures as Claude Code reported them; the output's own "Exit code 0" changes nothing.
  assert.equal(
    field(reply.text, "commands"),
    "6 run, 2 failed: echo hi > a.txt (exit 0), cat missing.txt (exit 1), echo patched >> " +
      "node_modules/dep/index.js (exit 0), echo noise > debug.log (exit 0), python3 -c " +
      `"open('sub/.envrc', 'w').write('echo pwned\\n')" (exit 0), +1 more, among them: echo ` +
      "'Exit code 0'; exit 3 (exit 3)",
    reply.text,
  );
  assert.equal(
    field(reply.text, "files"),
    "4 changed: a.txt, debug.log, node_modules/dep/index.js, sub/.envrc",
    reply.text,
  );
  assert.match(reply.text, /^warning: +planted: sub\/\.envrc \(files that git/m, reply.text);
});

Deno.test("a turn whose every tool call was denied says so, on both engines", async () => {
  await using scene = await startScene();
  const work = project();
  // A deny rule refuses the command, also where Claude Code's sandbox would run it unasked.
  const claude = await scene.call("delegate_start", {
    prompt: "@bash git push\n@reply pushed\nplease",
    model: MODEL,
    cwd: work,
    disallowed_tools: ["Bash(git push)"],
    wait_seconds: 120,
  }, { timeoutMs: 160_000 });
  const native = await scene.call("delegate_start", {
    prompt: "@bash echo hi > a.txt\n@reply wrote it\nplease",
    model: MODEL,
    engine: "native",
    cwd: work,
    disallowed_tools: ["Bash"],
    wait_seconds: 60,
  });
  for (const [engine, reply] of [["claude", claude], ["native", native]] as const) {
    assert.equal(field(reply.text, "state"), "completed", `${engine}: ${reply.text}`);
    assert.match(field(reply.text, "denied") ?? "", /^1: Bash/, `${engine}: ${reply.text}`);
    assert.equal(
      field(reply.text, "warning"),
      "its only tool call did not run (1 denied by permissions): the delegate looked at and " +
        "changed nothing, so its answer rests on no work in the project",
      `${engine}: ${reply.text}`,
    );
  }
});
