/** `jobs --by endpoint`: jobs grouped by the endpoint that served them, as a person runs it. */
import assert from "node:assert/strict";
import type { JobRecord } from "../../src/jobs/record.ts";
import { baseRecord, cliEnv, runCli, writeJob } from "./jobs_support.ts";

const GPU1 = "http://gpu1:11434";
const GPU2 = "http://gpu2:11434";
const id = (n: number) => `0000000${n}-0000-4000-8000-000000000000`;
const S1 = "aaaaaaaa-0000-4000-8000-000000000001";
const S2 = "bbbbbbbb-0000-4000-8000-000000000002";

function records(): JobRecord[] {
  const usage = {
    inputTokens: 1000,
    outputTokens: 200,
    cacheReadTokens: 0,
    cacheCreationTokens: 0,
    numTurns: 1,
    durationMs: 2500,
  };
  const at = (url: string, moves?: Array<{ from: string; to: string; reason: string }>) => ({
    endpoint: { url, poolSize: 2, ...(moves ? { moves } : {}) },
  });
  return [
    baseRecord(id(1), S1, { turn: 1, usage, ...at(GPU1) }),
    baseRecord(id(2), S1, { turn: 2, usage, ...at(GPU1) }),
    baseRecord(id(3), S1, {
      turn: 3,
      state: "failed",
      ...at(GPU2, [{
        from: GPU1,
        to: GPU2,
        reason: "it is down: connection failed (ECONNREFUSED)",
      }]),
    }),
    baseRecord(id(4), S2, { turn: 1, usage, ...at(GPU2) }),
    baseRecord(id(5), S2, { turn: 2, usage, ...at(GPU2) }),
    // A job from before pools (or never placed): counted apart.
    baseRecord(id(6), S2, { turn: 3 }),
  ];
}

Deno.test("jobs --by endpoint: one row per endpoint, follow-ups that stayed or moved in, and JSON", async () => {
  const ctx = cliEnv();
  for (const r of records()) writeJob(ctx.stateDir, r);
  const run = await runCli(ctx, ["jobs", "--by", "endpoint"]);
  assert.equal(run.code, 0, run.stderr);
  const rows = run.stdout.split("\n");
  assert.match(
    rows[0]!,
    /^ENDPOINT\s+JOBS\s+RUN\s+QUEUED\s+DONE\s+FAILED\s+TOKENS\s+BUSY\s+STAYED\s+MOVED IN$/,
  );
  assert.match(
    rows[1]!,
    new RegExp(`^${GPU2}\\s+3\\s+0\\s+0\\s+2\\s+1\\s+2\\.4k\\s+7\\.5s\\s+1\\s+1$`),
  );
  assert.match(
    rows[2]!,
    new RegExp(`^${GPU1}\\s+2\\s+0\\s+0\\s+2\\s+0\\s+2\\.4k\\s+5\\.0s\\s+1\\s+0$`),
  );
  assert.match(rows[3]!, /^\(none recorded\)\s+1\s+/);
  assert.match(run.stdout, /6 jobs on 2 endpoint\(s\)\. .* 67% of follow-up turns stayed\./);
  const json = await runCli(ctx, ["jobs", "--by", "endpoint", "--json"]);
  const parsed = JSON.parse(json.stdout) as {
    endpoints: Array<{ url?: string; jobs: number; stayed: number; movedIn: number }>;
    stayedShare: number;
  };
  assert.deepEqual(
    parsed.endpoints.map((e) => [e.url ?? null, e.jobs, e.stayed, e.movedIn]),
    [[GPU2, 3, 1, 1], [GPU1, 2, 1, 0], [null, 1, 0, 0]],
  );
  assert.equal(Math.round(parsed.stayedShare * 100), 67);
  const bad = await runCli(ctx, ["jobs", "--by", "model"]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /Cannot group by "model": jobs --by takes endpoint/);
});
