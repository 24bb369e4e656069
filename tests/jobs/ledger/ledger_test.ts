/** The quality ledger: the line an ended job leaves, reading it back, and its figures. */
import { tempDir } from "../../support/temp_dir.ts";
import { git } from "../../support/git_repo.ts";
import assert from "node:assert/strict";
import { appendFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { appendLedger, ledgerEntry, readQualityLedger } from "../../../src/jobs/ledger/ledger.ts";
import { groupStats, quantile } from "../../../src/jobs/ledger/stats.ts";
import type { JobRecord } from "../../../src/jobs/record.ts";
import { repoIdOf } from "../../../src/jobs/repo_id.ts";
import { bar, statsShort, statsTable } from "../../../src/jobs/ledger/stats_report.ts";
import { execFileSync } from "node:child_process";

function record(over: Partial<JobRecord> = {}): JobRecord {
  return {
    format: 1,
    id: crypto.randomUUID(),
    sessionId: crypto.randomUUID(),
    turn: 1,
    engine: "native",
    model: "llama3",
    cwd: "/work",
    state: "completed",
    createdAt: 1000,
    startedAt: 2000,
    endedAt: 12_000,
    promptPreview: "x",
    options: { permissionMode: "acceptEdits", addDirs: [] },
    sessionCreated: true,
    toolCalls: 3,
    permissionDenials: [],
    usage: {
      inputTokens: 1000,
      outputTokens: 200,
      cacheReadTokens: 0,
      cacheCreationTokens: 0,
      numTurns: 2,
      durationMs: 10_000,
    },
    ...over,
  };
}

Deno.test("ledgerEntry: the figures of an ended job, without its path", () => {
  const e = ledgerEntry(
    record({
      agent: "tester",
      repo: "git:0123456789abcdef",
      checks: { verify: ["npm test"] },
      verification: {
        verdict: "passed",
        rounds: [
          { passed: false, runs: [] },
          { passed: true, runs: [] },
        ],
      },
    }),
    { "llama3:latest": { inputPerMillion: 1, outputPerMillion: 5 } },
  );
  assert.equal(e.model, "llama3:latest");
  assert.equal(e.backend, "ollama");
  assert.equal(e.agent, "tester");
  assert.equal(e.verified, true);
  assert.equal(e.rounds, 1);
  assert.equal(e.tokensIn, 1000);
  assert.equal(e.cost, 0.002);
  assert.equal(e.wallMs, 10_000);
  assert.ok(!JSON.stringify(e).includes("/work"));
  const plain = ledgerEntry(record(), {});
  assert.equal(plain.verified, null, "no verify: neither verified nor not");
  assert.equal(plain.agent, "adhoc");
  assert.equal(plain.cost, null, "no price: unknown, not 0");
});

Deno.test("appendLedger and readQualityLedger: lines round-trip; broken ones are counted", async () => {
  const dir = tempDir("od-ledger-");
  await appendLedger(dir, record(), {});
  appendFileSync(join(dir, "ledger.jsonl"), 'not json\n{"v":2}\n');
  await appendLedger(dir, record({ state: "failed" }), {});
  const read = await readQualityLedger(dir);
  assert.equal(read.entries.length, 2);
  assert.equal(read.skipped, 2);
  assert.equal(read.entries[1]!.state, "failed");
  const tail = await readQualityLedger(dir, 300);
  assert.equal(tail.truncated, true);
  assert.equal(tail.entries.length, 1, "only the newest whole line");
});

Deno.test("groupStats: pass rate, median rounds, cost per verified success, wall quantiles", () => {
  const entries = [
    ...Array.from({ length: 10 }, (_, i) =>
      ledgerEntry(
        record({
          model: "qwen3-coder:30b",
          agent: "tester",
          endedAt: 2000 + (i + 1) * 1000,
          checks: { verify: ["t"] },
          verification: {
            verdict: i < 9 ? "passed" : "failed",
            rounds: Array.from({ length: i < 5 ? 1 : 2 }, () => ({ passed: true, runs: [] })),
          },
        }),
        { "qwen3-coder:30b": { inputPerMillion: 1, outputPerMillion: 1 } },
      )),
    ledgerEntry(record({ model: "llama3.2:3b", agent: "tester" }), {}),
  ];
  const [best, other] = groupStats(entries);
  assert.equal(best!.model, "qwen3-coder:30b");
  assert.equal(best!.passed, 9);
  assert.equal(best!.checked, 10);
  assert.equal(best!.medianRounds, 0.5);
  assert.equal(best!.costPerSuccess, (10 * 0.0012) / 9);
  assert.equal(best!.p50WallMs, 5000);
  assert.equal(best!.p95WallMs, 10_000);
  assert.equal(other!.passRate, null);
  assert.equal(quantile([], 0.5), 0);
  assert.equal(bar(0.9, 10), "█████████░");
  const table = statsTable([best!, other!]).join("\n");
  assert.match(table, /qwen3-coder:30b +tester +10 +█{18}░{2} 9 of 10 \(90%\)/);
  assert.match(table, /llama3\.2:3b +tester +1 +no checks/);
});

Deno.test("a pass of a check the delegate changed: not verified in the ledger, shown apart", async () => {
  const changed = (verdict: "passed" | "failed") =>
    record({
      model: "qwen3:8b",
      agent: "tester",
      checks: { verify: ["node test.js"] },
      verification: {
        verdict,
        rounds: [{ passed: verdict === "passed", runs: [] }],
        changedCheck: [{ path: "test.js" }],
      },
    });
  const pass = ledgerEntry(changed("passed"), {});
  assert.equal(pass.verified, false, "no reader counts it as a verified pass");
  assert.equal(pass.checkChanged, "passed");
  assert.equal(ledgerEntry(changed("failed"), {}).checkChanged, "failed");
  const unseen = record({
    checks: { verify: ["npm test"] },
    verification: {
      verdict: "passed",
      rounds: [{ passed: true, runs: [] }],
      changedCheckUnknown: "the delegate's changes are not all known: a walk stopped",
    },
  });
  assert.equal(ledgerEntry(unseen, {}).verified, false, "what may have changed unseen earns none");
  const dir = tempDir("od-ledger-");
  await appendLedger(dir, changed("passed"), {});
  appendFileSync(join(dir, "ledger.jsonl"), `${JSON.stringify({ ...pass, checkChanged: "x" })}\n`);
  const read = await readQualityLedger(dir);
  assert.equal(read.entries[0]!.checkChanged, "passed");
  assert.equal(read.skipped, 1);
  const [group] = groupStats([pass, pass, ledgerEntry(changed("failed"), {})]);
  assert.equal(group!.passed, 0);
  assert.equal(group!.checked, 3);
  assert.equal(group!.changedPasses, 2);
  const table = statsTable([group!]).join("\n");
  assert.match(table, /qwen3:8b +tester +3 +░{20} 0 of 3 \(0%\)/);
  assert.match(
    table,
    /Not counted as verified: passes of a check the delegate changed\n {2}qwen3:8b as tester: 2 passes of a check its delegate changed$/,
  );
  assert.match(
    statsShort([group!])[0]!,
    /verified 0 of 3 \(0%\), .*2 passes of a check its delegate changed \(not counted\)$/,
  );
});

Deno.test("repoIdOf: a git repository by its root commit, the same in a clone; else a digest", async () => {
  const dir = tempDir("od-repo-");
  git(dir, "init", "-q");
  git(dir, "commit", "-q", "--allow-empty", "-m", "root");
  const root = execFileSync("git", ["rev-list", "--max-parents=0", "HEAD"], { cwd: dir }).toString()
    .trim();
  assert.equal(await repoIdOf(dir), `git:${root.slice(0, 16)}`);
  const clone = join(tempDir("od-repo-"), "clone");
  git(dir, "clone", "-q", dir, clone);
  assert.equal(await repoIdOf(clone), await repoIdOf(dir));
  const plain = tempDir("od-plain-");
  assert.match(await repoIdOf(plain), /^dir:[0-9a-f]{16}$/);
  assert.ok(!(await repoIdOf(plain)).includes("od-plain"));
});

Deno.test("readQualityLedger: a window that starts on an entry's first byte keeps that entry", async () => {
  const dir = tempDir("od-ledger-");
  await appendLedger(dir, record(), {});
  await appendLedger(dir, record({ state: "failed" }), {});
  const last = readFileSync(join(dir, "ledger.jsonl"), "utf8").split("\n").at(-2)!;
  const tail = await readQualityLedger(dir, Buffer.byteLength(last) + 1);
  assert.equal(tail.truncated, true);
  assert.equal(tail.entries.length, 1, "the newest entry, whole");
  assert.equal(tail.entries[0]!.state, "failed");
  assert.equal(tail.skipped, 0);
});

Deno.test("ledgerEntry: calls recovered from text, and a job that ended on calls nothing ran, are kept and read back", async () => {
  const plain = ledgerEntry(record(), {});
  assert.equal(plain.recovered, undefined);
  assert.equal(plain.unrunCall, undefined);
  const native = ledgerEntry(record({ toolCallsRecovered: 2 }), {});
  assert.equal(native.recovered, 2);
  const unrun = ledgerEntry(
    record({
      engine: "claude",
      state: "failed",
      errorText: "tool_call_unparsed: the turn ended on a tool call the model wrote as text",
    }),
    {},
  );
  assert.equal(unrun.unrunCall, true);
  // Another failure is no unrun call.
  const other = ledgerEntry(record({ state: "failed", errorText: "context_overflow: cut" }), {});
  assert.equal(other.unrunCall, undefined);
  const dir = tempDir("od-ledger-");
  for (
    const r of [record({ toolCallsRecovered: 2 }), record({ errorText: "tool_call_unparsed: x" })]
  ) {
    await appendLedger(dir, r, {});
  }
  appendFileSync(join(dir, "ledger.jsonl"), JSON.stringify({ ...plain, unrunCall: "yes" }) + "\n");
  const read = await readQualityLedger(dir);
  assert.deepEqual(read.entries.map((e) => [e.recovered, e.unrunCall]), [[2, undefined], [
    undefined,
    true,
  ]]);
  assert.equal(read.skipped, 1, "a line with a malformed unrunCall is skipped");
});
