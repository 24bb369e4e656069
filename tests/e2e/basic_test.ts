import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { field, tempDir } from "../support/harness.ts";
import { startScene } from "../support/scene.ts";

Deno.test("a delegate runs a real Bash command through the real Claude Code CLI", async () => {
  await using scene = await startScene();
  const work = tempDir("od-work-");
  const reply = await scene.call("delegate_start", {
    prompt: "@bash echo hello-from-delegate > marker.txt\nplease do it",
    model: "qwen3:8b",
    cwd: work,
    allowed_tools: ["Bash"],
    wait_seconds: 90,
  });
  assert.equal(reply.isError, false, reply.text);
  assert.equal(field(reply.text, "state"), "completed");
  assert.equal(readFileSync(join(work, "marker.txt"), "utf8"), "hello-from-delegate\n");
  assert.match(field(reply.text, "tool calls") ?? "", /^1$/);
  const id = field(reply.text, "job_id")!;
  assert.ok(existsSync(join(scene.stateDir, id, "stream.jsonl")));
});
