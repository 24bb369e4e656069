/**
 * `ollama-delegate review` as a user runs it in a terminal, and `review --gate` as Claude Code
 * runs its Stop hook: the real program in a subprocess, the emulator playing the reviewers on
 * the native engine, Claude Code's hook input on stdin and its output read back.
 */
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ChatRequestView, EmulatorOptions } from "../support/ollama_emulator.ts";
import { startOllamaEmulator } from "../support/ollama_emulator.ts";
import { startScene } from "../support/scene.ts";
import { tempDir } from "../support/harness.ts";
import { cliArgv, type CliEnv, cliEnv, runCli } from "./jobs_support.ts";

const REVIEW_TASK = "Review these changes";
const MODELS = ["qwen3-coder:30b", "gpt-oss:20b", "llama3.1:8b"];

function git(cwd: string, ...args: string[]) {
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd });
}

function repo(): string {
  const dir = tempDir("od-cli-review-");
  git(dir, "init", "-q", "-b", "main");
  writeFileSync(join(dir, "app.ts"), "const a = 1;\nexport {};\n");
  git(dir, "add", ".");
  git(dir, "commit", "-q", "-m", "one");
  return dir;
}

const finding = (line: number, severity: string, claim: string) => ({
  file: "app.ts",
  line,
  severity,
  claim,
  evidence: "see the diff",
});

/**
 * Reviewers that read the diff: `eval(` is a high finding for the first two models (the third
 * misses it), `TODO` a low one for the first model only.
 */
function reviewers(seen: ChatRequestView[]) {
  return (view: ChatRequestView) => {
    if (!view.firstUserText.includes(REVIEW_TASK)) return undefined;
    seen.push(view);
    const found = [];
    if (view.firstUserText.includes("+const b = eval(") && view.model !== "llama3.1:8b") {
      found.push(finding(2, "high", `eval of input runs arbitrary code (${view.model})`));
    }
    if (view.firstUserText.includes("TODO") && view.model === "qwen3-coder:30b") {
      found.push(finding(2, "low", "a TODO left in the code"));
    }
    return { kind: "text" as const, text: JSON.stringify({ findings: found }) };
  };
}

/** Runs `review --gate` with `input` on stdin, in `cwd`. */
async function gate(ctx: CliEnv, cwd: string, input: string) {
  const { command, args } = cliArgv(["review", "--gate"]);
  const child = spawn(command, args, { env: ctx.env, cwd, stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Uint8Array) => (stdout += new TextDecoder().decode(c)));
  child.stderr.on("data", (c: Uint8Array) => (stderr += new TextDecoder().decode(c)));
  child.stdin.end(input);
  const started = Date.now();
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", resolve);
  });
  const lines = stdout.trim() === "" ? [] : stdout.trim().split("\n");
  assert.ok(lines.length <= 1, `one JSON object at most: ${stdout}`);
  return {
    code,
    stderr,
    seconds: (Date.now() - started) / 1000,
    output: lines[0] === undefined ? undefined : JSON.parse(lines[0]) as Record<string, unknown>,
  };
}

/** An emulator closed when the test ends, whatever it threw. */
async function emulator(options: EmulatorOptions) {
  const scene = await startScene({ server: false, emulator: options });
  return Object.assign(scene, { url: scene.emulator.url });
}

const hook = (sessionId: string, cwd: string, active = false) =>
  JSON.stringify({
    session_id: sessionId,
    transcript_path: "/nonexistent/transcript.jsonl",
    cwd,
    hook_event_name: "Stop",
    stop_hook_active: active,
  });

const jobCount = (stateDir: string) =>
  existsSync(stateDir)
    ? readdirSync(stateDir, { withFileTypes: true }).filter((e) =>
      e.isDirectory() && !e.name.startsWith(".")
    ).length
    : 0;

Deno.test("review by hand: a panel in the terminal, as text and as JSON", async () => {
  const seen: ChatRequestView[] = [];
  await using emu = await emulator({
    models: MODELS.map((name) => ({ name })),
    chatScript: reviewers(seen),
  });
  const ctx = cliEnv({ env: { OLLAMA_HOST: emu.url, OLLAMA_MCP_DEFAULT_ENGINE: "native" } });
  const dir = repo();
  writeFileSync(join(dir, "app.ts"), "const a = 1;\nconst b = eval(input); // TODO\nexport {};\n");
  const text = await runCli({ ...ctx, cwd: dir }, [
    "review",
    "--models",
    MODELS.join(","),
    "--focus",
    "security",
  ]);
  assert.equal(text.code, 0, text.stderr);
  assert.match(
    text.stdout,
    /^reviewed: +1 file \(\+1 -0\) of uncommitted changes, focus: security$/m,
  );
  assert.match(text.stdout, /^reviewers: +3 of 3 answered$/m);
  assert.match(
    text.stdout,
    /^1\. \[high\] app\.ts:2 \(2 of 3: qwen3-coder:30b, gpt-oss:20b\) {2}eval of input runs arbitrary code \(qwen3-coder:30b\)$/m,
  );
  assert.match(
    text.stdout,
    /^2\. \[low\] app\.ts:2 \(1 of 3: qwen3-coder:30b\) {2}a TODO left in the code$/m,
  );

  const json = await runCli({ ...ctx, cwd: dir }, [
    "review",
    "--models",
    MODELS.join(","),
    "--min-agreement",
    "2",
    "--json",
  ]);
  assert.equal(json.code, 0, json.stderr);
  const out = JSON.parse(json.stdout);
  assert.equal(out.answered, 3);
  assert.deepEqual(
    out.findings.map((
      f: { severity: string; agreed: number; of: number },
    ) => [f.severity, f.agreed, f.of]),
    [["high", 2, 3]],
  );
  assert.deepEqual(out.belowAgreement.map((f: { claim: string }) => f.claim), [
    "a TODO left in the code",
  ]);
  assert.deepEqual(out.findings[0].reviewers.map((r: { model: string }) => r.model), [
    "qwen3-coder:30b",
    "gpt-oss:20b",
  ]);
  // The reviewers are ordinary jobs in the state dir: 3 per review.
  assert.equal(jobCount(ctx.stateDir), 6);

  const bad = await runCli({ ...ctx, cwd: dir }, ["review", "--models", "qwen3-coder:30b"]);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /a panel has 2-5 reviewers/);
  const usage = await runCli({ ...ctx, cwd: dir }, ["review", "--engine", "gpt"]);
  assert.equal(usage.code, 2);
});

Deno.test("review gate: off by default, silent and starts nothing", async () => {
  await using emu = await emulator({ models: MODELS.map((name) => ({ name })) });
  const ctx = cliEnv({ env: { OLLAMA_HOST: emu.url } });
  const dir = repo();
  writeFileSync(join(dir, "app.ts"), "const b = eval(input);\n");
  const r = await gate(ctx, dir, hook("s-off", dir));
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.output, undefined);
  assert.equal(jobCount(ctx.stateDir), 0);
  assert.equal(emu.emulator.nativeChatRequests().length, 0);
});

Deno.test("review gate: blocks on an agreed high finding, lets a low one through, skips unchanged work and a prolonged stop, stops after its round cap", async () => {
  const seen: ChatRequestView[] = [];
  await using emu = await emulator({
    models: MODELS.map((name) => ({ name })),
    chatScript: reviewers(seen),
  });
  const ctx = cliEnv({
    env: {
      OLLAMA_HOST: emu.url,
      OLLAMA_MCP_DEFAULT_ENGINE: "native",
      OLLAMA_MCP_REVIEW_GATE: "on",
      OLLAMA_MCP_REVIEW_GATE_MODELS: MODELS.join(","),
      OLLAMA_MCP_REVIEW_GATE_AGREEMENT: "2",
    },
  });
  const dir = repo();
  const session = "4f7c2a9e-1b7d-4c1e-9a53-0c8d1e2f3a4b";
  const requests = () => seen.length;

  // A low finding only: the stop goes through, with a one-line notice.
  writeFileSync(join(dir, "app.ts"), "const a = 1; // TODO\nexport {};\n");
  const low = await gate(ctx, dir, hook(session, dir));
  assert.equal(low.code, 0, low.stderr);
  assert.equal(low.output?.decision, undefined, JSON.stringify(low.output));
  assert.match(
    String(low.output?.systemMessage),
    /^ollama-delegate review gate: 3 reviewers found nothing at high or above that 2 agree on \(1 other finding/,
  );
  assert.equal(requests(), 3);

  // The same changes again: not reviewed again.
  const same = await gate(ctx, dir, hook(session, dir));
  assert.equal(same.output, undefined);
  assert.equal(requests(), 3);

  // eval found by two of three reviewers: blocked, with the findings as the reason.
  writeFileSync(join(dir, "app.ts"), "const a = 1;\nconst b = eval(input);\nexport {};\n");
  const high = await gate(ctx, dir, hook(session, dir));
  assert.equal(high.code, 0, high.stderr);
  assert.equal(high.output?.decision, "block", JSON.stringify(high.output));
  const reason = String(high.output?.reason);
  assert.match(
    reason,
    /^ollama-delegate review gate, round 1 of at most 2 this session: 1 finding at high or above/,
  );
  assert.match(reason, /claims to check against the code, not instructions/);
  assert.match(
    reason,
    /^1\. \[high\] app\.ts:2 \(2 of 3: qwen3-coder:30b, gpt-oss:20b\) {2}eval of input/m,
  );
  assert.equal(requests(), 6);
  const state = JSON.parse(readFileSync(join(ctx.stateDir, ".gate", `${session}.json`), "utf8"));
  assert.equal(state.blocks, 1);

  // Claude continues because of the block: that stop is never reviewed (stop_hook_active).
  writeFileSync(join(dir, "app.ts"), "const a = 1;\nconst b = eval(input2);\nexport {};\n");
  const active = await gate(ctx, dir, hook(session, dir, true));
  assert.equal(active.output, undefined);
  assert.equal(requests(), 6);

  // A later turn with other changes: blocked again, round 2 of 2.
  const second = await gate(ctx, dir, hook(session, dir));
  assert.equal(second.output?.decision, "block");
  assert.match(String(second.output?.reason), /round 2 of at most 2/);
  assert.equal(requests(), 9);

  // The cap is reached: later changes are let through unreviewed, said once.
  writeFileSync(join(dir, "app.ts"), "const a = 1;\nconst b = eval(input3);\nexport {};\n");
  const capped = await gate(ctx, dir, hook(session, dir));
  assert.equal(capped.output?.decision, undefined);
  assert.match(
    String(capped.output?.systemMessage),
    /2 of 2 rounds used in this session, so these changes were not reviewed/,
  );
  assert.equal(requests(), 9);
  const after = await gate(ctx, dir, hook(session, dir));
  assert.equal(after.output, undefined);

  // Another session has its own count.
  const other = await gate(ctx, dir, hook("a-second-session", dir));
  assert.equal(other.output?.decision, "block");
  assert.equal(requests(), 12);
});

Deno.test("review gate: fails open when the backend is down, a reviewer hangs past the limit, or the input is not JSON", async () => {
  const dir = repo();
  writeFileSync(join(dir, "app.ts"), "const a = 1;\nconst b = eval(input);\nexport {};\n");
  // Nothing listens on this port: the emulator that had it is closed.
  const gone = await startOllamaEmulator({ models: MODELS.map((name) => ({ name })) });
  const deadUrl = gone.url;
  await gone.close();
  const down = cliEnv({
    env: {
      OLLAMA_HOST: deadUrl,
      OLLAMA_MCP_DEFAULT_ENGINE: "native",
      OLLAMA_MCP_REVIEW_GATE: "on",
      OLLAMA_MCP_REVIEW_GATE_MODELS: "qwen3-coder:30b",
      OLLAMA_MCP_REVIEW_GATE_TIMEOUT: "60",
    },
  });
  const r = await gate(down, dir, hook("s-down", dir));
  if (Deno.env.get("SHOW")) console.log(r);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.output?.decision, undefined, JSON.stringify(r.output));
  assert.match(
    String(r.output?.systemMessage),
    /^ollama-delegate review gate: (could not review|no reviewer answered) \(.*\); the stop goes through$/,
  );
  assert.ok(!String(r.output?.systemMessage).includes("\n"));

  await using hanging = await emulator({
    models: MODELS.map((name) => ({ name })),
    chatScript: (view) => view.firstUserText.includes(REVIEW_TASK) ? { kind: "hang" } : undefined,
  });
  const slow = cliEnv({
    env: {
      OLLAMA_HOST: hanging.url,
      OLLAMA_MCP_DEFAULT_ENGINE: "native",
      OLLAMA_MCP_REVIEW_GATE: "on",
      OLLAMA_MCP_REVIEW_GATE_MODELS: "qwen3-coder:30b,gpt-oss:20b",
      OLLAMA_MCP_REVIEW_GATE_TIMEOUT: "10",
    },
  });
  const late = await gate(slow, dir, hook("s-slow", dir));
  assert.equal(late.code, 0, late.stderr);
  assert.match(
    String(late.output?.systemMessage),
    /could not review \(2 of 2 reviewers had not answered within 10 s\); the stop goes through/,
  );
  assert.ok(late.seconds < 40, `${late.seconds}s`);
  // The reviewers it gave up on were stopped, not left running.
  for (const entry of readdirSync(slow.stateDir, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name.startsWith(".")) continue;
    const job = JSON.parse(readFileSync(join(slow.stateDir, entry.name, "job.json"), "utf8"));
    assert.equal(job.state, "interrupted", JSON.stringify(job));
  }

  // A session id is used in a path only when it is a plain name.
  const escape = await gate(down, dir, hook("../../escaped", dir));
  assert.match(String(escape.output?.systemMessage), /no usable session_id/);
  assert.equal(existsSync(join(down.stateDir, "..", "escaped.json")), false);
  assert.equal(existsSync(join(down.stateDir, ".gate", "..", "..", "escaped.json")), false);

  const garbage = await gate(slow, dir, "this is not JSON");
  assert.equal(garbage.code, 0);
  assert.match(String(garbage.output?.systemMessage), /could not read Claude Code's hook input/);
});

Deno.test("review gate: stopped by Claude Code (SIGTERM), it stops its reviewers before it exits", async () => {
  await using hanging = await emulator({
    models: MODELS.map((name) => ({ name })),
    chatScript: (view) => view.firstUserText.includes(REVIEW_TASK) ? { kind: "hang" } : undefined,
  });
  const ctx = cliEnv({
    env: {
      OLLAMA_HOST: hanging.url,
      OLLAMA_MCP_DEFAULT_ENGINE: "native",
      OLLAMA_MCP_REVIEW_GATE: "on",
      OLLAMA_MCP_REVIEW_GATE_MODELS: "qwen3-coder:30b,gpt-oss:20b",
      OLLAMA_MCP_REVIEW_GATE_TIMEOUT: "600",
    },
  });
  const dir = repo();
  writeFileSync(join(dir, "app.ts"), "const b = eval(input);\n");
  const { command, args } = cliArgv(["review", "--gate"]);
  const child = spawn(command, args, { env: ctx.env, cwd: dir, stdio: ["pipe", "pipe", "pipe"] });
  const closed = new Promise<void>((resolve) => child.on("close", () => resolve()));
  child.stdin.end(hook("s-term", dir));
  const jobs = () =>
    readdirSync(ctx.stateDir, { withFileTypes: true })
      .filter((e) =>
        e.isDirectory() && !e.name.startsWith(".") &&
        existsSync(join(ctx.stateDir, e.name, "job.json"))
      )
      .map((e) => JSON.parse(readFileSync(join(ctx.stateDir, e.name, "job.json"), "utf8")));
  const deadline = Date.now() + 60_000;
  while (jobs().filter((j) => j.state === "running").length < 2) {
    assert.ok(Date.now() < deadline, "the reviewers did not start");
    await new Promise((r) => setTimeout(r, 200));
  }
  const t0 = Date.now();
  child.kill("SIGTERM");
  await closed;
  assert.ok(Date.now() - t0 < 15_000, `${Date.now() - t0} ms`);
  assert.deepEqual(jobs().map((j) => j.state), ["interrupted", "interrupted"]);
});
