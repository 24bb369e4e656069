/**
 * A server killed while a native job's sandboxed command runs leaves the empty placeholders
 * bubblewrap mounted over the project's missing host-run folders (`.claude`, `.vscode`,
 * `.idea`; the other host-run paths get none, see PLACEHOLDER_NAMES). The next server on the
 * same state dir removes them, but keeps one the user has filled since.
 */
import { git } from "../support/git_repo.ts";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { alive, field, tempDir, until } from "../support/harness.ts";
import { startScene } from "../support/scene.ts";

const hasBwrap = existsSync("/usr/bin/bwrap") && Deno.build.os === "linux";

/** Host pids whose command line holds `tag` (the sandboxed command, seen from the host). */
function pgrep(tag: string): number[] {
  const out: number[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const cmd = Deno.readTextFileSync(`/proc/${entry.name}/cmdline`).replaceAll("\0", " ");
      if (cmd.startsWith("sleep ") && cmd.includes(tag)) out.push(Number(entry.name));
    } catch {
      // Gone.
    }
  }
  return out;
}

Deno.test({
  name: "a restarted server removes the empty placeholders a killed server left in the project",
  ignore: !hasBwrap,
  async fn() {
    const work = tempDir("od-placeholders-");
    git(work, "init", "-q", ".");
    writeFileSync(join(work, "app.txt"), "app\n");
    git(work, "add", "app.txt");
    git(work, "commit", "-qm", "first");
    await using scene = await startScene({ cwd: work });
    const first = scene.server;
    const tag = `${Math.floor(Math.random() * 1e6)}`;
    const started = await first.call("delegate_start", {
      engine: "native",
      model: "qwen3:8b",
      wait_seconds: 0,
      prompt: `@bash sleep 3${tag}; :\nrun the long command`,
      cwd: work,
    });
    const id = field(started.text, "job_id");
    assert.ok(id, started.text);
    await until(
      () => (pgrep(tag).length > 0 && existsSync(join(work, ".claude"))) || undefined,
      60_000,
      "the sandboxed command and its placeholders",
    );
    Deno.kill(first.pid, "SIGKILL");
    await until(() => !alive(first.pid) || undefined, 5000, "the server to die");
    await first.close();
    await until(() => pgrep(tag).length === 0 || undefined, 5000, "the sandbox to die with it");

    // What the killed server left: empty folders.
    const left = readdirSync(work).filter((n) => n !== ".git" && n !== "app.txt").sort();
    assert.deepEqual(left, [".claude", ".idea", ".vscode"]);
    assert.deepEqual(readdirSync(join(work, ".claude")), []);
    // Meanwhile the user writes into one of them.
    writeFileSync(join(work, ".vscode", "settings.json"), "{}\n");

    const second = await scene.startServer();
    await until(
      () => readdirSync(work).length === 3 || undefined,
      30_000,
      `the placeholders to be removed (left: ${readdirSync(work).join(", ")})`,
    );
    assert.deepEqual(readdirSync(work).sort(), [".git", ".vscode", "app.txt"]);
    assert.equal(readFileSync(join(work, ".vscode", "settings.json"), "utf8"), "{}\n");
    assert.equal(git(work, "status", "--porcelain"), "?? .vscode/\n");
    await until(
      () =>
        /removed \d+ empty placeholder\(s\) left by stopped servers/.test(second.stderr()) ||
        undefined,
      10_000,
      "the sweep's log line",
    );
    assert.match(second.stderr(), /kept 1 placeholder path\(s\) of stopped servers .*\.vscode/);
    // The registry keeps nothing of the dead server.
    const registry = join(scene.stateDir, ".sandbox");
    assert.deepEqual(readdirSync(registry).filter((n) => n !== "git-excludes"), []);
  },
});
