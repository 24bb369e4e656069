/**
 * `jobs prune` removes job folders and keeps what they used: delegate_usage and `jobs usage`
 * report the same tokens and cost after a prune as before it. The default layout (state dir
 * `~/.ollama-mcp/jobs` under the test's HOME), the default engine (the real Claude Code CLI
 * against the emulator), the real server and the real terminal command.
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { runCli } from "../cli/jobs_support.ts";
import { cliLayout, defaultLayout } from "../support/default_layout.ts";
import { field, tempDir } from "../support/harness.ts";
import { startScene } from "../support/scene.ts";

const PRICING = { "qwen3:8b": { inputPerMillion: 1000, outputPerMillion: 2000 } };

/** The report without its first line, which may add how many of the jobs were pruned. */
const body = (text: string) => text.split("\n").slice(1).join("\n");

Deno.test("jobs prune keeps delegate_usage's totals: tokens, cost and job counts are the same after", async () => {
  const layout = defaultLayout("od-prune-home-");
  await using scene = await startScene({ ...layout, userConfig: { pricing: PRICING } });
  const work = tempDir("od-prune-work-");
  const ids: string[] = [];
  for (const model of ["qwen3:8b", "qwen3:8b", "gpt-oss:120b-cloud"]) {
    const reply = await scene.call("delegate_start", {
      prompt: `@reply done\ntask ${crypto.randomUUID()}`,
      model,
      cwd: work,
      wait_seconds: 90,
    });
    assert.equal(field(reply.text, "state"), "completed", reply.text);
    ids.push(field(reply.text, "job_id")!);
  }
  const before = await scene.call("delegate_usage", { days: 0 });
  assert.equal(before.isError, false, before.text);
  assert.match(before.text, /^Usage over all recorded jobs: 3 jobs$/m);
  assert.match(before.text, /^ {2}qwen3:8b .* 2 jobs .* cost \$\d+\.\d+/m);
  assert.match(before.text, /^ {2}gpt-oss:120b-cloud .* 1 job .* cost unknown/m);
  const cli = cliLayout(layout);
  const usageBefore = await runCli(cli, ["jobs", "usage", "--days", "0", "--json"]);
  assert.equal(usageBefore.code, 0, usageBefore.stderr);

  // The owning server must be gone for its jobs to be pruned.
  await scene.server.close();
  const prune = await runCli(cli, ["jobs", "prune", "--older-than", "0m"]);
  assert.equal(prune.code, 0, prune.stdout + prune.stderr);
  assert.match(prune.stdout, /^Removed 3 finished jobs /);
  for (const id of ids) assert.equal(existsSync(join(layout.stateDir, id)), false, id);
  // Only what outlives job folders on purpose: the quality ledger (and the dot folders).
  assert.deepEqual(
    readdirSync(layout.stateDir).filter((n) => !n.startsWith(".") && n !== "ledger.jsonl"),
    [],
  );

  const server = await scene.startServer();
  const after = await server.call("delegate_usage", { days: 0 });
  assert.equal(after.isError, false, after.text);
  assert.equal(
    after.text.split("\n")[0],
    "Usage over all recorded jobs: 3 jobs (3 of them pruned: their folders are gone, their " +
      "usage is kept)",
  );
  assert.equal(body(after.text), body(before.text));
  // The last 30 days, the tool's default, count them too.
  assert.match((await server.call("delegate_usage", {})).text, /: 3 jobs \(3 of them pruned/);
  const usageAfter = await runCli(cli, ["jobs", "usage", "--days", "0", "--json"]);
  assert.deepEqual(JSON.parse(usageAfter.stdout), JSON.parse(usageBefore.stdout));
  // delegate_list shows jobs, not history: the pruned ones are gone from it.
  assert.match((await server.call("delegate_list", {})).text, /No jobs yet\./);
  // The prune said so, and where.
  const ledger = join(layout.stateDir, ".usage", "pruned.jsonl");
  assert.ok(
    prune.stdout.includes(
      "Their tokens and cost stay counted by ollama-delegate jobs usage and delegate_usage " +
        `(kept in ${ledger}).`,
    ),
    prune.stdout,
  );
});
