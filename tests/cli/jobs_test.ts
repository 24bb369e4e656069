/**
 * `ollama-delegate jobs` from a terminal, against hand-written records in a private state dir.
 * The CLI runs as a subprocess with stdout piped (not a terminal), so its output must be the
 * plain, stable text.
 */
import assert from "node:assert/strict";
import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { renderJobsTable } from "../../src/cli/jobs/jobs.ts";
import { type CliIo, humanAge } from "../../src/cli/jobs/common.ts";
import { selfIdentity } from "../../src/platform/process_identity.ts";
import type { JobRecord } from "../../src/jobs/record.ts";
import { until } from "../support/harness.ts";
import { baseRecord, cliEnv, runCli, startCli, writeJob } from "./jobs_support.ts";

const T = Date.UTC(2024, 2, 10, 12);
const ESC = "\u001b";
const S1 = "51000000-0000-4000-8000-000000000001";
const S2 = "52000000-0000-4000-8000-000000000002";
const A = "a1000000-0000-4000-8000-000000000001";
const B = "b2000000-0000-4000-8000-000000000002";
const C = "c3000000-0000-4000-8000-000000000003";
const PRICING = { "qwen3:8b": { inputPerMillion: 0.5, outputPerMillion: 2 } };
const usage = (input: number, output: number) => ({
  inputTokens: input,
  outputTokens: output,
  cacheReadTokens: 0,
  cacheCreationTokens: 0,
  numTurns: 2,
  durationMs: 2000,
});

function records(): JobRecord[] {
  return [
    baseRecord(A, S1, { usage: usage(1000, 200) }),
    baseRecord(B, S1, {
      turn: 2,
      state: "failed",
      model: "glm-5:cloud",
      createdAt: T + 60_000,
      startedAt: T + 60_000,
      endedAt: T + 62_500,
      promptPreview: "Fix the bug\nin main.ts",
      usage: usage(20_000, 1000),
      errorText: "boom",
      commands: [
        { command: "npm test", exitCode: 2, durationMs: 900 },
        { command: "ls", exitCode: 0, durationMs: 3 },
      ],
      changesTracked: true,
      permissionAsks: [
        { tool: "Bash", detail: "npm test", answer: "once", by: "person" },
        { tool: "Write", detail: "a.txt", answer: "deny", by: "timeout" },
      ],
    }),
    baseRecord(C, S2, {
      engine: "native",
      model: "llama3",
      state: "cancelled",
      createdAt: T + 120_000,
      startedAt: T + 120_000,
      endedAt: T + 125_000,
      promptPreview: "   \n  Summarise the repository  ",
    }),
  ];
}

function fixture() {
  const ctx = cliEnv({ userConfig: { pricing: PRICING } });
  for (const r of records()) writeJob(ctx.stateDir, r, { result: `result of ${r.id}` });
  return ctx;
}

const TABLE = (stateDir: string) =>
  [
    "  ID        STATE      ENGINE  MODEL        TURN  ELAPSED  TOKENS  COST     PROMPT",
    `session ${S2}  cwd /work`,
    "  c3000000  cancelled  native  llama3       1     5.0s     -       unknown  Summarise the repository",
    `session ${S1}  cwd /work`,
    "  a1000000  completed  claude  qwen3:8b     1     2.5s     1.2k    $0.0009  a prompt",
    "  b2000000  failed     claude  glm-5:cloud  2     2.5s     21k     unknown  Fix the bug",
    "",
    `3 of 3 jobs in 2 conversations, newest first. State dir: ${stateDir}`,
    "",
  ].join("\n");

Deno.test("jobs: a plain table, newest conversation first, turns in order, no colour", async () => {
  const ctx = fixture();
  const run = await runCli(ctx, ["jobs"]);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stdout, TABLE(ctx.stateDir));
  assert.ok(!run.stdout.includes(ESC), "no escape sequences");
  // NO_COLOR or not, piped output is the same.
  const plain = await runCli({ ...ctx, env: { ...ctx.env, NO_COLOR: "1" } }, ["jobs", "list"]);
  assert.equal(plain.stdout, run.stdout);
});

Deno.test("jobs: --state, --limit, --all and --json", async () => {
  const ctx = fixture();
  const failed = await runCli(ctx, ["jobs", "--state", "failed"]);
  assert.match(failed.stdout, /^ {2}b2000000 {2}failed/m);
  assert.doesNotMatch(failed.stdout, /a1000000|c3000000/);
  assert.match(failed.stdout, /1 of 1 job in 1 conversation/);
  const limited = await runCli(ctx, ["jobs", "--limit", "1"]);
  assert.match(limited.stdout, /1 of 3 jobs in 1 conversation/);
  assert.match(limited.stdout, /c3000000/);
  assert.match(limited.stdout, /\n2 older jobs not shown: --limit <n> or --all shows them\.\n$/);
  assert.doesNotMatch(failed.stdout, /not shown/);
  const all = await runCli(ctx, ["jobs", "--all", "--json"]);
  const parsed = JSON.parse(all.stdout) as {
    total: number;
    jobs: Array<{ id: string; cost: { kind: string; amount?: number } }>;
  };
  assert.equal(parsed.total, 3);
  assert.deepEqual(parsed.jobs.map((j) => j.id), [C, B, A]);
  assert.deepEqual(parsed.jobs.map((j) => j.cost.kind), ["no-usage", "unpriced", "known"]);
  const bad = await runCli(ctx, ["jobs", "--state", "done"]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /Unknown state "done"/);
  const help = await runCli(ctx, ["jobs", "prune", "--help"]);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /--older-than <age>/);
  assert.match(help.stdout, /^ {6}--no-status {12}no live status line/m);
  assert.match(help.stdout, /never when NO_COLOR is set \(FORCE_COLOR overrides\nboth\); live/);
});

Deno.test("jobs show: record, prompt, result head and paths; ids by prefix", async () => {
  const ctx = fixture();
  const run = await runCli(ctx, ["jobs", "show", "b200"]);
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, new RegExp(`^job {9}${B}$`, "m"));
  assert.match(run.stdout, /^state {7}failed$/m);
  assert.match(run.stdout, /^tokens {6}in 20000 \/ out 1000 {2}\(2 turns\)$/m);
  assert.match(
    run.stdout,
    /^cost {8}unknown {2}\(no price for "glm-5:cloud" in the pricing setting\)$/m,
  );
  assert.match(run.stdout, /^error {7}boom$/m);
  // The evidence as the replies give it: each command with its exit code; no file changed,
  // which the server looked for.
  assert.match(run.stdout, /^commands {4}2 run, 1 failed: npm test \(exit 2\), ls \(exit 0\)$/m);
  assert.match(run.stdout, /^changed {5}none$/m);
  // The person's answers to its permission questions (issue 31, item 3).
  assert.match(
    run.stdout,
    /^asked {7}2: Bash\(npm test\) allowed once, Write\(a\.txt\) denied \(no answer in time\)$/m,
  );
  const other = await runCli(ctx, ["jobs", "show", A]);
  assert.doesNotMatch(other.stdout, /^(commands|changed|asked) /m);
  assert.match(run.stdout, /--- prompt \(22 bytes\) ---\nFix the bug\nin main.ts\n/);
  assert.match(run.stdout, new RegExp(`--- result \\(\\d+ chars\\) ---\\nresult of ${B}\\n`));
  assert.ok(run.stdout.includes(`result      ${join(ctx.stateDir, B, "result.txt")}\n`));
  assert.ok(
    run.stdout.includes(`activity    ${join(ctx.stateDir, B, "stream.jsonl")}  (not there)`),
  );
  const priced = await runCli(ctx, ["jobs", "show", A, "--json"]);
  const json = JSON.parse(priced.stdout) as { cost: { kind: string; amount: number } };
  assert.equal(json.cost.kind, "known");
  assert.equal(json.cost.amount, (1000 * 0.5 + 200 * 2) / 1e6);
  const unknown = await runCli(ctx, ["jobs", "show", "dddd"]);
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /No job id starts with "dddd"/);
  const notAnId = await runCli(ctx, ["jobs", "show", "../x"]);
  assert.equal(notAnId.code, 2);
  assert.match(notAnId.stderr, /is not a job id/);
});

Deno.test("jobs show, tail, cancel: a short, missing or wrong id says what an id must be", async () => {
  const ctx = fixture();
  const hint = "ollama-delegate jobs --all lists the ids";
  for (const command of ["show", "tail", "cancel"]) {
    const short = await runCli(ctx, ["jobs", command, "b20"]);
    assert.equal(short.code, 2, short.stderr);
    assert.equal(
      short.stderr,
      'ollama-delegate jobs: "b20" is too short: a job id prefix needs at least 4 characters ' +
        `(the ID column shows 8). ${hint}\n`,
    );
    // A second id is refused, not silently ignored.
    const two = await runCli(ctx, ["jobs", command, "a100", "b200"]);
    assert.equal(two.code, 2);
    assert.match(two.stderr, new RegExp(`jobs ${command} takes one job id; unexpected "b200"`));
  }
  const missing = await runCli(ctx, ["jobs", "show"]);
  assert.equal(missing.code, 2);
  assert.equal(
    missing.stderr,
    `ollama-delegate jobs: Missing job id: ollama-delegate jobs show <id>. ${hint}\n`,
  );
  const notHex = await runCli(ctx, ["jobs", "show", "job-b2"]);
  assert.equal(notHex.code, 2);
  assert.equal(
    notHex.stderr,
    'ollama-delegate jobs: "job-b2" is not a job id: an id is a UUID (hex digits and ' +
      "dashes), and a prefix of one needs at least 4 characters and must match a single " +
      `job. ${hint}\n`,
  );
  const unknown = await runCli(ctx, ["jobs", "show", "dddd"]);
  assert.equal(unknown.code, 1);
  assert.equal(
    unknown.stderr,
    `ollama-delegate jobs: No job id starts with "dddd" in ${ctx.stateDir}. The newest of ` +
      `its 3 jobs: ${C} (cancelled, llama3, created 2024-03-10 12:02 UTC); ${B} (failed, ` +
      `glm-5:cloud, created 2024-03-10 12:01 UTC); ${A} (completed, qwen3:8b, created ` +
      `2024-03-10 12:00 UTC). ${hint}\n`,
  );
  // `jobs <id>` most likely means `jobs show <id>`.
  const bare = await runCli(ctx, ["jobs", "b2000000"]);
  assert.equal(bare.code, 2);
  assert.match(
    bare.stderr,
    /Unknown jobs command "b2000000": to see a job, run ollama-delegate jobs show b2000000/,
  );
});

Deno.test("jobs usage: totals per model and per day, unknown cost stays unknown", async () => {
  const ctx = fixture();
  const run = await runCli(ctx, ["jobs", "usage", "--days", "0"]);
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /^Usage over all recorded jobs: 3 jobs$/m);
  assert.match(run.stdout, /^ {2}qwen3:8b .* 1 job .* cost \$0\.0009$/m);
  assert.match(run.stdout, /^ {2}glm-5:cloud .* cost unknown \(21000 tokens unpriced\)$/m);
  assert.match(run.stdout, /^ {2}llama3:latest .* cost unknown {2}\(1 without usage\)$/m);
  assert.match(run.stdout, /^ {2}2024-03-10 .* 3 jobs .* cost \$0\.0009 \+ unknown/m);
  const recent = await runCli(ctx, ["jobs", "usage"]);
  assert.match(recent.stdout, /^Usage over the last 30 days \(UTC, today included\): 0 jobs$/m);
  const json = JSON.parse((await runCli(ctx, ["jobs", "usage", "--days", "0", "--json"])).stdout);
  assert.equal(json.total.jobs, 3);
  assert.equal(json.total.unpricedTokens, 21000);
});

Deno.test("jobs prune: --older-than and --dry-run", async () => {
  const ctx = fixture();
  const dry = await runCli(ctx, ["jobs", "prune", "--older-than", "7d", "--dry-run"]);
  assert.equal(dry.code, 0, dry.stderr);
  assert.match(
    dry.stdout,
    /^Would remove 3 finished jobs that ended before \S+ \(older than 7d\) from /m,
  );
  const mixed = await runCli(ctx, ["jobs", "prune", "--older-than", "30h", "--dry-run"]);
  assert.match(mixed.stdout, /\(older than 1d 6h\) from /);
  assert.ok(existsSync(join(ctx.stateDir, A)));
  // Seconds, as --job-timeout takes them (refused before one parser served both).
  const seconds = await runCli(ctx, ["jobs", "prune", "--older-than", "90s", "--dry-run"]);
  assert.equal(seconds.code, 0, seconds.stderr);
  // 90 seconds, which the message rounds to minutes.
  assert.match(seconds.stdout, /^Would remove 3 finished jobs .*\(older than 2m\) from /m);
  for (const text of ["7 parsecs", "30"]) {
    const bad = await runCli(ctx, ["jobs", "prune", "--older-than", text]);
    assert.equal(bad.code, 2, text);
    assert.match(bad.stderr, /Cannot use age ".*": write a number with a unit, like 90s, 30m, 2h/);
  }
  const run = await runCli(ctx, ["jobs", "prune", "--older-than", "12h", "--json"]);
  const report = JSON.parse(run.stdout) as { removed: Array<{ id: string }> };
  assert.deepEqual(report.removed.map((r) => r.id).sort(), [A, B, C]);
  for (const id of [A, B, C]) assert.equal(existsSync(join(ctx.stateDir, id)), false);
  const after = await runCli(ctx, ["jobs"]);
  assert.equal(after.stdout, `No jobs in ${ctx.stateDir}.\n`);
});

Deno.test("jobs cancel: a job whose server died is recorded as interrupted", async () => {
  const ctx = cliEnv();
  const id = "dead0000-0000-4000-8000-000000000001";
  writeJob(
    ctx.stateDir,
    baseRecord(id, S1, {
      state: "running",
      endedAt: undefined,
      createdAt: Date.now() - 1000,
      startedAt: Date.now() - 1000,
      owner: { pid: process.pid, startTime: "not this one" },
    }),
  );
  const run = await runCli(ctx, ["jobs", "cancel", id]);
  assert.equal(run.code, 0, run.stderr);
  assert.match(
    run.stdout,
    /the server that ran it \(pid \d+\) is gone, so it is now recorded as interrupted/,
  );
  const record = JSON.parse(readFileSync(join(ctx.stateDir, id, "job.json"), "utf8"));
  assert.equal(record.state, "interrupted");
  const again = await runCli(ctx, ["jobs", "cancel", id]);
  assert.match(again.stdout, /had already ended \(interrupted\); nothing to cancel/);
});

Deno.test("jobs tail: follows a native transcript as it grows, then prints the result", async () => {
  const ctx = cliEnv({ userConfig: { pricing: PRICING } });
  const id = "7a110000-0000-4000-8000-000000000001";
  const start = Date.now();
  // Owned by this test process, which is alive: the CLI must treat it as live.
  const live = baseRecord(id, S1, {
    engine: "native",
    state: "running",
    createdAt: start,
    startedAt: start,
    endedAt: undefined,
    owner: await selfIdentity(),
  });
  const dir = writeJob(ctx.stateDir, live);
  const transcript = join(dir, "transcript.jsonl");
  const line = (entry: unknown) => appendFileSync(transcript, `${JSON.stringify(entry)}\n`);
  line({ kind: "text", text: "Looking at the files first." });
  const tail = startCli(ctx, ["jobs", "tail", id.slice(0, 8)]);
  try {
    await until(
      () => tail.output().includes("[text] Looking at the files first."),
      30_000,
      "backlog",
    );
    line({ kind: "tool_call", id: "c1", name: "Bash", input: { command: "ls -la" } });
    await until(() => tail.output().includes("[tool] Bash: ls -la"), 30_000, "the tool call");
    // Half a line, then the rest: only whole lines are printed.
    appendFileSync(transcript, '{"kind":"tool_result","id":"c1","text":"total 0\\nfile.txt",');
    await new Promise((r) => setTimeout(r, 600));
    assert.doesNotMatch(tail.output(), /\[result\]/);
    appendFileSync(transcript, '"isError":false}\n');
    await until(
      () => tail.output().includes("[result] total 0 file.txt"),
      10_000,
      "the tool result",
    );
    line({ kind: "tool_call", id: "c2", name: "Read", input: { file_path: "/work/file.txt" } });
    line({ kind: "tool_result", id: "c2", text: "no such file", isError: true });
    await until(() => tail.output().includes("[error] no such file"), 30_000, "the error");
    assert.equal(tail.child.exitCode, null, "tail ended while the job runs");
    // The job ends on its answer: printed once, as the result.
    line({ kind: "text", text: "All done: 1 file." });
    writeFileSync(join(dir, "result.txt"), "All done: 1 file.");
    writeJob(ctx.stateDir, {
      ...live,
      state: "completed",
      endedAt: start + 4000,
      toolCalls: 2,
      usage: usage(1000, 200),
    });
    const run = await tail.done;
    assert.equal(run.code, 0, run.stderr);
    const lines = run.stdout.trimEnd().split("\n");
    assert.equal(lines[0], `--- job ${id} (native, qwen3:8b): running ---`);
    assert.deepEqual(lines.slice(1, 6), [
      "[text] Looking at the files first.",
      "[tool] Bash: ls -la",
      "[result] total 0 file.txt",
      "[tool] Read: /work/file.txt",
      "[error] no such file",
    ]);
    assert.equal(
      lines[6],
      "--- completed after 4.0s · 2 tool calls · tokens in 1000 / out 200 · cost $0.0009 ---",
    );
    assert.deepEqual(lines.slice(7), ["All done: 1 file."]);
    assert.ok(!run.stdout.includes(ESC), "no escape sequences");
  } finally {
    tail.child.kill();
    await tail.done.catch(() => {});
  }
});

Deno.test("renderJobsTable: colour only when colour is on", () => {
  const io = (colour: boolean): CliIo => ({
    out() {},
    err() {},
    write() {},
    colour,
    live: true,
    columns: 100,
    env: {},
    cwd: "/",
    home: "/",
  });
  const plain = renderJobsTable("/s", records(), 3, [], io(false), PRICING, T);
  const fancy = renderJobsTable("/s", records(), 3, [], io(true), PRICING, T);
  assert.ok(!plain.includes(ESC));
  assert.ok(fancy.includes(`${ESC}[32mcompleted${ESC}[39m`));
  // Stripping the escapes gives the plain table back.
  assert.equal(fancy.replace(new RegExp(`${ESC}\\[\\d+m`, "g"), ""), plain);
});

Deno.test("humanAge: ages as a person writes them", () => {
  const cases: Array<[number, string]> = [
    [30 * 86_400_000, "30d"],
    [14 * 86_400_000, "14d"],
    [12 * 3_600_000, "12h"],
    [30 * 3_600_000, "1d 6h"],
    [90 * 60_000, "90m"],
    [60 * 60_000, "1h"],
    [150 * 60_000, "2h 30m"],
    [(86_400 + 90) * 1000, "1d 2m"],
    [45_000, "45s"],
    [0, "0s"],
  ];
  for (const [ms, text] of cases) assert.equal(humanAge(ms), text, String(ms));
});

Deno.test("jobs tail: a job that ended on its answer prints the answer once, below the summary", async () => {
  const ctx = cliEnv();
  const answer = "The bug is in parse.ts:42.\nFix: check for an empty line first.";
  const id = "7a220000-0000-4000-8000-000000000002";
  const dir = writeJob(ctx.stateDir, baseRecord(id, S1, { engine: "native", toolCalls: 1 }), {
    result: answer,
  });
  const entries = [
    { kind: "text", text: "Reading the parser." },
    { kind: "tool_call", id: "c1", name: "Read", input: { file_path: "/work/parse.ts" } },
    { kind: "tool_result", id: "c1", text: "export function parse() {}", isError: false },
    { kind: "text", text: answer },
  ];
  writeFileSync(
    join(dir, "transcript.jsonl"),
    entries.map((e) => `${JSON.stringify(e)}\n`).join(""),
  );
  const run = await runCli(ctx, ["jobs", "tail", id]);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stdout.split("The bug is in parse.ts:42.").length - 1, 1, run.stdout);
  const lines = run.stdout.trimEnd().split("\n");
  assert.deepEqual(lines.slice(1, 4), [
    "[text] Reading the parser.",
    "[tool] Read: /work/parse.ts",
    "[result] export function parse() {}",
  ]);
  assert.match(lines[4]!, /^--- completed after /);
  assert.deepEqual(lines.slice(5), answer.split("\n"));

  // Words that are not the answer (a job that failed after them) are still shown.
  const failedId = "7a330000-0000-4000-8000-000000000003";
  const failedDir = writeJob(
    ctx.stateDir,
    baseRecord(failedId, S1, { engine: "native", state: "failed", errorText: "backend gone" }),
  );
  writeFileSync(
    join(failedDir, "transcript.jsonl"),
    `${JSON.stringify({ kind: "text", text: "Let me check the tests." })}\n`,
  );
  const failed = await runCli(ctx, ["jobs", "tail", failedId]);
  assert.equal(failed.code, 1);
  assert.deepEqual(failed.stdout.trimEnd().split("\n").slice(1), [
    "[text] Let me check the tests.",
    "--- failed after 2.5s · 0 tool calls · cost unknown ---",
    "error: backend gone",
    "(no result text)",
  ]);
});
