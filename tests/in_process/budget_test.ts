/**
 * Budgets end to end: a job past its `budget_tokens` is stopped at the next model response on
 * both engines, with `budget_exhausted:` and the evidence so far.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { field, tempDir } from "../support/harness.ts";
import { startInProcessScene } from "../support/in_process_scene.ts";

const linux = process.platform === "linux";
const MODEL = "qwen3:8b";

Deno.test("native: a job past budget_tokens stops before the tools of that response run", async () => {
  await using scene = await startInProcessScene({
    emulator: {
      // A model that would call tools forever.
      chatScript: () => ({
        kind: "tool_calls",
        calls: [{ name: "Bash", arguments: { command: "echo ran >> ran.txt" } }],
      }),
    },
  });
  const work = tempDir("od-budget-");
  const reply = await scene.call("delegate_start", {
    engine: "native",
    model: MODEL,
    prompt: "loop",
    cwd: work,
    budget_tokens: 5,
    wait_seconds: 60,
  });
  assert.equal(reply.isError, true, reply.text);
  assert.equal(field(reply.text, "state"), "failed");
  assert.match(
    field(reply.text, "error")!,
    /^budget_exhausted: the job used \d+ tokens, past its budget_tokens 5;/,
  );
  assert.match(field(reply.text, "budget")!, /^\d+ of 5 tokens$/);
  assert.equal(existsSync(join(work, "ran.txt")), false, "the response's tool call did not run");
  assert.equal(scene.emulator.nativeChatRequests().length, 1);
});

Deno.test({
  name: "claude: a job past budget_tokens is stopped with budget_exhausted",
  ignore: !linux,
  async fn() {
    await using scene = await startInProcessScene({
      emulator: {
        script: () => ({
          kind: "tool_use",
          name: "Bash",
          input: { command: "echo ran >> ran.txt" },
        }),
      },
    });
    const reply = await scene.call("delegate_start", {
      model: MODEL,
      prompt: "loop",
      cwd: tempDir("od-budget-"),
      allowed_tools: ["Bash"],
      budget_tokens: 5,
      wait_seconds: 150,
    }, { timeoutMs: 200_000 });
    assert.equal(field(reply.text, "state"), "failed", reply.text);
    assert.match(field(reply.text, "error")!, /^budget_exhausted: the job used \d+ tokens/);
    // Stopped at the first response or right after it, not at max_turns.
    assert.match(field(reply.text, "budget")!, /^[1-9]\d* of 5 tokens$/);
    assert.ok(
      scene.emulator.messageRequests().length <= 3,
      `${scene.emulator.messageRequests().length} requests`,
    );
  },
});

Deno.test("a daily budget refuses the next job on its backend, naming the spend and the reset", async () => {
  await using scene = await startInProcessScene({
    emulator: { chatScript: () => ({ kind: "text", text: "done" }) },
    server: false,
  });
  await scene.startServer({
    userConfig: { baseUrl: scene.emulator.url, dailyBudgetTokens: { ollama: 10 } },
  });
  const job = {
    engine: "native",
    model: MODEL,
    prompt: "x",
    cwd: tempDir("od-daily-"),
    wait_seconds: 60,
  };
  const first = await scene.call("delegate_start", job);
  assert.equal(field(first.text, "state"), "completed", first.text);
  const second = await scene.call("delegate_start", job);
  assert.equal(second.isError, true);
  assert.match(
    second.text,
    /^Cannot start job: backend "ollama" has used \d+ tokens of its daily budget 10 \(dailyBudgetTokens\) today \(UTC\); the day resets at \d{4}-\d\d-\d\d 00:00 UTC, in /,
  );
  const usage = await scene.call("delegate_usage", {});
  assert.match(
    usage.text,
    /Daily budgets \(UTC day; .*\n {2}ollama: \d+ of 10 tokens {2}<- reached/,
  );
  // A follow-up is a new job too.
  const followup = await scene.call("delegate_followup", {
    job_id: field(first.text, "job_id"),
    prompt: "more",
  });
  assert.match(followup.text, /daily budget 10/);
});
