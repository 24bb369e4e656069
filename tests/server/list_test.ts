import assert from "node:assert/strict";
import type { JobRecord } from "../../src/jobs/record.ts";
import { renderList } from "../../src/server/list.ts";

/** A page as jobs/list_page.ts hands it over: the rows shown and how many match. */
const page = (
  records: JobRecord[],
  total = records.length,
  corrupt: Array<{ id: string; reason: string }> = [],
) => ({ records, total, corrupt });

const T0 = 1_700_000_000_000;
const S1 = "aaaaaaaa-0000-4000-8000-000000000001";
const S2 = "bbbbbbbb-0000-4000-8000-000000000002";
const S3 = "cccccccc-0000-4000-8000-000000000003";
const jobId = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`;

/** A finished job record; `n` orders creation (bigger = newer). */
function rec(n: number, sessionId: string, turn: number, over: Partial<JobRecord> = {}): JobRecord {
  return {
    format: 1,
    id: jobId(n),
    sessionId,
    turn,
    engine: "claude",
    model: "qwen3-coder",
    cwd: "/work",
    state: "completed",
    createdAt: T0 + n * 1000,
    startedAt: T0 + n * 1000,
    endedAt: T0 + n * 1000 + 2500,
    promptPreview: `prompt ${n}`,
    options: { permissionMode: "auto", addDirs: [] },
    sessionCreated: true,
    toolCalls: 0,
    permissionDenials: [],
    ...over,
  };
}

/** Newest first, as the manager hands them over: S1 turn 2 is newer than S2, S1 turn 1 older. */
const RECORDS = [
  rec(5, S1, 3, { state: "failed" }),
  rec(4, S2, 1, { model: "gpt-oss:20b", cwd: "/other" }),
  rec(3, S1, 2),
  rec(2, S3, 1, { state: "cancelled" }),
  rec(1, S1, 1),
];

const row = (n: number, state: string, turn: number, prompt = `prompt ${n}`) =>
  `  ${state.padEnd(11)} turn ${String(turn).padEnd(3)}     2.5s  job ${jobId(n)}  "${prompt}"`;

Deno.test("renderList: groups a session's turns together, sessions by newest job", () => {
  assert.equal(
    renderList("/state", page(RECORDS), undefined),
    [
      "State dir: /state",
      "5 of 5 jobs in 3 conversations, newest first",
      "",
      `session ${S1}  model qwen3-coder  cwd /work`,
      row(1, "completed", 1),
      row(3, "completed", 2),
      row(5, "failed", 3),
      "",
      `session ${S2}  model gpt-oss:20b  cwd /other`,
      row(4, "completed", 1),
      "",
      `session ${S3}  model qwen3-coder  cwd /work`,
      row(2, "cancelled", 1),
    ].join("\n"),
  );
});

Deno.test("renderList: a page of a state says how many more match and how to see them", () => {
  const completed = RECORDS.filter((r) => r.state === "completed");
  assert.equal(
    renderList("/state", page(completed.slice(0, 2), 3), "completed"),
    [
      "State dir: /state",
      "2 of 3 jobs in 2 conversations, newest first",
      "",
      `session ${S2}  model gpt-oss:20b  cwd /other`,
      row(4, "completed", 1),
      "",
      `session ${S1}  model qwen3-coder  cwd /work`,
      row(3, "completed", 2),
      "",
      "1 older completed job not shown: limit (at most 100) shows more.",
    ].join("\n"),
  );
});

Deno.test("renderList: the newest job of five; at the most a call can ask, state narrows", () => {
  const out = renderList("/state", page(RECORDS.slice(0, 1), 5), undefined).split("\n");
  assert.deepEqual(out, [
    "State dir: /state",
    "1 of 5 jobs in 1 conversation, newest first",
    "",
    `session ${S1}  model qwen3-coder  cwd /work`,
    row(5, "failed", 3),
    "",
    "4 older jobs not shown: limit (at most 100) shows more.",
  ]);
  const hundred = Array.from({ length: 100 }, (_, i) => rec(1000 - i, S1, 100 - i));
  assert.equal(
    renderList("/state", page(hundred, 10_000), undefined).split("\n").at(-1),
    "9900 older jobs not shown: state narrows the list.",
  );
});

Deno.test("renderList: empty lists, with and without a filter", () => {
  assert.equal(renderList("/s", page([]), undefined), "State dir: /s\nNo jobs yet.");
  assert.equal(renderList("/s", page([]), "running"), "State dir: /s\nNo running jobs.");
  assert.equal(
    renderList("/s", page([rec(1, S1, 1)]), undefined).split("\n")[1],
    "1 of 1 job in 1 conversation, newest first",
  );
});

Deno.test("renderList: corrupt records are listed after the jobs", () => {
  const corrupt = [
    { id: jobId(9), reason: "job.json is not JSON" },
    { id: jobId(8), reason: "result.json is not a readable job result" },
  ];
  const out = renderList("/s", page([rec(1, S1, 1)], 1, corrupt), undefined).split("\n");
  assert.deepEqual(out.slice(-4), [
    "",
    "Unreadable job records (skipped):",
    `  ${jobId(9)}: job.json is not JSON`,
    `  ${jobId(8)}: result.json is not a readable job result`,
  ]);
  assert.deepEqual(renderList("/s", page([], 0, corrupt), undefined).split("\n").slice(0, 4), [
    "State dir: /s",
    "No jobs yet.",
    "",
    "Unreadable job records (skipped):",
  ]);
});

Deno.test("renderList: prompt previews are flattened and cut at 70 chars", () => {
  const long = "word ".repeat(30);
  const out = renderList(
    "/s",
    page([
      rec(1, S1, 1, { promptPreview: `  multi\n\tline   prompt ` }),
      rec(0, S2, 1, {
        promptPreview: long,
      }),
    ]),
    undefined,
  );
  assert.ok(out.includes(row(1, "completed", 1, "multi line prompt")), out);
  assert.ok(out.includes(row(0, "completed", 1, `${long.slice(0, 70)}…`)), out);
});
