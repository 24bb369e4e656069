/**
 * The wiring of the terminal commands whose tests run in this process (tests/cli/jobs_support.ts:
 * `runCli` calls `jobsMain`, `statsMain`, `doctorMain` and `modelsMain` with an io of its own):
 * the program a user starts (`deno run src/main.ts`, or the installed package in the Node pass)
 * prints the same bytes and exits with the same codes, reading its settings from its environment
 * and working directory.
 */
import assert from "node:assert/strict";
import { baseRecord, cliEnv, runCli, runCliProcess, writeJob } from "./jobs_support.ts";

const S1 = "51000000-0000-4000-8000-000000000001";
const A = "a1000000-0000-4000-8000-000000000001";
const B = "b2000000-0000-4000-8000-000000000002";

Deno.test("cli wiring: jobs, stats, doctor and models print the same in a process of their own as in this one", async () => {
  const ctx = cliEnv({
    userConfig: { pricing: { "qwen3:8b": { inputPerMillion: 0.5, outputPerMillion: 2 } } },
  });
  writeJob(ctx.stateDir, baseRecord(A, S1), { result: "the answer" });
  writeJob(ctx.stateDir, baseRecord(B, S1, { turn: 2, state: "failed", errorText: "boom" }));
  const cases = [
    ["jobs"],
    ["jobs", "show", "a1000000"],
    ["jobs", "usage", "--days", "0", "--json"],
    ["stats", "--all"],
    ["doctor", "--help"],
    ["models", "--help"],
    // Usage errors: exit 2 and one line on stderr.
    ["jobs", "--state", "done"],
    ["jobs", "show", "../x"],
    ["doctor", "--bogus"],
    ["doctor", "qwen3:8b"],
    ["models"],
    ["models", "derive", "qwen3:8b"],
  ];
  for (const args of cases) {
    const [inside, outside] = await Promise.all([runCli(ctx, args), runCliProcess(ctx, args)]);
    const what = args.join(" ");
    assert.equal(outside.code, inside.code, `${what}: exit code\n${outside.stderr}`);
    assert.equal(outside.stdout, inside.stdout, `${what}: stdout`);
    assert.equal(outside.stderr, inside.stderr, `${what}: stderr`);
  }
  // The settings come from the environment it was given: the state dir holds the two jobs.
  const list = await runCliProcess(ctx, ["jobs"]);
  assert.match(list.stdout, /2 of 2 jobs in 1 conversation/);
  assert.ok(list.stdout.includes(ctx.stateDir), list.stdout);
  const bad = await runCliProcess(ctx, ["jobs", "--state", "done"]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /done/);
});
