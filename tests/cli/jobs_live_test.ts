/**
 * `jobs tail` and `jobs cancel` from a terminal against a job that another process runs: the
 * real server over stdio, the real Claude Code CLI, the Ollama emulator. A native job's running
 * command is tailed with the server in this process (its jobs are still real: bubblewrap, the
 * emulator).
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { startOllamaEmulator } from "../support/emulator/emulator.ts";
import { alive, field, startServer, tempDir, until } from "../support/harness.ts";
import { startInProcessScene } from "../support/in_process_scene.ts";
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

Deno.test("jobs tail shows a native command's output as it comes, before the command ends", async () => {
  await using scene = await startInProcessScene();
  // A quick command (its result shows its output), then one that prints, then runs on.
  const started = await scene.call("delegate_start", {
    engine: "native",
    model: "qwen3:8b",
    prompt: "@bash echo quick-one\n@bash echo first-line; sleep 6; echo last-line\n" +
      "@reply ran the tests\nrun the tests",
    cwd: tempDir("od-work-"),
    wait_seconds: 0,
  });
  const id = field(started.text, "job_id")!;
  const transcript = join(scene.stateDir, id, "transcript.jsonl");
  const results = () =>
    existsSync(transcript)
      ? readFileSync(transcript, "utf8").split("\n").filter((l) => l.includes('"tool_result"'))
        .length
      : 0;
  const tail = startCli(cliFor(scene), ["jobs", "tail", id]);
  try {
    // The first line of the long command shows while it still runs: its result is not in.
    const seen = await until(
      () =>
        tail.output().includes("[output] first-line")
          ? "output"
          : results() >= 2
          ? "result"
          : undefined,
      60_000,
      "the running command's first line, or its result",
    );
    assert.equal(seen, "output", `only at the end:\n${tail.output()}`);
    assert.equal(results(), 1, "the command had ended");
    assert.doesNotMatch(tail.output(), /\[output\] last-line/);
    const run = await tail.done;
    assert.equal(run.code, 0, run.stdout + run.stderr);
  } finally {
    tail.child.kill();
    await tail.done.catch(() => {});
  }
  const lines = (await tail.done).stdout.split("\n");
  const out = lines.join("\n");
  // In order: the call, its output as it came, then its result. The quick command's output is
  // in its result only.
  assert.equal(lines.filter((l) => l.startsWith("[output] quick-one")).length, 0, out);
  assert.ok(lines.some((l) => /^\[result\] exit code 0 \([\d.]+s\) quick-one$/.test(l)), out);
  const call = lines.indexOf("[tool] Bash: echo first-line; sleep 6; echo last-line");
  assert.ok(call > 0, out);
  assert.equal(lines[call + 1], "[output] first-line", out);
  assert.equal(lines[call + 2], "[output] last-line", out);
  assert.match(lines[call + 3]!, /^\[result\] exit code 0 \([\d.]+s\) first-line last-line$/, out);
  // delegate_transcript pages the calls, results and text as before: the output lines are
  // no entries of it.
  const page = await scene.call("delegate_transcript", { job_id: id });
  assert.doesNotMatch(page.text, /unreadable/, page.text);
  assert.equal(page.text.match(/^ {2}first-line$/gm)?.length, 1, page.text);
});
