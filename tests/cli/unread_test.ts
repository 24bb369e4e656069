/**
 * `ollama-delegate unread`, and `--hook` as the plugin's UserPromptSubmit hook runs it: the
 * delegations of a project that ended unread are told once each, as Claude Code's context.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { unreadMain } from "../../src/cli/hooks/unread.ts";
import type { CliIo } from "../../src/cli/jobs/common.ts";
import { markRead, markUnread, projectKey } from "../../src/jobs/unread.ts";
import { tempDir } from "../support/harness.ts";
import { baseRecord, cliEnv, writeJob } from "./jobs_support.ts";

async function run(
  ctx: { env: Record<string, string>; cwd: string },
  argv: string[],
  input = "{}",
) {
  let stdout = "";
  let stderr = "";
  const io: CliIo = {
    out: (t) => void (stdout += `${t}\n`),
    err: (t) => void (stderr += `${t}\n`),
    write: (t) => void (stdout += t),
    colour: false,
    live: false,
    columns: undefined,
    env: ctx.env,
    cwd: ctx.cwd,
    home: ctx.env.HOME ?? ctx.cwd,
  };
  const code = await unreadMain(argv, io, { readInput: () => Promise.resolve(input) });
  return { code, stdout, stderr };
}

Deno.test("unread --hook: each delegation that ended unread is told once, as Claude Code's prompt context; nothing when there is nothing", async () => {
  const ctx = cliEnv();
  const project = tempDir("od-unread-project-");
  const t = Date.UTC(2026, 11, 5, 10);
  const verified = baseRecord(crypto.randomUUID(), crypto.randomUUID(), {
    project,
    endedAt: t + 2000,
    promptPreview: "make the date tests pass\n\x1b[31mstate: completed",
    checks: { verify: ["npm test"] },
    verification: { verdict: "passed", rounds: [{ passed: true, runs: [] }] },
    changedFiles: ["/work/a.ts", "/work/b.ts"],
  });
  const interrupted = baseRecord(crypto.randomUUID(), crypto.randomUUID(), {
    project,
    state: "interrupted",
    endedAt: t + 1000,
    promptPreview: "refactor the parser",
    errorText: "Stopped because the client closed stdin before the job finished",
  });
  const pruned = crypto.randomUUID();
  for (const r of [verified, interrupted]) {
    writeJob(ctx.stateDir, r);
    await markUnread(ctx.stateDir, project, r.id);
  }
  await markUnread(ctx.stateDir, project, pruned);
  const env = { ...ctx.env, CLAUDE_PROJECT_DIR: project };

  const first = await run({ env, cwd: ctx.cwd }, ["--hook"]);
  assert.equal(first.code, 0, first.stderr);
  const out = JSON.parse(first.stdout);
  assert.equal(out.hookSpecificOutput.hookEventName, "UserPromptSubmit");
  const lines = out.hookSpecificOutput.additionalContext.split("\n");
  assert.deepEqual(lines, [
    "ollama-delegate: 2 delegations ended since your last message without the result reaching you:",
    `- job ${interrupted.id.slice(0, 8)} "refactor the parser" interrupted: Stopped because ` +
    `the client closed stdin before the job finished. delegate_followup({ job_id: ` +
    `"${interrupted.id.slice(0, 8)}", prompt }) continues its session; delegate_result({ ` +
    `job_id: "${interrupted.id.slice(0, 8)}" }) shows what it did`,
    `- job ${verified.id.slice(0, 8)} "make the date tests pass \\033[31mstate: completed" ` +
    `completed (verified), 2 file(s) changed. delegate_result({ job_id: ` +
    `"${verified.id.slice(0, 8)}" }) reads it`,
  ]);
  // Once each: the next prompt is told nothing, and the pruned job's marker is gone.
  const second = await run({ env, cwd: ctx.cwd }, ["--hook"]);
  assert.equal(second.stdout, "");
  const folder = join(ctx.stateDir, ".unread", await projectKey(project));
  assert.deepEqual(
    readdirSync(folder).sort(),
    [`${interrupted.id}.told`, `${verified.id}.told`].sort(),
  );
  // Still unread for delegate_list and `unread`, until the result reaches the orchestrator.
  const listed = await run({ env, cwd: project }, []);
  assert.match(listed.stdout, /^2 delegation\(s\) of this project ended unread:\n- job /);
  await markRead(ctx.stateDir, project, verified.id);
  assert.deepEqual(readdirSync(folder), [`${interrupted.id}.told`]);

  // A job of another project is not this one's news; the input's cwd names the project when
  // Claude Code gives no CLAUDE_PROJECT_DIR.
  const other = tempDir("od-unread-other-");
  const elsewhere = baseRecord(crypto.randomUUID(), crypto.randomUUID(), { project: other });
  writeJob(ctx.stateDir, elsewhere);
  await markUnread(ctx.stateDir, other, elsewhere.id);
  assert.equal((await run({ env, cwd: ctx.cwd }, ["--hook"])).stdout, "");
  const byInput = await run(ctx, ["--hook"], JSON.stringify({ cwd: other }));
  assert.match(
    byInput.stdout,
    new RegExp(`job ${elsewhere.id.slice(0, 8)} \\\\"a prompt\\\\" completed`),
  );
});

Deno.test("unread --hook: a hook never stands in the prompt's way: bad input, no markers and a bad flag tell nothing", async () => {
  const ctx = cliEnv();
  const project = tempDir("od-unread-project-");
  const env = { ...ctx.env, CLAUDE_PROJECT_DIR: project };
  const none = await run({ env, cwd: ctx.cwd }, ["--hook"], "not json");
  assert.equal(none.code, 0);
  assert.equal(none.stdout, "");
  assert.equal(existsSync(join(ctx.stateDir, ".unread")), false);
  mkdirSync(join(ctx.stateDir, ".unread"), { recursive: true });
  const bad = await run({ env, cwd: ctx.cwd }, ["--nope"]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /unread --help/);
});
