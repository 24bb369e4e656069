/**
 * What small local models need from the native loop, end to end with the real server, the
 * Ollama emulator and real bubblewrap: a countdown and a last turn without tools at max_turns,
 * the text so far kept (marked partial) when a job stops without an answer, failures hidden in
 * a command line reported as masked, Edit refusing a file that changed since it was read, and
 * failure texts that start with a status word.
 */
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type ChatScript } from "../support/emulator/emulator.ts";
import { field, tempDir } from "../support/harness.ts";
import { startInProcessScene } from "../support/in_process_scene.ts";

const native = { engine: "native", model: "qwen3:8b", wait_seconds: 90 };
type Json = Record<string, unknown>;

function transcriptOf(stateDir: string, id: string): Json[] {
  return readFileSync(join(stateDir, id, "transcript.jsonl"), "utf8").trim().split("\n")
    .map((l) => JSON.parse(l));
}

Deno.test("aids: at max_turns the last request has no tools, and its answer completes the job with a warning", async () => {
  const script: ChatScript = (view) =>
    view.tools.length === 0
      ? { kind: "text", text: `Final answer: wrote ${view.toolResults.length} steps.` }
      : {
        kind: "tool_calls",
        calls: [{ name: "Bash", arguments: { command: `echo step >> steps.txt` } }],
      };
  await using scene = await startInProcessScene({ emulator: { chatScript: script } });
  const work = tempDir("od-aids-");
  const reply = await scene.call("delegate_start", {
    ...native,
    max_turns: 3,
    prompt: "write steps",
    cwd: work,
  });
  assert.equal(field(reply.text, "state"), "completed", reply.text);
  assert.equal(readFileSync(join(work, "steps.txt"), "utf8"), "step\nstep\n");
  assert.equal(field(reply.text, "tool calls"), "2");
  assert.equal(
    field(reply.text, "warning"),
    "max_turns (3) reached: the model wrote this answer in a last turn without tools, so its " +
      "work may be unfinished. Follow up to let it continue",
  );
  assert.match(reply.text, /--- output ---\nFinal answer: wrote 2 steps\./);
  const bodies = scene.emulator.nativeChatRequests().map((r) => r.json as Json);
  assert.deepEqual(bodies.map((b) => Array.isArray(b.tools)), [true, true, false]);
  const sent = bodies[2]!.messages as Json[];
  assert.match(
    sent.at(-1)!.content as string,
    /\n\n\[1 turn remains: tools are withdrawn\. Write your final answer now/,
  );
  const second = bodies[1]!.messages as Json[];
  assert.match(second.at(-1)!.content as string, /\n\n\[2 turns remain\]$/);
});

Deno.test("aids: a job stopped at max_turns without an answer fails and keeps what the model wrote, marked partial", async () => {
  const stubborn: ChatScript = (view) => ({
    kind: "tool_calls",
    text: `Checked part ${view.conversationRequestNumber}.`,
    calls: [{ name: "Bash", arguments: { command: `echo ${view.conversationRequestNumber}` } }],
  });
  await using scene = await startInProcessScene({ emulator: { chatScript: stubborn } });
  const reply = await scene.call("delegate_start", {
    ...native,
    max_turns: 3,
    prompt: "check the parts",
    cwd: tempDir("od-aids-"),
  });
  assert.equal(reply.isError, true);
  assert.equal(field(reply.text, "state"), "failed", reply.text);
  assert.match(field(reply.text, "error")!, /^Stopped after max_turns \(3\) model requests/);
  assert.ok(
    reply.text.includes(
      "--- partial output ---\n[partial: stopped at max_turns 3]\n\nChecked part 1.\n\n" +
        "Checked part 2.\n\nChecked part 3.",
    ),
    reply.text,
  );
  assert.equal(field(reply.text, "commands"), "2 run: echo 1 (exit 0), echo 2 (exit 0)");
});

Deno.test("aids: a job that reaches its deadline keeps the text so far, marked partial", async () => {
  // Generous: the first reply and its command must be in before the deadline on a loaded machine.
  await using scene = await startInProcessScene({
    emulator: {
      chatScript: (view) =>
        view.conversationRequestNumber === 1
          ? {
            kind: "tool_calls",
            text: "The bug is in parse(): it drops the last line.",
            calls: [{ name: "Bash", arguments: { command: "true" } }],
          }
          : { kind: "hang" },
    },
    env: { OLLAMA_MCP_JOB_TIMEOUT_MS: "15000" },
  });
  const start = await scene.call("delegate_start", {
    ...native,
    wait_seconds: 0,
    prompt: "find the bug",
    cwd: tempDir("od-aids-"),
  });
  const id = field(start.text, "job_id")!;
  const reply = await scene.call("delegate_result", { job_id: id, wait_seconds: 60 });
  assert.equal(field(reply.text, "state"), "failed", reply.text);
  assert.equal(field(reply.text, "error"), "Timed out after 15s");
  assert.ok(
    reply.text.includes(
      "--- partial output ---\n[partial: stopped before the model's final answer: the job " +
        "was cancelled or timed out]\n\nThe bug is in parse(): it drops the last line.",
    ),
    reply.text,
  );
});

Deno.test("aids: failures hidden by a later command or a pipe are reported as masked beside the exit codes", async () => {
  await using scene = await startInProcessScene();
  const work = tempDir("od-aids-");
  const reply = await scene.call("delegate_start", {
    ...native,
    prompt: "@bash sh -c 'echo 2 tests failed; exit 1' | tee test.log; echo done\n" +
      "@bash exit 3\n@reply all green\nrun the tests",
    cwd: work,
  });
  assert.equal(field(reply.text, "state"), "completed", reply.text);
  assert.equal(
    field(reply.text, "commands"),
    "2 run, 1 failed, 1 masked failure: sh -c 'echo 2 tests failed; exit 1' | tee test.log; " +
      "echo do… (exit 0; masked exit 1: sh -c 'echo 2 tests failed; exit 1'), exit 3 (exit 3)",
  );
  assert.equal(readFileSync(join(work, "test.log"), "utf8"), "2 tests failed\n");
  const id = field(reply.text, "job_id")!;
  const record = JSON.parse(readFileSync(join(scene.stateDir, id, "job.json"), "utf8"));
  assert.equal(record.commands[0].exitCode, 0);
  assert.deepEqual(record.commands[0].masked, [
    { command: "sh -c 'echo 2 tests failed; exit 1'", exitCode: 1 },
  ]);
  // The model was told too.
  const result = transcriptOf(scene.stateDir, id).find((e) => e.kind === "tool_result")!;
  assert.match(
    result.text as string,
    /\[masked failures: exit 1: sh -c 'echo 2 tests failed; exit 1' \(these failed, but a later command set the exit code\)\]$/,
  );
});

Deno.test("aids: Edit refuses a file that changed on disk after the model read it", async () => {
  await using scene = await startInProcessScene();
  const work = tempDir("od-aids-");
  writeFileSync(join(work, "conf.ini"), "port=80\n");
  const reply = await scene.call("delegate_start", {
    ...native,
    prompt: '@tool Read {"file_path":"conf.ini"}\n' +
      "@bash sleep 0.05; echo port=8080 > conf.ini\n" +
      '@tool Edit {"file_path":"conf.ini","old_string":"port=8080","new_string":"port=9090"}\n' +
      "@reply done\nchange the port",
    cwd: work,
  });
  assert.equal(field(reply.text, "state"), "completed", reply.text);
  assert.equal(readFileSync(join(work, "conf.ini"), "utf8"), "port=8080\n");
  const id = field(reply.text, "job_id")!;
  const results = transcriptOf(scene.stateDir, id).filter((e) => e.kind === "tool_result");
  assert.equal(results.length, 3);
  assert.equal(results[2]!.isError, true);
  assert.match(
    results[2]!.text as string,
    /^Refused to edit "conf\.ini": it changed on disk since you last read it \(8 bytes then, 10 now; .*\)\. Read it again, then edit it$/,
  );
});

Deno.test("aids: a backend's failure text starts with a status word", async () => {
  await using scene = await startInProcessScene({
    emulator: {
      models: [{ name: "qwen3:8b" }, { name: "old:cloud", retiredText: "old was retired at X" }],
    },
  });
  const reply = await scene.call("delegate_start", {
    ...native,
    model: "old:cloud",
    prompt: "hi",
    cwd: tempDir("od-aids-"),
  });
  assert.equal(field(reply.text, "state"), "failed");
  assert.match(field(reply.text, "error")!, /^backend_refused: Model "old:cloud" was retired/);
});
