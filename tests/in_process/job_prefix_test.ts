/**
 * Jobs named by a prefix of their id through the real server, as the terminal's `jobs`
 * commands (and the plugin's cancel command) promise: the state dir in its default place
 * (`~/.ollama-mcp/jobs` under the test's HOME), the default engine (the real Claude Code CLI
 * against the emulator), a real MCP client. A unique prefix works for every tool that takes a
 * job id; an ambiguous or unknown one is an error that names the candidates; and the terminal
 * resolves prefixes the same way.
 */
import assert from "node:assert/strict";
import { cliLayout, defaultLayout } from "../support/default_layout.ts";
import { field, tempDir } from "../support/harness.ts";
import { startInProcessScene } from "../support/in_process_scene.ts";
import { baseRecord, runCli, writeJob } from "../cli/jobs_support.ts";

/** Two planted jobs whose ids share their first 8 characters, as a long history can hold. */
const TWIN_A = "abcdef01-0a00-4000-8000-000000000001";
const TWIN_B = "abcdef01-0b00-4000-8000-000000000002";

Deno.test("job ids by prefix: 8 characters work in status, result, transcript, followup and cancel; ambiguous and unknown ones name the candidates", async () => {
  const layout = defaultLayout("od-prefix-home-");
  await using scene = await startInProcessScene({
    ...layout,
    // Directives are read from a conversation's first message; the follow-up is answered here.
    emulator: {
      script: (req) =>
        req.lastUserText.includes("SECOND-TURN")
          ? { kind: "text", text: "second answer" }
          : undefined,
    },
  });
  const work = tempDir("od-prefix-work-");
  const first = await scene.call("delegate_start", {
    prompt: "@reply first answer\nanswer",
    cwd: work,
    wait_seconds: 90,
  });
  assert.equal(field(first.text, "state"), "completed", first.text);
  const id = field(first.text, "job_id")!;
  const session = field(first.text, "session_id")!.split(" ")[0]!;
  const prefix = id.slice(0, 8);
  // The server wrote the job where the default layout puts it.
  assert.equal(
    (await runCli(cliLayout(layout), ["jobs", "show", id, "--json"])).code,
    0,
    "the terminal finds the job in ~/.ollama-mcp/jobs",
  );

  const status = await scene.call("delegate_status", { job_id: prefix });
  assert.equal(status.isError, false, status.text);
  assert.equal(field(status.text, "job_id"), id);
  assert.match(status.text, new RegExp(`delegate_result\\(\\{ job_id: "${id}" \\}\\)`));

  const result = await scene.call("delegate_result", { job_id: prefix.toUpperCase() });
  assert.equal(result.isError, false, result.text);
  assert.equal(field(result.text, "job_id"), id);
  assert.match(result.text, /--- output ---\nfirst answer/);

  const page = await scene.call("delegate_transcript", { job_id: prefix });
  assert.equal(page.isError, false, page.text);
  assert.match(page.text, new RegExp(`first answer`));

  const many = await scene.call("delegate_status", { job_ids: [prefix, id] });
  assert.equal(many.isError, false, many.text);
  assert.equal(many.text.split("\n\n")[0], `1 of 1 finished: ${id}`, "one job, one block");

  const second = await scene.call("delegate_followup", {
    job_id: prefix,
    prompt: "SECOND-TURN: again",
    wait_seconds: 90,
  });
  assert.equal(second.isError, false, second.text);
  assert.equal(field(second.text, "session_id"), `${session}   (turn 2)`);
  assert.match(second.text, /--- output ---\nsecond answer/);

  const running = await scene.call("delegate_start", {
    prompt: `@hang\nkeep running ${crypto.randomUUID()}`,
    cwd: work,
    wait_seconds: 0,
  });
  const runningId = field(running.text, "job_id")!;
  const cancelled = await scene.call("delegate_cancel", { job_id: runningId.slice(0, 8) });
  assert.equal(cancelled.isError, false, cancelled.text);
  assert.match(cancelled.text, new RegExp(`^Cancelled job ${runningId} and every process`));
  assert.equal(field(cancelled.text, "state"), "cancelled");

  // Two jobs share a prefix: every tool refuses it and names both, newest first.
  writeJob(scene.stateDir, baseRecord(TWIN_A, crypto.randomUUID(), { model: "qwen3:8b" }));
  writeJob(
    scene.stateDir,
    baseRecord(TWIN_B, crypto.randomUUID(), {
      model: "glm-5:cloud",
      createdAt: Date.UTC(2024, 2, 11, 9, 30),
    }),
  );
  const calls: Array<[string, Record<string, unknown>]> = [
    ["delegate_status", {}],
    ["delegate_result", {}],
    ["delegate_cancel", {}],
    ["delegate_transcript", {}],
    ["delegate_followup", { prompt: "x" }],
  ];
  for (const [tool, args] of calls) {
    const ambiguous = await scene.call(tool, { ...args, job_id: "abcdef01" });
    assert.equal(ambiguous.isError, true, `${tool}: ${ambiguous.text}`);
    assert.equal(
      ambiguous.text,
      'Ambiguous job id "abcdef01": 2 job ids start with it (all 2: ' +
        `${TWIN_B} (completed, glm-5:cloud, created 2024-03-11 09:30 UTC); ` +
        `${TWIN_A} (completed, qwen3:8b, created 2024-03-10 12:00 UTC)). Pass more of the ` +
        "id, or the whole id",
      tool,
    );
    const unknown = await scene.call(tool, { ...args, job_id: "fedcba98" });
    assert.equal(unknown.isError, true, `${tool}: ${unknown.text}`);
    assert.match(
      unknown.text,
      /^Unknown job id "fedcba98": no job id starts with it\. The newest of the 5 jobs: /,
      tool,
    );
    // The newest are the server's own jobs, with their whole ids to pass instead.
    assert.match(unknown.text, new RegExp(`${runningId} \\(cancelled, [^,]+, created `));
    assert.match(unknown.text, /\. Pass one of these ids, or see delegate_list for all$/);
    const short = await scene.call(tool, { ...args, job_id: "abc" });
    assert.equal(short.isError, true);
    assert.match(short.text, /^Unknown job id "abc"\. A prefix of a job id needs at least 4 /);
  }
  // Two more characters tell the twins apart.
  const one = await scene.call("delegate_result", { job_id: "abcdef01-0b" });
  assert.equal(one.isError, false, one.text);
  assert.equal(field(one.text, "job_id"), TWIN_B);

  // The terminal resolves through the same code: the same jobs, the same refusals.
  const cli = cliLayout(layout);
  const show = await runCli(cli, ["jobs", "show", prefix]);
  assert.equal(show.code, 0, show.stderr);
  assert.match(show.stdout, new RegExp(`^job {9}${id}$`, "m"));
  const twins = await runCli(cli, ["jobs", "cancel", "abcdef01"]);
  assert.equal(twins.code, 2);
  assert.equal(
    twins.stderr,
    'ollama-delegate jobs: "abcdef01" matches 2 jobs (' +
      `${TWIN_B} (completed, glm-5:cloud, created 2024-03-11 09:30 UTC); ` +
      `${TWIN_A} (completed, qwen3:8b, created 2024-03-10 12:00 UTC)); give more of the id\n`,
  );
});
