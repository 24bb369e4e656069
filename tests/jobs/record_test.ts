import assert from "node:assert/strict";
import {
  isErrorState,
  isTerminal,
  JOB_STATES,
  type JobRecord,
  jobRecordSchema,
  mayHoldReview,
  recordFromResultSummary,
  resultSummary,
} from "../../src/jobs/record.ts";

const ID = "11111111-2222-4333-8444-555555555555";
const SID = "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee";

/** A result.json as claude-ollama-delegate-mcp wrote it, alone in its folder. */
function summaryJson(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: ID,
    sessionId: SID,
    turn: 2,
    model: "qwen3-coder",
    cwd: "/work",
    state: "completed",
    isError: false,
    usage: { inputTokens: 100, outputTokens: 20, numTurns: 3, durationMs: 4567 },
    exitCode: 0,
    errorText: null,
    startedAt: 1_700_000_000_000,
    endedAt: 1_700_000_004_567,
    ...over,
  };
}

function rec(over: Partial<JobRecord> = {}): JobRecord {
  return {
    format: 1,
    id: ID,
    sessionId: SID,
    turn: 1,
    engine: "claude",
    model: "m",
    cwd: "/w",
    state: "completed",
    createdAt: 1000,
    startedAt: 1100,
    endedAt: 2100,
    promptPreview: "p",
    options: { permissionMode: "plan", addDirs: ["/d"], allowedTools: ["Read"] },
    sessionCreated: true,
    toolCalls: 4,
    permissionDenials: [],
    ...over,
  };
}

Deno.test("recordFromResultSummary: a completed job of a result.json-only folder becomes a legacy record", () => {
  const r = recordFromResultSummary(summaryJson(), "Summarise the repo");
  assert.deepEqual(r, {
    format: 1,
    id: ID,
    sessionId: SID,
    turn: 2,
    engine: "claude",
    model: "qwen3-coder",
    cwd: "/work",
    state: "completed",
    createdAt: 1_700_000_000_000,
    startedAt: 1_700_000_000_000,
    endedAt: 1_700_000_004_567,
    promptPreview: "Summarise the repo",
    options: { permissionMode: "auto", addDirs: [] },
    sessionCreated: true,
    exitCode: 0,
    usage: {
      inputTokens: 100,
      outputTokens: 20,
      numTurns: 3,
      durationMs: 4567,
      cacheReadTokens: 0,
      cacheCreationTokens: 0,
    },
    toolCalls: 0,
    permissionDenials: [],
    legacy: true,
  });
  // It is a valid record in our own format.
  assert.deepEqual(jobRecordSchema.parse(r), r);
});

Deno.test("recordFromResultSummary: a job left running died with its server → interrupted", () => {
  const r = recordFromResultSummary(
    summaryJson({ state: "running", usage: null, exitCode: null, endedAt: null }),
    "x",
  );
  assert.equal(r?.state, "interrupted");
  assert.equal(r !== undefined && "endedAt" in r, false);
  assert.equal(r !== undefined && "usage" in r, false);
  assert.equal(r?.exitCode, null);
});

Deno.test("recordFromResultSummary: failed keeps its error text; prompt preview is cut", () => {
  const r = recordFromResultSummary(
    summaryJson({ state: "failed", isError: true, exitCode: 1, errorText: "boom" }),
    "p".repeat(500),
  );
  assert.equal(r?.state, "failed");
  assert.equal(r?.errorText, "boom");
  assert.equal(r?.exitCode, 1);
  assert.equal(r?.promptPreview, "p".repeat(200));
});

Deno.test("recordFromResultSummary: missing optional fields take defaults", () => {
  const r = recordFromResultSummary(
    { id: ID, sessionId: SID, state: "cancelled", startedAt: 5 },
    "",
  );
  assert.equal(r?.turn, 1);
  assert.equal(r?.model, "");
  assert.equal(r?.cwd, "");
  assert.equal(r?.state, "cancelled");
  assert.equal(r !== undefined && "exitCode" in r, false);
  assert.equal(r !== undefined && "errorText" in r, false);
});

Deno.test("recordFromResultSummary: rejects garbage", () => {
  const bad: unknown[] = [
    null,
    undefined,
    42,
    "result",
    [],
    {},
    summaryJson({ id: 7 }),
    summaryJson({ sessionId: undefined }),
    summaryJson({ state: "weird" }),
    summaryJson({ startedAt: "yesterday" }),
    summaryJson({ turn: 0 }),
    summaryJson({ turn: 1.5 }),
    summaryJson({ usage: { inputTokens: "many" } }),
  ];
  for (const raw of bad) assert.equal(recordFromResultSummary(raw, "p"), undefined, String(raw));
});

Deno.test("resultSummary: its fixed fields, with the record's mapped onto them", () => {
  const usage = {
    inputTokens: 10,
    outputTokens: 2,
    cacheReadTokens: 7,
    cacheCreationTokens: 1,
    numTurns: 1,
    durationMs: 900,
  };
  assert.deepEqual(resultSummary(rec({ usage, exitCode: 0 })), {
    id: ID,
    sessionId: SID,
    turn: 1,
    model: "m",
    cwd: "/w",
    state: "completed",
    isError: false,
    usage,
    exitCode: 0,
    errorText: null,
    startedAt: 1100,
    endedAt: 2100,
  });
  const queued = resultSummary(rec({ state: "queued", startedAt: undefined, endedAt: undefined }));
  assert.equal(queued.startedAt, 1000);
  assert.equal(queued.endedAt, null);
  assert.equal(queued.usage, null);
  assert.equal(queued.exitCode, null);
});

Deno.test("resultSummary: isError for failed, interrupted and cancelled only", () => {
  const isError = JOB_STATES.map((state) => [state, resultSummary(rec({ state })).isError]);
  assert.deepEqual(isError, [
    ["queued", false],
    ["running", false],
    ["completed", false],
    ["failed", true],
    ["cancelled", true],
    ["interrupted", true],
  ]);
  assert.equal(resultSummary(rec({ state: "failed", errorText: "e" })).errorText, "e");
});

Deno.test("resultSummary round-trips through recordFromResultSummary for the finished states", () => {
  for (const state of ["completed", "failed", "cancelled"] as const) {
    const back = recordFromResultSummary(
      JSON.parse(JSON.stringify(resultSummary(rec({ state, exitCode: 1, errorText: "e" })))),
      "p",
    );
    assert.equal(back?.id, ID, state);
    assert.equal(back?.state, state);
    assert.equal(back?.startedAt, 1100);
    assert.equal(back?.endedAt, 2100);
  }
});

Deno.test("isTerminal / isErrorState", () => {
  assert.deepEqual(JOB_STATES.filter(isTerminal), [
    "completed",
    "failed",
    "cancelled",
    "interrupted",
  ]);
  assert.deepEqual(JOB_STATES.filter(isErrorState), ["failed", "interrupted"]);
});

Deno.test("recordFromResultSummary: reads our own result.json; queued means interrupted", () => {
  const r = recordFromResultSummary(summaryJson({ state: "queued" }), "p");
  assert.equal(r?.state, "interrupted");
  assert.equal(
    recordFromResultSummary(summaryJson({ state: "interrupted" }), "p")?.state,
    "interrupted",
  );
});

Deno.test("jobRecordSchema: a command's masked failures are kept", () => {
  const commands = [{
    command: "npm test | tee log",
    exitCode: 0,
    durationMs: 12,
    masked: [{ command: "npm test", exitCode: 1 }],
    maskedMore: 2,
  }];
  const parsed = jobRecordSchema.parse({ ...rec(), engine: "native", commands });
  assert.deepEqual(parsed.commands, commands);
});

Deno.test("jobRecordSchema: the kind is read when present; a record without it still parses", () => {
  assert.equal(jobRecordSchema.parse(rec({ kind: "review", agent: "reviewer" })).kind, "review");
  const older = jobRecordSchema.parse(rec());
  assert.equal(older.kind, undefined);
  assert.throws(() => jobRecordSchema.parse({ ...rec(), kind: "panel" }));
});

Deno.test("mayHoldReview: the kind decides; without it, only a job run as an agent may be a review", () => {
  assert.equal(mayHoldReview(rec({ kind: "review", agent: "reviewer" })), true);
  assert.equal(mayHoldReview(rec({ kind: "task", agent: "tester" })), false);
  assert.equal(mayHoldReview(rec({ kind: "task" })), false);
  assert.equal(mayHoldReview(rec({ agent: "reviewer" })), true);
  assert.equal(mayHoldReview(rec()), false);
});
