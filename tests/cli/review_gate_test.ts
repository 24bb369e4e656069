/**
 * `ollama-delegate review --gate` as Claude Code runs its Stop hook: the hook input in, one
 * JSON object (or nothing) read back, the emulator playing the reviewers. The gate runs in this
 * process (tests/cli/review_support.ts); the SIGTERM test starts the real program.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ChatRequestView } from "../support/ollama_emulator.ts";
import { startOllamaEmulator } from "../support/ollama_emulator.ts";
import { cliArgv, cliEnv } from "./jobs_support.ts";
import {
  emulator,
  gate,
  hook,
  jobCount,
  MODELS,
  repo,
  REVIEW_TASK,
  reviewers,
} from "./review_support.ts";

Deno.test("review gate: off by default, silent and starts nothing", async () => {
  await using emu = await emulator({ models: MODELS.map((name) => ({ name })) });
  const ctx = cliEnv({ env: { OLLAMA_HOST: emu.url } });
  const dir = repo();
  writeFileSync(join(dir, "app.ts"), "const b = eval(input);\n");
  const r = await gate(ctx, hook("s-off", dir));
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
  const low = await gate(ctx, hook(session, dir));
  assert.equal(low.code, 0, low.stderr);
  assert.equal(low.output?.decision, undefined, JSON.stringify(low.output));
  assert.match(
    String(low.output?.systemMessage),
    /^ollama-delegate review gate: 3 reviewers found nothing at high or above that 2 agree on \(1 other finding/,
  );
  assert.equal(requests(), 3);

  // The same changes again: not reviewed again.
  const same = await gate(ctx, hook(session, dir));
  assert.equal(same.output, undefined);
  assert.equal(requests(), 3);

  // eval found by two of three reviewers: blocked, with the findings as the reason.
  writeFileSync(join(dir, "app.ts"), "const a = 1;\nconst b = eval(input);\nexport {};\n");
  const high = await gate(ctx, hook(session, dir));
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
  const active = await gate(ctx, hook(session, dir, true));
  assert.equal(active.output, undefined);
  assert.equal(requests(), 6);

  // A later turn with other changes: blocked again, round 2 of 2.
  const second = await gate(ctx, hook(session, dir));
  assert.equal(second.output?.decision, "block");
  assert.match(String(second.output?.reason), /round 2 of at most 2/);
  assert.equal(requests(), 9);

  // The cap is reached: later changes are let through unreviewed, said once.
  writeFileSync(join(dir, "app.ts"), "const a = 1;\nconst b = eval(input3);\nexport {};\n");
  const capped = await gate(ctx, hook(session, dir));
  assert.equal(capped.output?.decision, undefined);
  assert.match(
    String(capped.output?.systemMessage),
    /2 of 2 rounds used in this session, so these changes were not reviewed/,
  );
  assert.equal(requests(), 9);
  const after = await gate(ctx, hook(session, dir));
  assert.equal(after.output, undefined);

  // Another session has its own count.
  const other = await gate(ctx, hook("a-second-session", dir));
  assert.equal(other.output?.decision, "block");
  assert.equal(requests(), 12);
});

Deno.test("review gate: fails open when the backend is down, reviewers answer prose or hang past the limit, or the input is not JSON", async () => {
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
  const r = await gate(down, hook("s-down", dir));
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
  const late = await gate(slow, hook("s-slow", dir));
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
  const escape = await gate(down, hook("../../escaped", dir));
  assert.match(String(escape.output?.systemMessage), /no usable session_id/);
  assert.equal(existsSync(join(down.stateDir, "..", "escaped.json")), false);
  assert.equal(existsSync(join(down.stateDir, ".gate", "..", "..", "escaped.json")), false);

  await using chatty = await emulator({
    models: MODELS.map((name) => ({ name })),
    chatScript: (view) =>
      view.firstUserText.includes(REVIEW_TASK)
        ? { kind: "text", text: "Looks great, no problems at all!" }
        : undefined,
  });
  const prose = await gate(
    cliEnv({
      env: {
        OLLAMA_HOST: chatty.url,
        OLLAMA_MCP_DEFAULT_ENGINE: "native",
        OLLAMA_MCP_REVIEW_GATE: "on",
        OLLAMA_MCP_REVIEW_GATE_MODELS: "qwen3-coder:30b,gpt-oss:20b",
      },
    }),
    hook("s-prose", dir),
  );
  assert.equal(prose.output?.decision, undefined, JSON.stringify(prose.output));
  assert.match(
    String(prose.output?.systemMessage),
    /no reviewer answered \(its reply was not findings JSON \(no JSON found in it\): .*\); the stop goes through$/,
  );

  const garbage = await gate(slow, "this is not JSON");
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
