/** Every bad input gets a clear error, touches nothing outside the state dir, loses nothing. */
import assert from "node:assert/strict";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { field, tempDir } from "../support/harness.ts";
import { startInProcessScene } from "../support/in_process_scene.ts";

Deno.test("bad tool input is refused with a clear error", async (t) => {
  const home = tempDir("od-home-");
  const stateDir = join(home, "state");
  // A job folder outside the state dir that a path-like id would reach.
  const outside = join(home, "evil");
  mkdirSync(outside, { recursive: true });
  writeFileSync(join(outside, "job.json"), "{}");
  await using scene = await startInProcessScene({
    emulator: {
      models: [
        { name: "qwen3:8b" },
        { name: "gemma2:2b", capabilities: ["completion"] },
        { name: "blocked:7b" },
      ],
    },
    home,
    stateDir,
    userConfig: { allowedModels: ["qwen3:8b", "gemma2:2b", "ghost:1b"] },
  });
  const work = tempDir("od-work-");
  const file = join(work, "a-file.txt");
  writeFileSync(file, "not a directory");
  const expectError = async (tool: string, args: Record<string, unknown>, pattern: RegExp) => {
    const reply = await scene.call(tool, args);
    assert.equal(reply.isError, true, `${tool} ${JSON.stringify(args)} should fail`);
    assert.match(reply.text, pattern);
    return reply;
  };
  await t.step("prompt", async () => {
    await expectError("delegate_start", { prompt: "   \n" }, /empty prompt/);
    await expectError("delegate_start", {}, /pass prompt or prompt_file/);
    await expectError(
      "delegate_start",
      { prompt: "x", prompt_file: file },
      /both prompt and prompt_file/,
    );
    await expectError(
      "delegate_start",
      { prompt_file: join(work, "missing.md") },
      /Cannot read prompt_file ".*missing\.md"/,
    );
    await expectError("delegate_start", { prompt_file: work }, /it is not a regular file/);
  });
  await t.step("cwd and add_dirs", async () => {
    await expectError(
      "delegate_start",
      { prompt: "x", cwd: file },
      /Cannot use cwd ".*a-file\.txt": it is not a directory/,
    );
    await expectError(
      "delegate_start",
      { prompt: "x", cwd: join(work, "nope") },
      /it does not exist/,
    );
    await expectError(
      "delegate_start",
      { prompt: "x", cwd: work, add_dirs: [file] },
      /add_dirs entry/,
    );
  });
  await t.step("models", async () => {
    await expectError(
      "delegate_start",
      { prompt: "x", cwd: work, model: "blocked:7b" },
      /model "blocked:7b" is not in the allowed list \(qwen3:8b, gemma2:2b, ghost:1b\)/,
    );
    await expectError(
      "delegate_start",
      { prompt: "x", cwd: work, model: "ghost:1b" },
      /has no model "ghost:1b"\. Available: qwen3:8b, gemma2:2b, blocked:7b\. Pull it/,
    );
    await expectError(
      "delegate_start",
      { prompt: "x", cwd: work, model: "gemma2:2b" },
      /does not support tools/,
    );
  });
  await t.step("numbers out of range", async () => {
    await expectError(
      "delegate_start",
      { prompt: "x", wait_seconds: 601 },
      /wait_seconds must be at most 600/,
    );
    await expectError(
      "delegate_start",
      { prompt: "x", wait_seconds: -1 },
      /wait_seconds must be 0 or more/,
    );
    await expectError(
      "delegate_start",
      { prompt: "x", max_turns: 0 },
      /max_turns must be at least 1/,
    );
    await expectError(
      "delegate_start",
      { prompt: "x", max_turns: 2.5 },
      /max_turns must be a whole number/,
    );
    await expectError(
      "delegate_status",
      { job_id: crypto.randomUUID(), progress_limit: 101 },
      /progress_limit must be at most 100/,
    );
    await expectError("delegate_list", { limit: 0 }, /limit must be at least 1/);
    await expectError("delegate_start", {
      prompt: "x",
      allowed_tools: ["--dangerously-skip-permissions"],
    }, /tool rule/);
  });
  await t.step("unknown and path-like ids never reach the filesystem", async () => {
    const unknown = crypto.randomUUID();
    for (const tool of ["delegate_status", "delegate_result", "delegate_cancel"]) {
      await expectError(tool, { job_id: unknown }, new RegExp(`Unknown job id "${unknown}"`));
      for (const bad of ["../evil", "..", "../../etc/passwd", outside, "", "a/../../evil"]) {
        await expectError(tool, { job_id: bad }, /Unknown job id/);
      }
    }
    await expectError("delegate_followup", { job_id: "../evil", prompt: "x" }, /Unknown job id/);
    await expectError(
      "delegate_followup",
      { session_id: "../evil", prompt: "x" },
      /Unknown session id/,
    );
    await expectError(
      "delegate_followup",
      { prompt: "x" },
      /exactly one of job_id and session_id/,
    );
    assert.equal(readFileSync(join(outside, "job.json"), "utf8"), "{}");
    assert.deepEqual(readdirSync(dirname(outside)).sort(), [
      ".ollama-mcp",
      "evil",
      "project",
      "state",
    ]);
  });
  await t.step("a corrupt job record is reported and skipped", async () => {
    const good = await scene.call("delegate_start", {
      prompt: "hello",
      cwd: work,
      model: "qwen3:8b",
      wait_seconds: 60,
    });
    assert.equal(field(good.text, "state"), "completed", good.text);
    const broken = crypto.randomUUID();
    mkdirSync(join(stateDir, broken));
    writeFileSync(join(stateDir, broken, "job.json"), "{ not json");
    await expectError(
      "delegate_status",
      { job_id: broken },
      /Cannot read job .*job\.json is not valid JSON/,
    );
    const list = await scene.call("delegate_list", {});
    assert.equal(list.isError, false);
    assert.ok(list.text.includes(field(good.text, "job_id")!), "the good job is still listed");
    assert.match(
      list.text,
      new RegExp(
        `Unreadable job records \\(skipped\\):\\n  ${broken}: job\\.json is not valid JSON`,
      ),
    );
    assert.equal(
      readFileSync(join(stateDir, broken, "job.json"), "utf8"),
      "{ not json",
      "left as found",
    );
  });
});

Deno.test("a corrupt config file and invalid variables are reported, never fatal", async () => {
  const home = tempDir("od-home-");
  mkdirSync(join(home, ".ollama-mcp"), { recursive: true });
  writeFileSync(join(home, ".ollama-mcp", "config.json"), '{ "allowedModels": [');
  await using scene = await startInProcessScene({
    home,
    env: { OLLAMA_MCP_JOB_TIMEOUT_MS: "0", OLLAMA_MCP_DELEGATION_MODE: "sometimes" },
  });
  const models = await scene.call("ollama_models");
  assert.equal(models.isError, false, models.text);
  assert.match(
    models.text,
    /Invalid setting .*config\.json \(user layer\): file ignored: not valid JSON/,
  );
  assert.match(
    models.text,
    /Invalid setting jobTimeoutMs in OLLAMA_MCP_JOB_TIMEOUT_MS \(env layer\): 0 .*must be at least 1000; using 1800000 from default/,
  );
  assert.match(
    models.text,
    /Invalid setting delegationMode in OLLAMA_MCP_DELEGATION_MODE \(env layer\): "sometimes" is not one of off, ondemand, auto; using "ondemand" from default/,
  );
  assert.match(models.text, /qwen3:8b +\[local\]/);
  assert.match(scene.stderr(), /Invalid setting jobTimeoutMs in OLLAMA_MCP_JOB_TIMEOUT_MS/);
  const tools = await scene.client.listTools();
  assert.ok(
    tools.tools.some((t: { name: string }) => t.name === "delegate_start"),
    "ondemand is in force",
  );
});

Deno.test("unreachable Ollama gives one clear error naming the URL", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  await using scene = await startInProcessScene({ emulator: false, baseUrl: `127.0.0.1:${port}` });
  const reply = await scene.call("delegate_start", { prompt: "x" });
  assert.equal(reply.isError, true);
  assert.match(
    reply.text,
    new RegExp(`^Cannot reach Ollama at http://127\\.0\\.0\\.1:${port} .*ollama serve`),
  );
  const models = await scene.call("ollama_models");
  assert.equal(models.isError, true);
  assert.match(models.text, /Cannot reach Ollama/);
});

Deno.test("mode off hides the delegate tools but keeps ollama_models", async () => {
  await using scene = await startInProcessScene({
    emulator: false,
    env: { OLLAMA_MCP_DELEGATION_MODE: "off" },
  });
  const names = (await scene.client.listTools()).tools.map((t: { name: string }) => t.name);
  assert.deepEqual(names, ["ollama_models"]);
});
