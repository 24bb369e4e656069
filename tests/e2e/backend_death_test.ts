/**
 * A backend that dies mid-turn ends the job soon, on both engines, with the same reason: the
 * real server, the real Claude Code CLI and the emulator, which is closed (its port then
 * refuses connections, as a killed Ollama's does) while a reply hangs or while the delegate's
 * command runs. Claude Code alone would retry for minutes, the job `running` all along.
 * A backend that only fails a request (503, 429) or comes back within seconds keeps the job.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { field, tempDir, until } from "../support/harness.ts";
import type { Reply } from "../support/emulator/emulator.ts";
import { type Scene, startScene } from "../support/scene.ts";

/** The promise of issue 18, item 5: from the backend's death to a failed job. */
const FAIL_WITHIN_MS = 15_000;
/** The native engine's wording, with the URL and the system's reason left open. */
const UNREACHABLE =
  /^backend_unreachable: Cannot reach Ollama at http:\/\/127\.0\.0\.1:\d+: connection failed \(.+\)\. Start it with "ollama serve" or the Ollama app$/;

/** A scene with the default state-dir layout (~/.ollama-mcp/jobs). */
function scene(script?: (req: { lastUserText: string }) => Reply | undefined) {
  const home = tempDir("od-home-");
  return startScene({
    home,
    stateDir: join(home, ".ollama-mcp", "jobs"),
    ...(script ? { emulator: { script } } : {}),
  });
}

async function start(s: Scene, prompt: string, engine: "claude" | "native", cwd: string) {
  const started = await s.call("delegate_start", {
    prompt,
    engine,
    model: "qwen3:8b",
    cwd,
    allowed_tools: ["Bash"],
  });
  assert.equal(started.isError, false, started.text);
  return field(started.text, "job_id")!;
}

/** Closes the emulator, then waits for the job to end: its status and the time it took. */
async function killBackendAndWait(s: Scene, id: string) {
  const t0 = performance.now();
  await s.emulator.close();
  const status = await s.call("delegate_status", { job_id: id, wait_seconds: 60 });
  return { status, ms: performance.now() - t0 };
}

for (const engine of ["claude", "native"] as const) {
  Deno.test(`${engine} engine: a backend that dies while a reply hangs fails the job within 15 s as backend_unreachable`, async () => {
    await using s = await scene();
    const id = await start(s, "@hang", engine, s.cwd);
    const asked = engine === "claude" ? s.emulator.messageRequests : s.emulator.nativeChatRequests;
    await until(() => asked().length > 0 || undefined, 90_000, "the request that hangs");
    const { status, ms } = await killBackendAndWait(s, id);
    assert.equal(field(status.text, "state"), "failed", status.text);
    assert.match(field(status.text, "error") ?? "", UNREACHABLE);
    assert.ok(ms < FAIL_WITHIN_MS, `the job ended ${Math.round(ms)} ms after the backend died`);
    console.log(`${engine}: backend death to failed job ${(ms / 1000).toFixed(1)} s`);
    // Once Ollama is back, a follow-up continues the job.
    await s.startEmulator({
      port: s.emulator.port,
      script: () => ({ kind: "text", text: "resumed after the outage" }),
      chatScript: () => ({ kind: "text", text: "resumed after the outage" }),
    });
    const next = await s.call("delegate_followup", {
      job_id: id,
      prompt: "carry on",
      wait_seconds: 90,
    });
    assert.equal(field(next.text, "state"), "completed", next.text);
    assert.match(next.text, /resumed after the outage/);
  });
}

Deno.test("claude engine: a backend that dies while the delegate's command runs fails the job within 15 s", async () => {
  await using s = await scene();
  const work = tempDir("od-work-");
  const id = await start(s, "@bash touch started && sleep 3\n@reply never", "claude", work);
  await until(() => existsSync(join(work, "started")) || undefined, 90_000, "the command");
  const { status, ms } = await killBackendAndWait(s, id);
  assert.equal(field(status.text, "state"), "failed", status.text);
  assert.match(field(status.text, "error") ?? "", UNREACHABLE);
  assert.match(status.text, /tool calls: 1/);
  assert.ok(ms < FAIL_WITHIN_MS, `the job ended ${Math.round(ms)} ms after the backend died`);
});

for (const status of [503, 429]) {
  Deno.test(`claude engine: a backend that answers ${status} once, then recovers, keeps the job`, async () => {
    let first = true;
    await using s = await scene(() => {
      if (!first) return undefined;
      first = false;
      return { kind: "error", status, message: "busy, try again" };
    });
    const id = await start(s, "@reply recovered", "claude", s.cwd);
    const end = await s.call("delegate_status", { job_id: id, wait_seconds: 90 });
    assert.equal(field(end.text, "state"), "completed", end.text);
    const result = await s.call("delegate_result", { job_id: id });
    assert.match(result.text, /recovered/);
    const failed = s.emulator.messageRequests()[0]!;
    assert.equal(s.emulator.messageRequests().length, 2, "one failed request, one retry");
    assert.match(end.text, new RegExp(`API retry 1/10: ${status}`));
    // The retry made the server ask the backend itself, and its answer kept the job.
    const probes = s.emulator.requests.filter((r) =>
      r.path === "/api/version" && r.at >= failed.at
    );
    assert.ok(probes.length > 0, "the backend was probed after the failed request");
  });
}

Deno.test("claude engine: a backend that restarts within a few seconds keeps the job", async () => {
  await using s = await scene();
  const work = tempDir("od-work-");
  const id = await start(
    s,
    "@bash touch started && sleep 2\n@reply after the restart",
    "claude",
    work,
  );
  await until(() => existsSync(join(work, "started")) || undefined, 90_000, "the command");
  const port = s.emulator.port;
  await s.emulator.close();
  // Down for 3 s, as a service manager restarting Ollama might leave it; the retries that
  // Claude Code makes meanwhile are refused.
  await new Promise((r) => setTimeout(r, 3000));
  const back = await s.startEmulator({ port });
  const end = await s.call("delegate_status", { job_id: id, wait_seconds: 90 });
  assert.equal(field(end.text, "state"), "completed", end.text);
  assert.match(end.text, /API retry 1\/10/, "Claude Code's requests failed meanwhile");
  assert.ok(back.messageRequests().length > 0, "the turn went on with the restarted backend");
  const result = await s.call("delegate_result", { job_id: id });
  assert.match(result.text, /after the restart/);
});
