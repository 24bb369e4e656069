/** The operator tools through the real server: usage and cost, transcript paging, list. */
import assert from "node:assert/strict";
import { field, tempDir } from "../support/harness.ts";
import { startInProcessScene } from "../support/in_process_scene.ts";

Deno.test("delegate_usage, delegate_list and delegate_transcript on native and claude jobs", async () => {
  await using scene = await startInProcessScene({
    userConfig: { pricing: { "qwen3:8b": { inputPerMillion: 1000, outputPerMillion: 2000 } } },
  });
  const work = tempDir("od-ops-");
  const priced = await scene.call("delegate_start", {
    engine: "native",
    model: "qwen3:8b",
    prompt: "@bash echo transcript-marker\nprobe",
    cwd: work,
    wait_seconds: 60,
  });
  assert.equal(field(priced.text, "state"), "completed", priced.text);
  const unpriced = await scene.call("delegate_start", {
    model: "gpt-oss:120b-cloud",
    prompt: "@reply hi\nsay hi",
    cwd: work,
    wait_seconds: 90,
  });
  assert.equal(field(unpriced.text, "state"), "completed", unpriced.text);

  const usage = await scene.call("delegate_usage", {});
  assert.equal(usage.isError, false, usage.text);
  assert.match(usage.text, /qwen3:8b.*\$\d+\.\d+/);
  assert.match(usage.text, /gpt-oss:120b-cloud.*unknown/);
  assert.doesNotMatch(usage.text, /gpt-oss:120b-cloud.*\$0\.0000/);

  const list = await scene.call("delegate_list", {});
  assert.match(list.text, /cost \$\d/);
  assert.match(list.text, /cost unknown/);

  const id = field(priced.text, "job_id")!;
  const page = await scene.call("delegate_transcript", { job_id: id, limit: 2 });
  assert.equal(page.isError, false, page.text);
  assert.match(page.text, /\[0\] tool_call Bash/);
  assert.match(page.text, /\[1\] tool_result Bash/);
  assert.match(page.text, /transcript-marker/);
  assert.match(page.text, /next: delegate_transcript\(\{ job_id: "[^"]+", offset: 2 \}\)/);
  const rest = await scene.call("delegate_transcript", { job_id: id, offset: 2 });
  assert.match(rest.text, /end of transcript/);

  const claudeId = field(unpriced.text, "job_id")!;
  const claudePage = await scene.call("delegate_transcript", { job_id: claudeId });
  assert.match(claudePage.text, /text/);
  assert.match(claudePage.text, /hi/);

  const bad = await scene.call("delegate_transcript", { job_id: "../../etc/passwd" });
  assert.equal(bad.isError, true);
  assert.match(bad.text, /Unknown job id/);
});
