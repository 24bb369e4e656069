/**
 * delegate_status with job_ids: waiting for the first of several jobs or for all of them in
 * one call, what the reply says about each, and the calls it refuses.
 */
import assert from "node:assert/strict";
import { field, tempDir } from "../support/harness.ts";
import { startInProcessScene } from "../support/in_process_scene.ts";

const native = { engine: "native", model: "qwen3:8b", wait_seconds: 0 };

Deno.test("status job_ids: wait any returns at the first end, wait all at the last or the deadline", async () => {
  // Progress every 300 ms instead of every 5 s.
  await using scene = await startInProcessScene({ progressMs: 300 });
  const work = tempDir("od-many-");
  const start = async (prompt: string) =>
    field(
      (await scene.call("delegate_start", {
        ...native,
        prompt: `${prompt}\n${crypto.randomUUID()}`,
        cwd: work,
      })).text,
      "job_id",
    )!;
  const hangs = await start("@hang");
  const slow = await start("@delay 3000\n@reply three");
  const quick = await start("@reply one");
  await scene.call("delegate_result", { job_id: quick, wait_seconds: 60 });

  let began = Date.now();
  const any = await scene.call("delegate_status", {
    job_ids: [hangs, slow],
    wait_seconds: 60,
  });
  assert.equal(any.isError, false, any.text);
  const blocks = any.text.split("\n\n");
  assert.equal(blocks[0], `1 of 2 finished: ${slow}`);
  assert.equal(field(blocks[1]!, "job_id"), hangs);
  assert.equal(field(blocks[1]!, "state"), "running");
  assert.equal(field(blocks[2]!, "job_id"), slow);
  assert.equal(field(blocks[2]!, "state"), "completed");
  assert.match(
    blocks.at(-1)!,
    new RegExp(
      `delegate_result.*Wait for the rest with delegate_status\\(\\{ job_ids: \\["${hangs}"\\]`,
    ),
  );
  assert.ok(Date.now() - began < 50_000, "any returned once the slow job ended");

  // Already one of them ended: "any" does not wait.
  began = Date.now();
  const again = await scene.call("delegate_status", { job_ids: [hangs, quick], wait_seconds: 60 });
  assert.equal(again.text.split("\n")[0], `1 of 2 finished: ${quick}`);
  assert.ok(Date.now() - began < 10_000);

  began = Date.now();
  const all = await scene.call("delegate_status", {
    job_ids: [quick, hangs, slow],
    wait: "all",
    wait_seconds: 2,
  });
  assert.ok(Date.now() - began >= 1800, "all waited for the running job until the deadline");
  assert.equal(all.text.split("\n")[0], `2 of 3 finished: ${quick}, ${slow}`);

  const none = await scene.call("delegate_status", { job_ids: [hangs], wait_seconds: 1 });
  assert.equal(none.text.split("\n")[0], "waited 1 s: none finished");

  // Progress while waiting, as for one job.
  const messages: string[] = [];
  await scene.call("delegate_status", { job_ids: [hangs, quick], wait: "all", wait_seconds: 2 }, {
    onprogress: (p) => messages.push(p.message ?? ""),
  });
  assert.ok(messages.length >= 2, messages.join(" | "));
  assert.ok(messages.every((m) => /^1 of 2 jobs finished, [0-2]s$/.test(m)), messages.join(" | "));

  await scene.call("delegate_cancel", { job_id: hangs });
});

Deno.test("status job_ids: an unknown id gets its own block; bad combinations are refused", async () => {
  await using scene = await startInProcessScene();
  const done = await scene.call("delegate_start", {
    ...native,
    wait_seconds: 60,
    prompt: `@reply one\n${crypto.randomUUID()}`,
    cwd: tempDir("od-many-"),
  });
  const id = field(done.text, "job_id")!;
  const single = await scene.call("delegate_status", { job_id: id });
  assert.match(single.text, new RegExp(`^job_id:\\s+${id}\\n`));
  assert.match(single.text, /Finished \(completed\)\. Collect the output with delegate_result/);

  const mixed = await scene.call("delegate_status", { job_ids: [id, "nope", id.toUpperCase()] });
  assert.equal(mixed.isError, false, mixed.text);
  const blocks = mixed.text.split("\n\n");
  assert.equal(blocks[0], `1 of 1 finished: ${id} (1 id unknown, below)`);
  assert.equal(blocks.length, 4, "the same id twice is one block");
  assert.equal(field(blocks[2]!, "job_id"), "nope");
  assert.match(field(blocks[2]!, "error")!, /^Unknown job id "nope"\. Job ids are UUIDs/);

  const unknown = await scene.call("delegate_status", { job_ids: ["nope", "../x"] });
  assert.equal(unknown.isError, true);
  assert.match(unknown.text, /^Unknown job id "nope".*\nUnknown job id "\.\.\/x"/);

  const refusals: Array<[Record<string, unknown>, RegExp]> = [
    [{ job_id: id, job_ids: [id] }, /pass exactly one of job_id \(one job\) and job_ids/],
    [{}, /pass exactly one of job_id \(one job\) and job_ids/],
    [{ job_id: id, wait: "all" }, /wait \("all"\) goes with job_ids/],
    [{ job_ids: [] }, /job_ids is empty; list 1 to 20 job ids/],
    [{ job_ids: Array.from({ length: 21 }, () => id) }, /job_ids: at most 20 entries/],
    [{ job_ids: [id], wait: "some" }, /wait/],
  ];
  for (const [args, expected] of refusals) {
    const reply = await scene.call("delegate_status", args);
    assert.equal(reply.isError, true, JSON.stringify(args));
    assert.match(reply.text, expected, JSON.stringify(args));
  }
});
