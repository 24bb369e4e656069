/**
 * A server that dies without stopping its delegates (SIGKILL, a crash) leaves a Claude Code
 * child and what its Bash tool started. The next server that starts on the same state dir
 * stops them and records the job as interrupted at once, without anyone reading the job.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { alive, field, tempDir, until } from "../support/harness.ts";
import { startScene } from "../support/scene.ts";

/**
 * The test follows the pid that `echo $!` prints; inside a sandbox that pid belongs to the
 * sandbox's own pid namespace, so the sandbox is off here.
 */
const HOST_PIDS = { OLLAMA_MCP_SANDBOX: "off" };

function readRecord(stateDir: string, id: string) {
  return JSON.parse(readFileSync(join(stateDir, id, "job.json"), "utf8")) as {
    state: string;
    errorText?: string;
    child?: { pid: number };
  };
}

Deno.test("a restarted server stops the delegates a killed server left and marks their jobs interrupted", async () => {
  const work = tempDir("od-work-");
  await using scene = await startScene({ cwd: work, env: HOST_PIDS });
  const first = scene.server;
  let claude = 0;
  let sleeper = 0;
  try {
    const started = await first.call("delegate_start", {
      prompt: "@bash sh -c 'sleep 311 & echo $! > sleeper.txt; wait'\nstart a long command",
      model: "qwen3:8b",
      cwd: work,
      allowed_tools: ["Bash"],
    });
    const id = field(started.text, "job_id")!;
    [claude, sleeper] = await until(
      () => {
        const child = readRecord(first.stateDir, id).child?.pid;
        const path = join(work, "sleeper.txt");
        if (!child || !existsSync(path)) return undefined;
        const pid = Number(readFileSync(path, "utf8").trim());
        return pid > 0 && alive(pid) && alive(child) ? [child, pid] : undefined;
      },
      90_000,
      "the delegate and its command",
    );
    Deno.kill(first.pid, "SIGKILL");
    await until(() => !alive(first.pid) || undefined, 5000, "the server to die");
    await first.close();
    // Still there once their server is gone: nothing else would stop them.
    assert.ok(alive(claude) && alive(sleeper), "the orphans outlived their server");
    assert.equal(readRecord(first.stateDir, id).state, "running");

    const t0 = Date.now();
    const second = await scene.startServer();
    // No tool call names the job: the server finds it on its own.
    await until(
      () => (!alive(claude) && !alive(sleeper)) || undefined,
      20_000,
      "the orphans to be stopped",
    );
    const took = Date.now() - t0;
    const record = await until(
      () => {
        const r = readRecord(second.stateDir, id);
        return r.state === "running" ? undefined : r;
      },
      10_000,
      "the job to be recorded as interrupted",
    );
    assert.equal(record.state, "interrupted");
    assert.match(record.errorText ?? "", /stopped before it finished; follow up to continue/);
    assert.equal(record.child, undefined);
    const logged = new RegExp(`recovered 1 job\\(s\\) whose server had stopped.*${id}`);
    await until(() => logged.test(second.stderr()) || undefined, 10_000, "the sweep's log line");
    console.log(`orphans stopped ${took} ms after the new server was started`);
  } finally {
    // Only when the test failed: do not leave what it started running.
    for (const pid of [claude, sleeper]) if (pid > 0 && alive(pid)) Deno.kill(pid, "SIGKILL");
  }
});
