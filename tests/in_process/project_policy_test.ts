/**
 * A project file (which a delegate can write, since it lives where delegates work) narrows the
 * user's policy in the real server, never widens it, and the server says what it ignored.
 */
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { field, tempDir } from "../support/harness.ts";
import { startInProcessScene } from "../support/in_process_scene.ts";

const LOCAL = "qwen3:8b";
const CLOUD = "gpt-oss:120b-cloud";

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

Deno.test("project policy: a cloned project's cloud defaultModel, agent model and fallback leave the user's local model in charge", async () => {
  // Issue 28, item 7. The user works on a local model and allows one cloud model for the calls
  // that name it; a cloned repository names that cloud model everywhere it can.
  const home = tempDir("od-home-");
  const project = join(home, "project");
  mkdirSync(join(project, ".ollama-delegate", "agents"), { recursive: true });
  writeFileSync(
    join(project, "ollama-mcp.config.json"),
    JSON.stringify({ defaultModel: CLOUD }),
  );
  const agent = (name: string, front: string) =>
    writeFileSync(
      join(project, ".ollama-delegate", "agents", `${name}.md`),
      `---\nengine: native\n${front}\n---\nHelp.\n`,
    );
  agent("cloudy", `model: ${CLOUD}`);
  agent("steady", `fallback: [${CLOUD}]`);
  await using scene = await startInProcessScene({
    home,
    cwd: project,
    userConfig: { defaultModel: LOCAL, allowedModels: [LOCAL, CLOUD] },
  });
  const work = tempDir("od-work-");
  const models = () =>
    scene.emulator.nativeChatRequests().map((r) => (r.json as { model: string }).model);
  const start = (args: Record<string, unknown>) =>
    scene.call("delegate_start", { engine: "native", cwd: work, wait_seconds: 60, ...args });

  const plain = await start({ prompt: "@reply done\nsummarise my private notes" });
  assert.equal(field(plain.text, "state"), "completed", plain.text);
  assert.equal(field(plain.text, "model"), LOCAL);
  assert.match(
    plain.text,
    /^warning: +the project file .*ollama-mcp\.config\.json sets defaultModel "gpt-oss:120b-cloud" is not honoured: it runs on Ollama's cloud, and without the project the work runs on a local model; .*this job runs on "qwen3:8b"$/m,
  );

  const cloudy = await start({ agent: "cloudy", prompt: "@reply done\nsummarise" });
  assert.equal(field(cloudy.text, "state"), "completed", cloudy.text);
  assert.equal(field(cloudy.text, "model"), LOCAL);
  assert.match(
    cloudy.text,
    /^warning: +project agent "cloudy" \(.*cloudy\.md\): its model "gpt-oss:120b-cloud" is not used \(it runs on Ollama's cloud, .*\)/m,
  );

  // The local model fails; a project agent's cloud fallback does not take the work over.
  const steady = await start({ agent: "steady", prompt: "@fail 503 99\nsummarise" });
  assert.equal(field(steady.text, "state"), "failed", steady.text);
  assert.equal(field(steady.text, "fallback"), undefined, steady.text);
  assert.match(
    steady.text,
    /^warning: +project agent "steady" .*its fallback model "gpt-oss:120b-cloud" \(it runs on Ollama's cloud/m,
  );

  assert.ok(models().length >= 3, String(models()));
  assert.deepEqual([...new Set(models())], [LOCAL], "no request named the cloud model");

  // ollama_models says who tried to change the model.
  const report = (await scene.call("ollama_models")).text;
  assert.match(
    report,
    /^Default model: +qwen3:8b {2}\(! the project file's defaultModel "gpt-oss:120b-cloud" is not honoured: it runs on Ollama's cloud/m,
  );
  assert.match(
    report,
    /cloudy +\[project\][^\n]*\n +! project agent "cloudy" .*its model "gpt-oss:120b-cloud" is not used/,
  );
  assert.match(
    report,
    /steady +\[project\][^\n]*\n +! project agent "steady" .*its fallback model "gpt-oss:120b-cloud"/,
  );

  // The orchestrator's own choice within allowedModels still goes to the cloud.
  const asked = await start({ model: CLOUD, prompt: "@reply done\nx" });
  assert.equal(field(asked.text, "state"), "completed", asked.text);
  assert.equal(models().at(-1), CLOUD);
});
