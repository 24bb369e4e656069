/** Follow-ups: history, inherited restrictions, one turn per session (others wait). */
import assert from "node:assert/strict";
import { field, tempDir } from "../support/harness.ts";
import { startInProcessScene } from "../support/in_process_scene.ts";

interface Body {
  system?: unknown;
  tools?: Array<{ name: string }>;
  messages: Array<{ role: string; content: unknown }>;
}

const textOf = (value: unknown): string => JSON.stringify(value);

Deno.test("a follow-up resumes the session with its history and its restrictions", async () => {
  await using scene = await startInProcessScene({
    emulator: {
      script: (req) =>
        req.lastUserText.includes("second question")
          ? { kind: "text", text: "second answer" }
          : { kind: "text", text: "first answer" },
    },
  });
  const work = tempDir("od-work-");
  const first = await scene.call("delegate_start", {
    prompt: "first question about the repo",
    model: "qwen3:8b",
    cwd: work,
    disallowed_tools: ["Write", "Edit"],
    append_system_prompt: "MARKER-APPENDED-INSTRUCTIONS",
    max_turns: 7,
    wait_seconds: 90,
  });
  assert.equal(field(first.text, "state"), "completed", first.text);
  const firstTurnRequests = scene.emulator.messageRequests().length;
  const firstBody = scene.emulator.messageRequests()[0]!.json as Body;
  const names = (b: Body) => (b.tools ?? []).map((t) => t.name);
  assert.ok(!names(firstBody).includes("Write"));
  assert.ok(names(firstBody).includes("Bash"), "the tool list is real");
  const id = field(first.text, "job_id")!;
  const session = field(first.text, "session_id")!.split(" ")[0]!;

  const second = await scene.call("delegate_followup", {
    job_id: id,
    prompt: "second question",
    wait_seconds: 90,
  });
  assert.equal(second.isError, false, second.text);
  assert.equal(field(second.text, "state"), "completed");
  assert.equal(field(second.text, "session_id"), `${session}   (turn 2)`);
  assert.match(second.text, /--- output ---\nsecond answer/);
  const body = scene.emulator.messageRequests()[firstTurnRequests]!.json as Body;
  const history = textOf(body.messages);
  assert.ok(history.includes("first question about the repo"), "turn 1's prompt is in history");
  assert.ok(history.includes("first answer"), "turn 1's answer is in history");
  assert.ok(textOf(body.system).includes("MARKER-APPENDED-INSTRUCTIONS"), "system prompt kept");
  assert.ok(!names(body).includes("Write") && !names(body).includes("Edit"), "still read-only");
  assert.ok(names(body).includes("Bash"));

  // A follow-up through the older job id continues from the newest turn.
  const third = await scene.call("delegate_followup", {
    session_id: session,
    prompt: "second question again",
    disallowed_tools: ["Bash"],
    wait_seconds: 90,
  });
  assert.equal(field(third.text, "session_id"), `${session}   (turn 3)`);
  const thirdBody = scene.emulator.messageRequests().at(-1)!.json as Body;
  assert.ok(!names(thirdBody).includes("Bash"), "an override replaces the inherited list");
  const fourth = await scene.call("delegate_followup", {
    job_id: id,
    prompt: "second question once more",
    wait_seconds: 90,
  });
  assert.equal(field(fourth.text, "session_id"), `${session}   (turn 4)`);

  const list = await scene.call("delegate_list", {});
  const block = list.text.slice(list.text.indexOf(`session ${session}`));
  assert.match(block, /turn 1 [\s\S]*turn 2 [\s\S]*turn 3 [\s\S]*turn 4 /);
});

Deno.test("a follow-up while a turn of the session runs waits for it, then continues it", async () => {
  await using scene = await startInProcessScene({
    emulator: {
      script: (req) =>
        req.lastUserText.includes("too early")
          ? { kind: "text", text: "after the slow one" }
          : undefined,
    },
  });
  const work = tempDir("od-work-");
  const started = await scene.call("delegate_start", {
    prompt: "@delay 4000\nslow task",
    model: "qwen3:8b",
    cwd: work,
  });
  assert.equal(field(started.text, "state"), "running", started.text);
  const id = field(started.text, "job_id")!;
  const session = field(started.text, "session_id")!.split(" ")[0]!;
  const queued = await scene.call("delegate_followup", {
    session_id: session,
    prompt: "too early",
  });
  assert.equal(queued.isError, false, queued.text);
  assert.equal(field(queued.text, "state"), "queued", queued.text);
  assert.equal(field(queued.text, "session_id"), `${session}   (turn 2)`);
  // The reply says what the job waits for once it knows (within about a second); on a loaded
  // machine it may not yet, and its status says so while it waits.
  const waitLine = new RegExp(`Waiting for turn 1 of this session \\(job ${id}\\) to end`);
  let shown = queued.text;
  for (let i = 0; i < 100 && !waitLine.test(shown); i++) {
    const status = await scene.call("delegate_status", { job_id: field(queued.text, "job_id")! });
    shown = status.text;
    if (field(status.text, "state") !== "queued") break;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.match(shown, waitLine);
  const done = await scene.call("delegate_result", {
    job_id: field(queued.text, "job_id")!,
    wait_seconds: 90,
  });
  assert.equal(field(done.text, "state"), "completed", done.text);
  assert.match(done.text, /--- output ---\nafter the slow one/);
  const first = await scene.call("delegate_result", { job_id: id });
  assert.equal(field(first.text, "state"), "completed", first.text);
  // Turn 2 resumed turn 1's conversation, which had ended by then.
  const body = scene.emulator.messageRequests().at(-1)!.bodyText;
  assert.ok(body.includes("slow task"), "turn 1 is in turn 2's history");
});
