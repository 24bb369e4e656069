/**
 * Budgets end to end: a job past its `budget_tokens` is stopped at the model response that
 * passes it, before that response's tools run, on both engines, with `budget_exhausted:` and the
 * evidence so far; and the tokens a backend reports, however wrong, are counted within the
 * server's estimates of each request and reply, by budgets and daily budgets alike (issue 28,
 * items 8 and 14).
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
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

/**
 * What a misbehaving backend may report (issue 28, item 8): a negative count erased the day's
 * spend and lifted budget_tokens, an absurd one was charged as is.
 */
const HOSTILE_COUNTS = [-1_000_000_000, 0.5, 1e15];
/** The job's `warning:` line about them, with the figures and the server's estimates. */
const USAGE_WARNING = new RegExp(
  String.raw`\nwarning: +the backend reported token counts outside what this turn's requests ` +
    String.raw`and replies allow \(prompt -?[\d.e+]+ and output -?[\d.e+]+ tokens for a request ` +
    String.raw`of about \d+ and a reply of about \d+, by the server's estimate\)`,
);

/** `1234 of 3000 tokens` of a `budget:` line, as a number. */
function spentOf(text: string): number {
  const m = /^(\d+) of \d+ tokens$/.exec(field(text, "budget") ?? "");
  assert.ok(m, text);
  return Number(m[1]);
}

/** The lines of ran.txt: the tool calls whose command ran. */
function ranLines(dir: string): number {
  const path = join(dir, "ran.txt");
  return existsSync(path) ? readFileSync(path, "utf8").trim().split("\n").length : 0;
}

Deno.test("native: negative, fractional and absurd usage is counted within the server's estimates, and budget_tokens still stops the job", async () => {
  let reported = 0;
  let n = 0;
  await using scene = await startInProcessScene({
    emulator: {
      chatScript: () => ({
        kind: "tool_calls",
        calls: [{ name: "Bash", arguments: { command: `echo ${++n} >> ran.txt` } }],
        usage: { prompt: reported, completion: reported },
      }),
    },
  });
  for (const value of HOSTILE_COUNTS) {
    reported = value;
    const before = scene.emulator.nativeChatRequests().length;
    const work = tempDir("od-budget-");
    const reply = await scene.call("delegate_start", {
      engine: "native",
      model: MODEL,
      prompt: "loop",
      cwd: work,
      budget_tokens: 1000,
      wait_seconds: 60,
    });
    const requests = scene.emulator.nativeChatRequests().length - before;
    assert.match(
      field(reply.text, "error") ?? "",
      /^budget_exhausted: /,
      `${value}: ${reply.text}`,
    );
    // At least the server's estimate of each request (about 700 tokens each here), at most
    // 8 times it and the slack: never a credit, never 10^15.
    const spent = spentOf(reply.text);
    assert.ok(spent > 1000 && spent < 20_000, `${value}: ${spent}`);
    assert.match(reply.text, USAGE_WARNING);
    assert.equal(
      ranLines(work),
      requests - 1,
      "the tools of the response past the budget did not run",
    );
  }
});

Deno.test({
  name:
    "claude: negative, fractional and absurd usage is counted within the server's estimates, and budget_tokens still stops the job",
  ignore: !linux,
  async fn() {
    let reported = 0;
    let n = 0;
    let answer = false;
    await using scene = await startInProcessScene({
      emulator: {
        script: () =>
          answer ? { kind: "text", text: "done", usage: { input: reported, output: reported } } : {
            kind: "tool_use",
            name: "Bash",
            input: { command: `echo ${++n} >> ran.txt` },
            usage: { input: reported, output: reported },
          },
      },
    });
    for (const value of HOSTILE_COUNTS) {
      reported = value;
      const reply = await scene.call("delegate_start", {
        model: MODEL,
        prompt: "loop",
        cwd: tempDir("od-budget-"),
        allowed_tools: ["Bash"],
        budget_tokens: 1000,
        max_turns: 10,
        wait_seconds: 150,
      }, { timeoutMs: 200_000 });
      assert.match(
        field(reply.text, "error") ?? "",
        /^budget_exhausted: /,
        `${value}: ${reply.text}`,
      );
      const spent = spentOf(reply.text);
      assert.ok(spent > 1000 && spent < 20_000, `${value}: ${spent}`);
      assert.match(reply.text, USAGE_WARNING);
    }
    // A turn that ends: Claude Code's result event sums what the backend reported, the output
    // of each message's end included (its stream showed 0): held to what the stream carried.
    answer = true;
    reported = 1e15;
    const done = await scene.call("delegate_start", {
      model: MODEL,
      prompt: "answer",
      cwd: tempDir("od-budget-"),
      wait_seconds: 150,
    }, { timeoutMs: 200_000 });
    assert.equal(field(done.text, "state"), "completed", done.text);
    const tokens = /^in (\d+) \/ out (\d+) /.exec(field(done.text, "tokens") ?? "");
    assert.ok(tokens && Number(tokens[1]) < 20_000 && Number(tokens[2]) < 2000, done.text);
  },
});

Deno.test({
  name:
    "claude: budget_tokens stops at the response that passes it, its reply counted as the stream shows it, before its tools run",
  ignore: !linux,
  async fn() {
    // Claude Code's stream shows a message's usage as its start reported it (output 0): the
    // reply is counted by what the stream carries, about 2,000 tokens here.
    await using scene = await startInProcessScene({
      emulator: {
        script: () => ({
          kind: "tool_use",
          name: "Bash",
          text: "x".repeat(8000),
          input: { command: "echo ran >> ran.txt" },
        }),
      },
    });
    const work = tempDir("od-budget-");
    const reply = await scene.call("delegate_start", {
      model: MODEL,
      prompt: "loop",
      cwd: work,
      allowed_tools: ["Bash"],
      budget_tokens: 2500,
      wait_seconds: 150,
    }, { timeoutMs: 200_000 });
    assert.match(field(reply.text, "error") ?? "", /^budget_exhausted: /, reply.text);
    // The first response (about 900 tokens of request and 2,000 of reply) passes the budget.
    assert.ok(spentOf(reply.text) > 2500, reply.text);
    assert.equal(scene.emulator.messageRequests().length, 1, "no request after the one past it");
    assert.equal(ranLines(work), 0, "its tool did not run");
  },
});

Deno.test({
  name: "a backend's negative usage cannot erase the day's spend: the daily budget still refuses",
  ignore: !linux,
  async fn() {
    await using scene = await startInProcessScene({
      emulator: {
        chatScript: () => ({
          kind: "text",
          text: "done",
          usage: { prompt: -1e9, completion: -1e9 },
        }),
        script: () => ({ kind: "text", text: "done", usage: { input: -1e9, output: -1e9 } }),
      },
      server: false,
    });
    await scene.startServer({
      userConfig: { baseUrl: scene.emulator.url, dailyBudgetTokens: { ollama: 1000 } },
    });
    const job = { model: MODEL, prompt: "x", cwd: tempDir("od-daily-"), wait_seconds: 150 };
    const native = await scene.call("delegate_start", { ...job, engine: "native" });
    assert.equal(field(native.text, "state"), "completed", native.text);
    const claude = await scene.call("delegate_start", job, { timeoutMs: 200_000 });
    assert.equal(field(claude.text, "state"), "completed", claude.text);
    // Each engine counts at least its estimate of the request and of the reply.
    for (const reply of [native, claude]) {
      const tokens = /^in (\d+) \/ out (\d+) /.exec(field(reply.text, "tokens") ?? "");
      assert.ok(tokens, reply.text);
      assert.ok(Number(tokens[1]) >= 500 && Number(tokens[1]) < 20_000, reply.text);
      assert.ok(Number(tokens[2]) >= 1 && Number(tokens[2]) < 2000, reply.text);
    }
    const third = await scene.call("delegate_start", { ...job, engine: "native" });
    assert.equal(third.isError, true, third.text);
    assert.match(third.text, /has used \d+ tokens of its daily budget 1000 \(dailyBudgetTokens\)/);
    const usage = await scene.call("delegate_usage", {});
    assert.match(usage.text, /\n {2}ollama: \d+ of 1000 tokens {2}<- reached/);
    assert.doesNotMatch(usage.text, /[\s$(]-\d/, `no negative figure: ${usage.text}`);
  },
});
