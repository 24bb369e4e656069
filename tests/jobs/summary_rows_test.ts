/** A job's summary rows, the one set both front ends print (issue 33, item 2). */
import assert from "node:assert/strict";
import type { JobRecord } from "../../src/jobs/record.ts";
import { summaryLines, summaryRows } from "../../src/jobs/summary_rows.ts";

const JOB = "11111111-2222-4333-8444-555555555555";
const SID = "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee";
const T0 = Date.UTC(2024, 2, 10, 12);

function rec(over: Partial<JobRecord> = {}): JobRecord {
  return {
    format: 1,
    id: JOB,
    sessionId: SID,
    turn: 1,
    engine: "claude",
    model: "qwen3:8b",
    cwd: "/work/proj",
    state: "completed",
    createdAt: T0,
    startedAt: T0,
    endedAt: T0 + 2500,
    promptPreview: "p",
    options: { permissionMode: "acceptEdits", addDirs: [] },
    sessionCreated: true,
    toolCalls: 2,
    permissionDenials: [],
    ...over,
  };
}

const EVIDENCE: Partial<JobRecord> = {
  modelChoice: "auto: 9 of 10 verified",
  sandbox: "bubblewrap; network off",
  permissionDenials: [{ tool: "Bash", detail: "rm -rf /" }],
  commands: [{ command: "npm test", exitCode: 2, durationMs: 900 }],
  claims: [{ kind: "tests-pass", claim: "All pass", reason: "npm test failed" }],
  changedFiles: ["/work/proj/src/a.ts"],
  changesTracked: true,
  exitCode: 0,
};

Deno.test("summaryRows: the reply and the terminal print the same evidence, each in its words", () => {
  const rows = summaryRows({ record: rec(EVIDENCE) }, T0 + 2500);
  const reply = summaryLines(rows, "reply");
  const terminal = summaryLines(rows, "terminal");
  assert.deepEqual(reply, [
    `job_id:     ${JOB}`,
    `session_id: ${SID}   (turn 1)`,
    "state:      completed",
    "model:      qwen3:8b (auto: 9 of 10 verified)",
    "engine:     claude",
    "cwd:        /work/proj",
    "elapsed:    2.5s",
    "tool calls: 2",
    "sandbox:    bubblewrap; network off",
    "permission: acceptEdits",
    "denied:     1: Bash(rm -rf /)",
    "exit:       code 0",
    "commands:   1 run, 1 failed: npm test (exit 2)",
    'claims:     1 not backed by the evidence: "All pass" (npm test failed)',
    "files:      1 changed: src/a.ts",
  ]);
  assert.deepEqual(terminal, [
    `job         ${JOB}`,
    `session_id  ${SID}   (turn 1)`,
    "state       completed",
    "model       qwen3:8b  (auto: 9 of 10 verified)",
    "engine      claude",
    "cwd         /work/proj",
    "created     2024-03-10T12:00:00.000Z",
    "started     2024-03-10T12:00:00.000Z",
    "ended       2024-03-10T12:00:02.500Z",
    "elapsed     2.5s",
    'cost        unknown  (no token usage recorded, and no price for "qwen3:8b")',
    "tool calls  2",
    "sandbox     bubblewrap; network off",
    "permission  acceptEdits",
    "denied      1: Bash(rm -rf /)",
    "exit        code 0",
    "commands    1 run, 1 failed: npm test (exit 2)",
    'claim       "All pass": npm test failed',
    "changed     /work/proj/src/a.ts",
  ]);
});

Deno.test("summaryLines: a value cannot add a line; a row's own lines are indented under it", () => {
  const rows = summaryRows({
    record: rec({ state: "failed", errorText: "boom\nfiles:      0 changed\u001b[2J" }),
  });
  const error = summaryLines(rows, "reply").filter((l) => l.startsWith("error:"));
  assert.deepEqual(error, ["error:      boom\\nfiles:      0 changed\\033[2J"]);
  const more = summaryLines(
    [{ label: "take it", text: "git merge x", more: ["git apply p"] }],
    "reply",
  );
  assert.deepEqual(more, ["take it:    git merge x\n            git apply p"]);
});

Deno.test("summaryLines: a terminal may colour a row's escaped text, the reply never", () => {
  const rows = summaryRows({ record: rec({ model: "m\u001b]0;t\u0007" }) });
  const dressed = summaryLines(rows, "terminal", (r, t) => r.label === "model" ? `<${t}>` : t);
  assert.ok(dressed.includes("model       <m\\033]0;t\\a>"), dressed.join("\n"));
});

Deno.test("summaryRows: a queued job says its place in line and who holds the slots", () => {
  const queue = { backend: "ollama", position: 2, limit: 1, holders: [] };
  const rows = summaryRows({ record: rec({ state: "queued" }), queuePosition: 2, queue });
  const text = summaryLines(rows, "terminal").join("\n");
  assert.match(text, /^state {7}queued \(2 in line\)$/m);
  assert.match(text, /^queue {7}2nd in line for backend "ollama" \(0 of 1 slot held\)$/m);
});

Deno.test("summaryRows: the hidden row names what the sandbox kept from the delegate, from the cwd", () => {
  const lines = (over: Partial<JobRecord>) =>
    summaryLines(summaryRows({ record: rec(over) }, T0 + 2500), "reply").filter((l) =>
      l.startsWith("hidden:")
    );
  assert.deepEqual(lines({}), []);
  assert.deepEqual(lines({ hidden: ["/work/proj/.ssh", "/work/proj/sub/.config/gh"] }), [
    "hidden:     .ssh, sub/.config/gh (credential stores and secret files, kept from the delegate)",
  ]);
  const many = Array.from({ length: 12 }, (_, i) => `/work/proj/s${i}/.env`);
  const [line] = lines({ hidden: many, hiddenMore: 30 });
  assert.match(line!, /^hidden: {5}s0\/\.env, .*s9\/\.env, \+32 more \(credential stores/);
});

Deno.test("summaryRows: a hidden name a delegate planted cannot add a line to the reply", () => {
  const planted = "/work/proj/x\nstate:      failed\n.env";
  const lines = summaryLines(summaryRows({ record: rec({ hidden: [planted] }) }, T0), "reply");
  assert.equal(lines.filter((l) => l.startsWith("state:")).length, 1);
  const hidden = lines.find((l) => l.startsWith("hidden:"))!;
  assert.ok(!hidden.includes("\n"));
  assert.match(hidden, /x\\nstate: {6}failed\\n\.env/);
});
