/** How a turn's end becomes the record's end: the state, the error text, the figures. */
import assert from "node:assert/strict";
import type { TurnOutcome } from "../../src/engines/types.ts";
import { applyOutcome, applyUnwrittenEnd } from "../../src/jobs/outcome.ts";
import type { JobRecord } from "../../src/jobs/record.ts";

const record = (): JobRecord => ({
  format: 1,
  id: "11111111-2222-4333-8444-555555555555",
  sessionId: "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee",
  turn: 1,
  engine: "claude",
  model: "qwen3:8b",
  cwd: "/w",
  state: "running",
  createdAt: 1,
  promptPreview: "p",
  options: { permissionMode: "acceptEdits", addDirs: [] },
  sessionCreated: true,
  child: { pid: 42, startTime: "7" },
  toolCalls: 3,
  permissionDenials: [],
});
const usage = {
  inputTokens: 10,
  outputTokens: 2,
  cacheReadTokens: 0,
  cacheCreationTokens: 0,
  numTurns: 1,
  durationMs: 5,
};
const outcome = (o: Partial<TurnOutcome> = {}): TurnOutcome => ({
  ok: true,
  resultText: "r",
  exitCode: 0,
  signal: null,
  permissionDenials: [{ tool: "Bash", detail: "rm" }],
  usage,
  ...o,
});
const context = { jobTimeoutMs: 90_000, shutdownReason: "the server shut down", now: 99 };

Deno.test("applyOutcome: the engine's verdict when nothing stopped the job", () => {
  const ok = record();
  applyOutcome(ok, outcome(), undefined, context);
  assert.equal(ok.state, "completed");
  assert.equal(ok.endedAt, 99);
  assert.equal(ok.exitCode, 0);
  assert.deepEqual(ok.usage, usage);
  assert.deepEqual(ok.permissionDenials, [{ tool: "Bash", detail: "rm" }]);
  assert.equal(ok.child, undefined);
  assert.equal(ok.errorText, undefined);

  const failed = record();
  applyOutcome(failed, outcome({ ok: false, errorText: "HTTP 500" }), undefined, context);
  assert.equal(failed.state, "failed");
  assert.equal(failed.errorText, "HTTP 500");
  const silent = record();
  applyOutcome(silent, outcome({ ok: false }), undefined, context);
  assert.equal(silent.errorText, "The job failed");
});

Deno.test("applyOutcome: a stop decides the state, whoever asked for it", () => {
  const cases: Array<[Parameters<typeof applyOutcome>[2], object, string, string]> = [
    ["cancel", {}, "cancelled", "Cancelled by caller"],
    [
      "cancel",
      { cancelledFrom: "terminal" },
      "cancelled",
      "Cancelled from a terminal (ollama-delegate jobs cancel)",
    ],
    [
      "cancel",
      { cancelledFrom: "session" },
      "cancelled",
      "Cancelled from another Claude Code session (delegate_cancel)",
    ],
    ["timeout", {}, "failed", "Timed out after 90s"],
    [
      "shutdown",
      {},
      "interrupted",
      "Stopped because the server shut down before the job finished; follow up to continue",
    ],
  ];
  for (const [stop, extra, state, text] of cases) {
    const r = record();
    applyOutcome(r, outcome(), stop, { ...context, ...extra });
    assert.equal(r.state, state, `${stop} ${JSON.stringify(extra)}`);
    assert.equal(r.errorText, text);
  }
});

Deno.test("applyOutcome: a job that never reached its engine keeps its figures", () => {
  const r = record();
  applyOutcome(r, undefined, "cancel", context);
  assert.equal(r.state, "cancelled");
  assert.equal(r.toolCalls, 3);
  assert.equal(r.usage, undefined);
  assert.equal(r.exitCode, undefined);
});

Deno.test("applyUnwrittenEnd: never completed, and says where and what to do", () => {
  const r = record();
  applyOutcome(r, outcome(), undefined, context);
  applyUnwrittenEnd(r, "/state/job", "ENOSPC: no space left on device");
  assert.equal(r.state, "failed");
  assert.match(r.errorText ?? "", /^Cannot record the end of the job in \/state\/job: ENOSPC/);
  assert.match(r.errorText ?? "", /free disk space there, then follow up to continue$/);
  const cancelled = record();
  applyOutcome(cancelled, undefined, "cancel", context);
  applyUnwrittenEnd(cancelled, "/s", "EIO");
  assert.equal(cancelled.state, "cancelled");
  assert.match(cancelled.errorText ?? "", /EIO \(Cancelled by caller\)\./);
});
