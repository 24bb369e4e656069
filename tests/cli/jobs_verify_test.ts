/** `jobs show` prints a job's verification, its auto choice and the claims its evidence contradicts. */
import assert from "node:assert/strict";
import { baseRecord, cliEnv, runCli, writeJob } from "./jobs_support.ts";

Deno.test("jobs show: verify verdict, rounds, model choice and claims", async () => {
  const ctx = cliEnv();
  const id = crypto.randomUUID();
  writeJob(
    ctx.stateDir,
    baseRecord(id, crypto.randomUUID(), {
      state: "failed",
      errorText: "verify_failed: ...",
      modelChoice: 'auto: 9 of 10 verified for "tester" here',
      checks: { verify: ["npm test"], verifyRounds: 1 },
      verification: {
        verdict: "failed",
        stopped: "all 1 repair rounds used",
        rounds: [
          {
            passed: false,
            runs: [{ command: "npm test", exitCode: 1, durationMs: 4200, tail: "5 failing" }],
          },
          {
            passed: false,
            runs: [{ command: "npm test", exitCode: 1, durationMs: 3900, tail: "2 failing" }],
          },
        ],
      },
      claims: [{
        kind: "tests-pass",
        claim: "All tests pass",
        reason: "the last test command failed: npm test",
      }],
    }),
  );
  const run = await runCli(ctx, ["jobs", "show", id]);
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /state +failed \(verify failed\)/);
  assert.match(run.stdout, /model +qwen3:8b {2}\(auto: 9 of 10 verified for "tester" here\)/);
  assert.match(
    run.stdout,
    /verify +failed \(npm test: exit 1, 3\.9s, 2 failing\), after 1 repair round; all 1 repair rounds used/,
  );
  assert.match(run.stdout, /round 1 +failed \(npm test: exit 1, 4\.2s, 5 failing\)/);
  assert.match(run.stdout, /claim +"All tests pass": the last test command failed: npm test/);
});

Deno.test("jobs show: a pass of a check the delegate changed says so, its file names escaped", async () => {
  const ctx = cliEnv();
  const id = crypto.randomUUID();
  writeJob(
    ctx.stateDir,
    baseRecord(id, crypto.randomUUID(), {
      state: "completed",
      checks: { verify: ["npm test"] },
      verification: {
        verdict: "passed",
        rounds: [{ passed: true, runs: [{ command: "npm test", exitCode: 0, durationMs: 1200 }] }],
        changedCheck: [
          { path: "test/a\nstate: completed (verified).js" },
          { path: "package.json", part: "scripts" },
          { path: "conftest.py", turn: 1 },
        ],
      },
    }),
  );
  const run = await runCli(ctx, ["jobs", "show", id]);
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /^state +completed \(passed a changed check\)$/m);
  assert.match(
    run.stdout,
    /^verify +passed \(npm test: exit 0, 1\.2s\); the delegate changed what the check runs: "test\/a\\nstate: completed \(verified\)\.js", package\.json "scripts", conftest\.py \(turn 1\)$/m,
  );
  assert.doesNotMatch(run.stdout, /\(verified\)$/m);
});
