/**
 * `jobs tail` and `jobs cancel` from a terminal against a job that another process runs: the
 * real server over stdio, the real Claude Code CLI, the Ollama emulator.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { startOllamaEmulator } from "../support/ollama_emulator.ts";
import { alive, field, startServer, tempDir, until } from "../support/harness.ts";
import { type CliEnv, runCli, startCli } from "./jobs_support.ts";

function readRecord(stateDir: string, id: string): Record<string, unknown> {
  return JSON.parse(readFileSync(join(stateDir, id, "job.json"), "utf8"));
}

function cliFor(server: { stateDir: string; home: string }): CliEnv {
  return {
    stateDir: server.stateDir,
    cwd: server.home,
    env: {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      HOME: Deno.env.get("HOME") ?? server.home,
      OLLAMA_MCP_STATE_DIR: server.stateDir,
      OLLAMA_MCP_CONFIG: join(server.home, "no-config.json"),
      ...(Deno.env.get("DENO_DIR") ? { DENO_DIR: Deno.env.get("DENO_DIR")! } : {}),
    },
  };
}

Deno.test("jobs cancel stops a job that another server process runs", async () => {
  const emu = await startOllamaEmulator();
  const server = await startServer({ baseUrl: emu.url });
  try {
    const started = await server.call("delegate_start", {
      prompt: "@hang\nwait forever",
      model: "qwen3:8b",
      cwd: tempDir("od-work-"),
    });
    const id = field(started.text, "job_id")!;
    // The delegate is up and waiting on the model: its pid is in the record.
    const child = await until(
      () => {
        const r = readRecord(server.stateDir, id) as { state: string; child?: { pid: number } };
        return r.state === "running" && r.child ? r.child.pid : undefined;
      },
      60_000,
      "the delegate to start",
    );
    assert.ok(alive(child));
    const run = await runCli(cliFor(server), ["jobs", "cancel", id]);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.match(
      run.stdout,
      new RegExp(`^Job ${id} cancelled in [\\d.]+s by its server \\(pid ${server.pid}\\)`),
    );
    const record = readRecord(server.stateDir, id) as { state: string; child?: unknown };
    assert.equal(record.state, "cancelled");
    assert.equal(record.child, undefined);
    assert.equal(alive(child), false, `delegate pid ${child} survived`);
    // The server that owns it agrees.
    const status = await server.call("delegate_status", { job_id: id });
    assert.equal(field(status.text, "state"), "cancelled");
    // The orchestrator is told who stopped its delegate.
    assert.equal(
      field(status.text, "error"),
      "Cancelled from a terminal (ollama-delegate jobs cancel)",
    );
    const again = await runCli(cliFor(server), ["jobs", "cancel", id.slice(0, 8)]);
    assert.match(again.stdout, /had already ended \(cancelled\); nothing to cancel/);
  } finally {
    await server.close();
    await emu.close();
  }
});

Deno.test("jobs tail follows a live claude job until it ends, then prints the result", async () => {
  const emu = await startOllamaEmulator();
  const server = await startServer({ baseUrl: emu.url });
  try {
    const started = await server.call("delegate_start", {
      prompt: "@delay 1500\n@bash echo tail-one\n@bash echo tail-two\n@reply all finished here",
      model: "qwen3:8b",
      cwd: tempDir("od-work-"),
      allowed_tools: ["Bash"],
    });
    const id = field(started.text, "job_id")!;
    const tail = startCli(cliFor(server), ["jobs", "tail", id]);
    try {
      // Output arrives while the job runs, before its end.
      await until(() => tail.output().includes("[tool] Bash: echo tail-one"), 60_000, "tool 1");
      const record = readRecord(server.stateDir, id) as { state: string };
      const sawWhileRunning = record.state === "running";
      const run = await tail.done;
      assert.equal(run.code, 0, run.stdout + run.stderr);
      assert.ok(sawWhileRunning, "the first tool call was shown only after the job ended");
      const out = run.stdout;
      assert.match(out, new RegExp(`^--- job ${id} \\(claude, qwen3:8b\\): (queued|running) ---`));
      assert.ok(out.indexOf("echo tail-one") < out.indexOf("echo tail-two"), out);
      assert.match(
        out,
        /^--- completed after [\d.]+s · 2 tool calls · tokens in \d+ \/ out \d+.* · cost unknown ---$/m,
      );
      assert.ok(out.trimEnd().endsWith("all finished here"), out);
      // The answer is the result, below the summary, not also an activity line above it.
      assert.equal(out.split("all finished here").length - 1, 1, out);
    } finally {
      tail.child.kill();
      await tail.done.catch(() => {});
    }
  } finally {
    await server.close();
    await emu.close();
  }
});
