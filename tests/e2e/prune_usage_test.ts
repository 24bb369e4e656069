/**
 * `jobs prune` removes job folders and keeps what they used: delegate_usage and `jobs usage`
 * report the same tokens and cost after a prune as before it; and it removes what Claude Code
 * kept of a pruned conversation in the delegates' config dir (its transcript), never that of a
 * conversation it keeps. The default layout (state dir `~/.ollama-mcp/jobs`, Claude config dir
 * `~/.ollama-mcp/claude` under the test's HOME), the default engine (the real Claude Code CLI
 * against the emulator), the real server and the real terminal command.
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
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

/** Every path under `dir`, relative to it. */
function walk(dir: string, base = dir): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    const rel = path.slice(base.length + 1);
    return e.isDirectory() ? [rel, ...walk(path, base)] : [rel];
  });
}

/** A finished job's record made `days` older, as if it had ended then. */
function age(stateDir: string, id: string, days: number): void {
  const file = join(stateDir, id, "job.json");
  const record = JSON.parse(readFileSync(file, "utf8"));
  const back = days * 86_400_000;
  for (const key of ["createdAt", "startedAt", "endedAt"]) record[key] -= back;
  writeFileSync(file, JSON.stringify(record, null, 2));
}

Deno.test("jobs prune removes a pruned conversation's Claude Code transcript; a conversation it keeps keeps its own", async () => {
  const layout = defaultLayout("od-prune-claude-");
  await using scene = await startScene({ ...layout });
  const work = tempDir("od-prune-claude-work-");
  const start = async (prompt: string) => {
    const r = await scene.call("delegate_start", {
      prompt,
      model: "qwen3:8b",
      cwd: work,
      allowed_tools: ["Bash"],
      wait_seconds: 90,
    });
    assert.equal(field(r.text, "state"), "completed", r.text);
    // `session_id: <id>   (turn 1)`
    return { id: field(r.text, "job_id")!, session: field(r.text, "session_id")!.split(" ")[0]! };
  };
  // Conversation A: a turn that ran a command, and a follow-up; conversation B: one turn.
  const a = await start(`@bash echo hi > a.txt\ntask ${crypto.randomUUID()}`);
  const next = await scene.call("delegate_followup", {
    job_id: a.id,
    prompt: "@reply done\nmore",
    wait_seconds: 90,
  });
  assert.equal(field(next.text, "state"), "completed", next.text);
  const a2 = field(next.text, "job_id")!;
  const b = await start(`@reply done\ntask ${crypto.randomUUID()}`);
  const claude = join(layout.home, ".ollama-mcp", "claude");
  const of = (session: string) => walk(claude).filter((p) => p.includes(session));
  // What Claude Code wrote of each conversation, by its session id.
  assert.ok(of(a.session).some((p) => p.endsWith(`/${a.session}.jsonl`)), walk(claude).join("\n"));
  assert.ok(of(b.session).some((p) => p.endsWith(`/${b.session}.jsonl`)), walk(claude).join("\n"));
  await scene.server.close();

  // A's first turn and B ended two days ago; A's follow-up just now: A is kept whole.
  age(layout.stateDir, a.id, 2);
  age(layout.stateDir, b.id, 2);
  const cli = cliLayout(layout);
  const prune = await runCli(cli, ["jobs", "prune", "--older-than", "1d"]);
  assert.equal(prune.code, 0, prune.stdout + prune.stderr);
  assert.match(prune.stdout, /^Removed 1 finished job /);
  assert.deepEqual(of(b.session), [], "B's files are gone");
  assert.match(
    prune.stdout,
    /^Removed [1-9]\d* file\(s\) their engines kept of these conversations outside the job folders, e\.g\. /m,
  );
  assert.equal(existsSync(join(layout.stateDir, b.id)), false);
  assert.ok(of(a.session).some((p) => p.endsWith(`/${a.session}.jsonl`)), "A keeps its transcript");
  assert.ok(existsSync(join(layout.stateDir, a.id)) && existsSync(join(layout.stateDir, a2)));

  // Once A goes too, so does everything Claude Code kept of it.
  const all = await runCli(cli, ["jobs", "prune", "--older-than", "0m", "--json"]);
  assert.equal(all.code, 0, all.stdout + all.stderr);
  const report = JSON.parse(all.stdout);
  assert.deepEqual(report.engineFiles.map((f: { sessionId: string }) => f.sessionId), [a.session]);
  assert.deepEqual(of(a.session), [], "A's files are gone");
});
