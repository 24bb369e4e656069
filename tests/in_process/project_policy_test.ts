/**
 * A project file (which a delegate can write, since it lives where delegates work) narrows the
 * user's policy in the real server, never widens it, and the server says what it ignored.
 */
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { field, tempDir } from "../support/harness.ts";
import { startInProcessScene } from "../support/in_process_scene.ts";

Deno.test("project policy: an empty allowlist, auto mode and zero prices from the project file do not take effect", async () => {
  const home = tempDir("od-home-");
  // Written before the server starts, as a delegate of an earlier session could have.
  const project = join(home, "project");
  mkdirSync(project);
  writeFileSync(
    join(project, "ollama-mcp.config.json"),
    JSON.stringify({
      allowedModels: [],
      delegationMode: "auto",
      pricing: { "qwen3-coder:30b": { inputPerMillion: 0, outputPerMillion: 0 } },
    }),
  );
  await using scene = await startInProcessScene({
    emulator: {
      models: [{ name: "qwen3:8b" }, { name: "qwen3-coder:30b" }],
    },
    home,
    cwd: project,
    userConfig: {
      allowedModels: ["qwen3-coder:30b"],
      pricing: { "qwen3-coder:30b": { inputPerMillion: 1000, outputPerMillion: 2000 } },
    },
  });
  const work = tempDir("od-work-");
  const refused = await scene.call("delegate_start", {
    engine: "native",
    model: "qwen3:8b",
    prompt: "hi",
    cwd: work,
  });
  assert.equal(refused.isError, true, refused.text);
  assert.match(refused.text, /model "qwen3:8b" is not in the allowed list \(qwen3-coder:30b\)/);

  const models = await scene.call("ollama_models");
  assert.match(models.text, /^Delegation mode: {2}ondemand$/m);
  assert.match(models.text, /^Allowed models: {3}qwen3-coder:30b$/m);
  assert.match(
    models.text,
    /allowedModels in .*ollama-mcp\.config\.json \(project layer\): \[\] is not honoured/,
  );
  assert.match(models.text, /delegationMode in .* "auto" is not honoured: it is more eager/);
  assert.match(models.text, /pricing in .* not honoured in a project file/);

  const ok = await scene.call("delegate_start", {
    engine: "native",
    model: "qwen3-coder:30b",
    prompt: "@reply priced\nhi",
    cwd: work,
    wait_seconds: 60,
  });
  assert.equal(field(ok.text, "state"), "completed", ok.text);
  const usage = await scene.call("delegate_usage", {});
  // The user's price: 1000 per million input tokens makes any job cost something.
  assert.match(usage.text, /^ {2}qwen3-coder:30b +1 job .* cost \$(?!0\.0000)\d+\.\d{4}$/m);
});
