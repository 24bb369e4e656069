/**
 * A delegate in a folder of 30 projects: 150 host-run paths (each project's `.git`, `.claude`,
 * `.vscode`, `CLAUDE.md` and `.envrc`) and 30 secret `.envrc`s, past the point where the
 * system's Python mounts them instead of bubblewrap (src/engines/mount_helper.ts). On each
 * engine, with the real server, real bubblewrap and, for claude, the real Claude Code CLI in its
 * sandbox: the delegate's commands try to write the projects' host-run files, undo the mounts
 * and keep a capability; the host-run files stay as they were, the secret stays hidden and the
 * ordinary file is written.
 */
import assert from "node:assert/strict";
import { readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { callsInOrder } from "../support/emulator/emulator.ts";
import { field, sandboxClaude, tempDir } from "../support/harness.ts";
import { startScene } from "../support/scene.ts";
import { writeNested } from "../support/trees.ts";
import { helperShare, mountHelperFor } from "../../src/engines/mount_helper.ts";

const MODEL = "qwen3:8b";
const PROJECTS = 30;

/** `top/code` with PROJECTS projects below `nested/`, each `.envrc` holding a secret. */
function folder() {
  const top = tempDir("od-many-projects-");
  const code = realpathSync(top);
  writeNested(code, PROJECTS);
  for (let i = 0; i < PROJECTS; i++) {
    writeFileSync(join(code, "nested", `p${i}`, ".envrc"), `export TOKEN=secret-${i}\n`);
  }
  return code;
}

/** What each command tries, one Bash call each; the last two are the controls. */
const COMMANDS = [
  "echo x >> nested/p3/CLAUDE.md",
  "echo '[core] fsmonitor = touch /tmp/x' >> nested/p3/.git/config",
  "mkdir -p nested/p4/.git/hooks && echo x > nested/p4/.git/hooks/post-checkout",
  "echo '{}' > nested/p29/.claude/settings.local.json",
  "echo x >> nested/p7/.vscode/settings.json",
  "umount nested/p3/.git || mount -o remount,rw,bind nested/p3/.git; echo x >> nested/p3/.git/config",
  "unshare -Urm sh -c 'umount nested/p3/.git; echo x >> nested/p3/.git/config'",
  "cat nested/p9/.envrc; grep CapEff /proc/self/status",
  "echo ok > nested/p3/notes.txt",
];

/** The projects' host-run files as they were written (trees.ts writeNested, the secret). */
function assertUnchanged(code: string, what: string) {
  for (const i of [3, 4, 7, 9, 29]) {
    const p = join(code, "nested", `p${i}`);
    assert.equal(readFileSync(join(p, "CLAUDE.md"), "utf8"), "# project\n", `${what}: p${i}`);
    assert.equal(readFileSync(join(p, ".git", "config"), "utf8"), "[core]\n", `${what}: p${i}`);
    assert.equal(readFileSync(join(p, ".vscode", "settings.json"), "utf8"), "{}\n", what);
    assert.equal(readFileSync(join(p, ".envrc"), "utf8"), `export TOKEN=secret-${i}\n`, what);
  }
  for (
    const gone of ["nested/p4/.git/hooks/post-checkout", "nested/p29/.claude/settings.local.json"]
  ) {
    assert.throws(() => readFileSync(join(code, gone)), `${what}: ${gone} written`);
  }
  assert.equal(readFileSync(join(code, "nested", "p3", "notes.txt"), "utf8"), "ok\n", what);
}

/** The bubblewrap on this machine has the helper: else these tests would not reach it. */
function helperHere(code: string) {
  const held = [];
  for (let i = 0; i < PROJECTS; i++) {
    for (const name of [".git", ".claude", ".vscode", "CLAUDE.md", ".envrc"]) {
      held.push(join(code, "nested", `p${i}`, name));
    }
  }
  assert.ok(
    mountHelperFor("/usr/bin/bwrap", helperShare(held).helper),
    "no system Python with ctypes here: the helper would not be used",
  );
}

Deno.test("native delegate in a folder of 30 projects (mount helper): host-run files stay unchanged, the mounts cannot be undone, no capability, the secret hidden", async () => {
  const code = folder();
  helperHere(code);
  await using scene = await startScene({});
  const script = [...COMMANDS.map((c) => `@bash ${c}`), "@reply done"].join("\n");
  const reply = await scene.call("delegate_start", {
    engine: "native",
    model: MODEL,
    prompt: `${script}\ntidy the projects`,
    cwd: code,
    wait_seconds: 150,
  }, { timeoutMs: 200_000 });
  assert.equal(field(reply.text, "state"), "completed", reply.text);
  assertUnchanged(code, "native");
  const wire = scene.emulator.nativeChatRequests().map((r) => r.bodyText).join("\n");
  assert.match(wire, /CapEff:\\t0000000000000000/, "a capability was left");
  assert.doesNotMatch(wire, /secret-9/, "the secret .envrc was read");
});

Deno.test("claude delegate in a folder of 30 projects (mount helper), bypassPermissions: host-run files stay unchanged, the mounts cannot be undone, no capability, the secret hidden", async () => {
  const code = folder();
  helperHere(code);
  const results: string[] = [];
  const calls = COMMANDS.map((command) => ({ name: "Bash", input: { command } }));
  await using scene = await startScene({
    emulator: { script: callsInOrder(calls, { results }) },
    // Claude Code refuses bypassPermissions as root unless IS_SANDBOX=1, which the server never
    // passes on: the test's own stand-in for `claude` sets it.
    claudeBin: sandboxClaude(),
  });
  const reply = await scene.call("delegate_start", {
    prompt: "tidy the projects",
    model: MODEL,
    cwd: code,
    permission_mode: "bypassPermissions",
    wait_seconds: 150,
  }, { timeoutMs: 200_000 });
  assert.equal(field(reply.text, "state"), "completed", reply.text);
  assertUnchanged(code, "claude");
  assert.equal(results.length, COMMANDS.length, JSON.stringify(results));
  assert.match(results[7]!, /CapEff:\s+0000000000000000/, results[7]);
  assert.doesNotMatch(results[7]!, /secret-9/, "the secret .envrc was read");
});
