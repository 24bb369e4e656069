import assert from "node:assert/strict";
import type { JobView } from "../../src/jobs/manager.ts";
import type { JobRecord } from "../../src/jobs/record.ts";
import {
  activityLines,
  followupHint,
  outputBody,
  pollHint,
  summary,
} from "../../src/server/render.ts";
import { formatElapsed } from "../../src/platform/duration.ts";

const JOB = "11111111-2222-4333-8444-555555555555";
const SID = "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee";
const T0 = 1_700_000_000_000;
const NOTE = "   <- answered without using any tools; treat factual claims as unverified";

function rec(over: Partial<JobRecord> = {}): JobRecord {
  return {
    format: 1,
    id: JOB,
    sessionId: SID,
    turn: 2,
    engine: "claude",
    model: "qwen3-coder",
    cwd: "/work/proj",
    state: "completed",
    createdAt: T0 - 500,
    startedAt: T0,
    endedAt: T0 + 12_345,
    promptPreview: "do it",
    options: { permissionMode: "acceptEdits", addDirs: [] },
    sessionCreated: true,
    toolCalls: 3,
    permissionDenials: [],
    ...over,
  };
}
const view = (over: Partial<JobRecord> = {}, queuePosition = 0): JobView => ({
  record: rec(over),
  activities: [],
  queuePosition,
});
const lines = (v: JobView, now = T0 + 99_999) => summary(v, now).split("\n");

Deno.test("summary: the label: value lines of a completed job, in their order", () => {
  const usage = {
    inputTokens: 1200,
    outputTokens: 340,
    cacheReadTokens: 0,
    cacheCreationTokens: 0,
    numTurns: 4,
    durationMs: 12000,
  };
  assert.deepEqual(lines(view({ usage, exitCode: 0, effectivePermissionMode: "acceptEdits" })), [
    `job_id:     ${JOB}`,
    `session_id: ${SID}   (turn 2)`,
    "state:      completed",
    "model:      qwen3-coder",
    "engine:     claude",
    "cwd:        /work/proj",
    "elapsed:    12.3s",
    "tokens:     in 1200 / out 340  (4 turns)",
    "tool calls: 3",
    "permission: acceptEdits",
    "exit:       code 0",
  ]);
});

Deno.test("summary: a running job has no tokens, tool calls or exit lines", () => {
  const got = lines(view({ state: "running", endedAt: undefined, toolCalls: 0 }), T0 + 1500);
  assert.deepEqual(got, [
    `job_id:     ${JOB}`,
    `session_id: ${SID}   (turn 2)`,
    "state:      running",
    "model:      qwen3-coder",
    "engine:     claude",
    "cwd:        /work/proj",
    "elapsed:    1.5s",
    "permission: acceptEdits",
  ]);
});

Deno.test("summary: queued shows its place in line; elapsed falls back to createdAt", () => {
  const got = lines(
    view({ state: "queued", startedAt: undefined, endedAt: undefined }, 3),
    T0 + 1500,
  );
  assert.equal(got[2], "state:      queued (3 in line)");
  assert.equal(got[6], "elapsed:    2.0s");
  assert.equal(lines(view({ state: "queued" }, 0))[2], "state:      queued");
});

Deno.test("summary: cache tokens are shown only when there are some", () => {
  const usage = {
    inputTokens: 1,
    outputTokens: 2,
    cacheReadTokens: 30,
    cacheCreationTokens: 12,
    numTurns: 1,
    durationMs: 5,
  };
  assert.ok(lines(view({ usage })).includes("tokens:     in 1 / out 2 / cache 42  (1 turn)"));
});

Deno.test("summary: the unverified note only on completed jobs with 0 tool calls", () => {
  assert.ok(lines(view({ toolCalls: 0 })).includes(`tool calls: 0${NOTE}`));
  for (const state of ["failed", "cancelled", "interrupted"] as const) {
    const got = lines(view({ state, toolCalls: 0, errorText: "x" }));
    assert.ok(got.includes("tool calls: 0"), state);
    assert.equal(got.some((l) => l.includes("<- answered")), false, state);
  }
  assert.ok(lines(view({ toolCalls: 1 })).includes("tool calls: 1"));
});

Deno.test("summary: permission line shows effective vs requested mode", () => {
  const perm = (over: Partial<JobRecord>) =>
    lines(view(over)).find((l) => l.startsWith("permission:"));
  assert.equal(perm({}), "permission: acceptEdits");
  assert.equal(
    perm({ effectivePermissionMode: "default" }),
    "permission: default (requested acceptEdits)",
  );
  assert.equal(
    perm({
      effectivePermissionMode: "default",
      options: { permissionMode: "manual", addDirs: [] },
    }),
    "permission: manual",
  );
  assert.equal(
    perm({ effectivePermissionMode: "plan", options: { permissionMode: "plan", addDirs: [] } }),
    "permission: plan",
  );
});

Deno.test("summary: denied, exit and error lines of a failed job", () => {
  const permissionDenials = [
    { tool: "Bash", detail: "rm -rf\n  /tmp/x" },
    { tool: "Write", detail: "" },
    ...Array.from({ length: 5 }, (_, i) => ({ tool: "Edit", detail: `/f${i}` })),
  ];
  const got = lines(view({
    state: "failed",
    toolCalls: 0,
    exitCode: 1,
    errorText: "Reached maximum number of turns (1)",
    permissionDenials,
  }));
  assert.deepEqual(got.slice(7), [
    "tool calls: 0",
    "permission: acceptEdits",
    // The command as it was, its line break shown rather than taken.
    "denied:     7: Bash(rm -rf\\n  /tmp/x), Write, Edit(/f0), Edit(/f1), Edit(/f2), +2 more",
    "exit:       code 1",
    "error:      Reached maximum number of turns (1)",
  ]);
  const sig = lines(view({ state: "cancelled", signal: "SIGTERM", exitCode: null }));
  assert.ok(sig.includes("exit:       signal SIGTERM"));
  // A completed job never shows an error line.
  assert.equal(lines(view({ errorText: "stale" })).some((l) => l.startsWith("error:")), false);
});

Deno.test("formatElapsed: one decimal, never negative", () => {
  assert.equal(formatElapsed(12_345), "12.3s");
  assert.equal(formatElapsed(0), "0.0s");
  assert.equal(formatElapsed(-50), "0.0s");
});

Deno.test("outputBody: empty, whole, and truncated with the path", () => {
  const none = "(delegated session produced no text output)";
  assert.equal(outputBody("", 0, 10, "/s/j/result.txt"), none);
  assert.equal(outputBody(" \n\t", 3, 10, "/s/j/result.txt"), none);
  assert.equal(outputBody("0123456789", 10, 10, "/s/j/result.txt"), "0123456789");
  assert.equal(
    outputBody("0123456789", 25, 10, "/s/j/result.txt"),
    "0123456789\n\n... [truncated at 10 chars; full output: /s/j/result.txt]",
  );
  // The text may be longer than max: it is still cut at max.
  assert.equal(
    outputBody("abcdefghijkl", 12, 4, "/r"),
    "abcd\n\n... [truncated at 4 chars; full output: /r]",
  );
});

Deno.test("activityLines: tool, text and error lines, cut at 160 and 400", () => {
  const longCmd = "x".repeat(300);
  const longText = "y".repeat(1000);
  assert.deepEqual(
    activityLines([
      { kind: "tool", name: "Bash", detail: "ls" },
      { kind: "tool", name: "TodoWrite", detail: "" },
      { kind: "tool", name: "Bash", detail: longCmd },
      { kind: "text", text: "line one\n\nline two" },
      { kind: "text", text: longText },
      { kind: "error", text: "tool error: nope" },
    ], 10),
    [
      "  [tool] Bash: ls",
      "  [tool] TodoWrite",
      `  [tool] Bash: ${"x".repeat(159)}…`,
      "  [text] line one line two",
      `  [text] ${"y".repeat(399)}…`,
      "  [error] tool error: nope",
    ],
  );
  assert.equal(
    activityLines([{ kind: "tool", name: "B", detail: "z".repeat(160) }], 1)[0]!.length,
    "  [tool] B: ".length + 160,
  );
});

Deno.test("activityLines: only the last `limit` entries", () => {
  const acts = Array.from({ length: 20 }, (_, i) => ({ kind: "text" as const, text: `t${i}` }));
  assert.deepEqual(activityLines(acts, 3), ["  [text] t17", "  [text] t18", "  [text] t19"]);
  assert.deepEqual(activityLines([], 3), []);
});

Deno.test("hints name the job", () => {
  assert.equal(
    pollHint(JOB),
    `Still running. Wait for it with delegate_status({ job_id: "${JOB}", wait_seconds: 60 }) ` +
      "(up to 600) rather than polling in a loop.",
  );
  assert.equal(
    followupHint(JOB),
    `Continue this conversation with delegate_followup({ job_id: "${JOB}", prompt: "..." }).`,
  );
});

Deno.test("summary: recovered tool calls, shortened context and warnings get their own lines", () => {
  const text = lines(view({
    toolCalls: 3,
    toolCallsRecovered: 1,
    contextElisions: 2,
    warnings: ["Ollama cut the prompt: 12000 tokens sent, 4096 loaded"],
  }));
  assert.ok(text.includes("tool calls: 3 (1 recovered from text)"), text.join("\n"));
  assert.ok(
    text.includes("context:    2 older tool outputs shortened to fit the model's context"),
    text.join("\n"),
  );
  assert.ok(
    text.includes("warning:    Ollama cut the prompt: 12000 tokens sent, 4096 loaded"),
    text.join("\n"),
  );
  // None of them when nothing happened.
  const plain = lines(view()).join("\n");
  assert.doesNotMatch(plain, /recovered|context:|warning:/);
});

Deno.test("summary: the commands line lists each command with its exit code", () => {
  const commands = [
    { command: "npm test", exitCode: 2, durationMs: 5 },
    {
      command: "false; true",
      exitCode: 0,
      durationMs: 5,
      masked: [{ command: "false", exitCode: 1 }],
    },
  ];
  assert.ok(
    lines(view({ commands })).includes(
      "commands:   2 run, 1 failed, 1 masked failure: npm test (exit 2), false; true (exit 0; " +
        "masked exit 1: false)",
    ),
    lines(view({ commands })).join("\n"),
  );
});

Deno.test("summary: one turn is a turn, not '1 turns'", () => {
  const usage = {
    inputTokens: 10,
    outputTokens: 2,
    cacheReadTokens: 0,
    cacheCreationTokens: 0,
    numTurns: 1,
    durationMs: 5,
  };
  assert.ok(lines(view({ usage })).includes("tokens:     in 10 / out 2  (1 turn)"));
});

Deno.test("summary: files counts those past the named ones and says when the list is incomplete", () => {
  const at = (n: number) => `/work/proj/f${n}.js`;
  const text = (over: Partial<JobRecord>) =>
    lines(view(over)).find((l) => l.startsWith("files:")) ?? "(no files line)";
  assert.equal(text({}), "(no files line)");
  assert.equal(text({ changedFiles: [at(1), at(2)] }), "files:      2 changed: f1.js, f2.js");
  assert.equal(
    text({ changedFiles: Array.from({ length: 12 }, (_, i) => at(i)), changedFilesMore: 5 }),
    "files:      17 changed: f0.js, f1.js, f2.js, f3.js, f4.js, f5.js, f6.js, f7.js, f8.js, " +
      "f9.js, +7 more",
  );
  assert.equal(
    text({ changedFiles: [at(1)], changedFilesPartial: "a walk stopped" }),
    "files:      1 changed: f1.js; incomplete: a walk stopped",
  );
  assert.equal(
    text({ changedFilesPartial: "a walk stopped" }),
    "files:      none seen; incomplete: a walk stopped",
  );
  // "none" only when the server looked; a turn it did not watch has no line at all.
  assert.equal(text({ changesTracked: true }), "files:      none");
  assert.equal(
    text({ changesTracked: true, changedFiles: [at(1)] }),
    "files:      1 changed: f1.js",
  );
});

Deno.test("summary: where the turn ran, after the engine, from every model and endpoint it used", () => {
  const at = (over: Partial<JobRecord>) => lines(view(over)).find((l) => l.startsWith("where:"));
  assert.equal(at({}), undefined, "not placed yet: no line");
  const local = { url: "http://127.0.0.1:11434", poolSize: 1 };
  assert.equal(at({ endpoint: local }), "where:      local (http://127.0.0.1:11434, this machine)");
  assert.equal(
    lines(view({ endpoint: local }))[5],
    "where:      local (http://127.0.0.1:11434, this machine)",
    "right after engine:",
  );
  // A fallback from the cloud: the turn ran there too.
  assert.equal(
    at({
      endpoint: local,
      model: "qwen3:8b",
      fallbacks: [{ from: "glm-5:cloud", to: "qwen3:8b", reason: "HTTP 503" }],
    }),
    "where:      cloud (glm-5:cloud runs on ollama.com, through http://127.0.0.1:11434; " +
      "ollama-delegate config --residency local keeps work local)",
  );
  // Cloud by Ollama's listing only, as the record says.
  assert.match(
    at({ endpoint: local, model: "team-coder:latest", cloudModels: ["team-coder:latest"] })!,
    /^where: +cloud \(team-coder:latest runs on ollama\.com/,
  );
  // A pool that moved the turn off a private GPU onto a rented one.
  assert.equal(
    at({
      endpoint: {
        url: "https://gpu.rented.example",
        poolSize: 2,
        moves: [{ from: "http://10.0.0.2:8000", to: "https://gpu.rented.example", reason: "down" }],
      },
    }),
    "where:      remote (https://gpu.rented.example is not this machine nor a private network; " +
      "ollama-delegate config --residency local keeps work local)",
  );
});
