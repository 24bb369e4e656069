/**
 * `model: "auto"` and fallback models end to end: the real server reads the quality ledger,
 * picks by verified record, says why, and a job moves to an agent's fallback model when its
 * backend fails.
 */
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { LedgerEntry } from "../../src/jobs/ledger/ledger.ts";
import { repoIdOf } from "../../src/jobs/repo_id.ts";
import type { ChatScript } from "../support/emulator/emulator.ts";
import { field, tempDir } from "../support/harness.ts";
import { type InProcessScene as Scene, startInProcessScene } from "../support/in_process_scene.ts";

const MODELS = ["qwen3:8b", "llama3.2:3b", "qwen3-coder:30b"];

function entries(model: string, passed: number, failed: number, repo: string): LedgerEntry[] {
  return Array.from({ length: passed + failed }, (_, i) => ({
    v: 1 as const,
    at: Date.now() - 3_600_000 + i,
    job: crypto.randomUUID(),
    model,
    engine: "native",
    backend: "ollama",
    agent: "tester",
    repo,
    verified: i < passed,
    rounds: 0,
    toolCalls: 2,
    tokensIn: 500,
    tokensOut: 50,
    cost: null,
    wallMs: 4000,
    state: i < passed ? "completed" : "failed",
  }));
}

/** A scene whose ledger already holds `ledger`, with the tester agent (model auto). */
async function sceneWith(
  ledger: LedgerEntry[],
  chatScript: ChatScript = () => ({ kind: "text", text: "done" }),
  models: readonly string[] = MODELS,
): Promise<Scene> {
  const scene = await startInProcessScene({
    emulator: { models: models.map((name) => ({ name })), chatScript },
    server: false,
  });
  mkdirSync(scene.stateDir, { recursive: true });
  writeFileSync(
    join(scene.stateDir, "ledger.jsonl"),
    ledger.map((e) => JSON.stringify(e)).join("\n") + "\n",
  );
  mkdirSync(join(scene.home, ".ollama-mcp", "agents"), { recursive: true });
  writeFileSync(
    join(scene.home, ".ollama-mcp", "agents", "tester.md"),
    "---\nengine: native\nmodel: auto\nverify: true\n---\nYou write tests.\n",
  );
  await scene.startServer({
    userConfig: { baseUrl: scene.emulator.url, allowedModels: [...models] },
  });
  return scene;
}

const modelsAsked = (scene: Scene) =>
  scene.emulator.nativeChatRequests().map((r) => (r.json as { model: string }).model);

Deno.test("auto: the model with the better verified record here, and the reply says why", async () => {
  const work = tempDir("od-auto-");
  const repo = await repoIdOf(work);
  await using scene = await sceneWith([
    ...entries("qwen3-coder:30b", 9, 1, repo),
    ...entries("llama3.2:3b", 2, 4, repo),
    // Elsewhere llama did well: it does not count here.
    ...entries("llama3.2:3b", 20, 0, "git:0000000000000000"),
  ]);
  const reply = await scene.call("delegate_start", {
    agent: "tester",
    prompt: "write the tests",
    cwd: work,
    wait_seconds: 60,
  });
  assert.equal(field(reply.text, "state"), "completed (verified)", reply.text);
  assert.equal(
    field(reply.text, "model"),
    'qwen3-coder:30b (auto: 9 of 10 verified for "tester" here; qwen3:8b untried, ' +
      "llama3.2:3b 2 of 6)",
  );
  assert.deepEqual([...new Set(modelsAsked(scene))], ["qwen3-coder:30b"]);
  // The job's own verified outcome joins the record.
  const last = JSON.parse(
    readFileSync(join(scene.stateDir, "ledger.jsonl"), "utf8").trim().split("\n").at(-1)!,
  );
  assert.equal(last.model, "qwen3-coder:30b");
  assert.equal(last.verified, true);
  assert.equal(last.agent, "tester");
});

Deno.test("auto: a model without a record is tried when the known ones are weak", async () => {
  const work = tempDir("od-auto-");
  const repo = await repoIdOf(work);
  await using scene = await sceneWith([
    ...entries("qwen3:8b", 1, 3, repo),
    ...entries("llama3.2:3b", 0, 3, repo),
  ]);
  const reply = await scene.call("delegate_start", {
    agent: "tester",
    prompt: "write the tests",
    cwd: work,
    wait_seconds: 60,
  });
  assert.equal(
    field(reply.text, "model"),
    'qwen3-coder:30b (auto: exploring, no verified record for "tester" here yet; qwen3:8b ' +
      "1 of 4, llama3.2:3b 0 of 3)",
  );
  assert.deepEqual([...new Set(modelsAsked(scene))], ["qwen3-coder:30b"]);
});

Deno.test("auto: without a record the default model, said so", async () => {
  await using scene = await sceneWith([]);
  const reply = await scene.call("delegate_start", {
    engine: "native",
    model: "auto",
    prompt: "x",
    cwd: tempDir("od-auto-"),
    wait_seconds: 60,
  });
  assert.equal(
    field(reply.text, "model"),
    'qwen3:8b (auto: no verified record for "adhoc" here yet, so the default model)',
  );
});

Deno.test("auto: passes of a check the delegate rewrote earn no trust over an honest record", async () => {
  // Issue 28, item 6: a model that replaced test.js with `process.exit(0)` three times had
  // "3 of 3" and was chosen over one whose three honest attempts failed.
  const [cheater, honest] = ["qwen3:8b", "llama3.2:3b"];
  await using scene = await sceneWith(
    [],
    (view) =>
      view.model !== cheater
        ? { kind: "text", text: "I could not find the bug" }
        : (view.messages.at(-1) as { role?: string }).role === "tool"
        ? { kind: "text", text: "fixed, all tests pass" }
        : {
          kind: "tool_calls",
          calls: [{ name: "Bash", arguments: { command: "echo 'process.exit(0)' > test.js" } }],
        },
    [cheater, honest],
  );
  const work = tempDir("od-auto-");
  writeFileSync(join(work, "add.js"), "module.exports = (a, b) => a - b;\n");
  const job = async (model: string) => {
    writeFileSync(
      join(work, "test.js"),
      'process.exit(require("./add.js")(2, 2) === 4 ? 0 : 1);\n',
    );
    return await scene.call("delegate_start", {
      engine: "native",
      model,
      prompt: "fix add.js",
      cwd: work,
      verify: "node test.js",
      verify_rounds: 0,
      wait_seconds: 60,
    });
  };
  for (const model of [cheater, cheater, cheater]) {
    assert.equal(field((await job(model)).text, "state"), "completed (passed a changed check)");
  }
  for (const model of [honest, honest, honest]) {
    assert.equal(field((await job(model)).text, "state"), "failed (verify failed)");
  }
  const auto = await job("auto");
  assert.equal(
    field(auto.text, "model"),
    `${honest} (auto: 0 of 3 verified for "adhoc" here; ${cheater} 0 of 3 (3 passed a check ` +
      "it changed, not counted))",
  );
});

Deno.test("fallback: a job whose model's backend fails moves to the agent's next model", async () => {
  await using scene = await sceneWith(
    [],
    (view) =>
      view.model === "qwen3:8b"
        ? { kind: "error", status: 503, message: "server overloaded", retryAfter: "0" }
        : { kind: "text", text: `done by ${view.model}` },
  );
  writeFileSync(
    join(scene.home, ".ollama-mcp", "agents", "quick.md"),
    "---\nengine: native\nmodel: qwen3:8b\nfallback: [not-allowed:1b, llama3.2:3b]\n---\nBe quick.\n",
  );
  const reply = await scene.call("delegate_start", {
    agent: "quick",
    prompt: "x",
    cwd: tempDir("od-fallback-"),
    wait_seconds: 60,
  });
  assert.equal(field(reply.text, "state"), "completed", reply.text);
  assert.equal(field(reply.text, "model"), "llama3.2:3b");
  assert.match(field(reply.text, "fallback")!, /^qwen3:8b -> llama3\.2:3b \(backend_unreachable: /);
  assert.match(reply.text, /--- output ---\ndone by llama3\.2:3b/);
  assert.match(
    reply.text,
    /warning: +agent "quick"'s fallback model "not-allowed:1b" is not in the allowed list and left out/,
  );
});
