/**
 * The project file lives where delegates work and can be written by them: it may narrow the
 * user's policy, never widen it. Each refusal is a SettingProblem that `config` shows.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { ConfigUsageError } from "../../src/settings/config_cmd.ts";
import { formatProblems, loadSettings } from "../../src/settings/load.ts";
import { put, readJson, run, withSandbox } from "./helpers.ts";

Deno.test("project allowedModels: an empty list does not turn the user's list into all models", async () => {
  await withSandbox(({ home, cwd, userFile, projectFile }) => {
    put(userFile, { allowedModels: ["qwen3-coder:30b"] });
    put(projectFile, { allowedModels: [] });
    const r = loadSettings({ env: {}, cwd, home });
    assert.deepEqual(r.settings.allowedModels, ["qwen3-coder:30b"]);
    assert.equal(r.sources.allowedModels, "user");
    assert.deepEqual(formatProblems(r.problems), [
      `Invalid setting allowedModels in ${projectFile} (project layer): [] is not honoured: ` +
      "an empty list means every model, wider than the allowed list (qwen3-coder:30b); a " +
      'project file, which delegates can write, may narrow the user value ["qwen3-coder:30b"], ' +
      'never widen it; using ["qwen3-coder:30b"] from user',
    ]);
  });
});

Deno.test("project allowedModels: intersected with the user's list, by canonical name", async () => {
  await withSandbox(({ home, cwd, userFile, projectFile }) => {
    put(userFile, { allowedModels: ["a", "b:7b"] });
    put(projectFile, { allowedModels: ["a:latest", "evil:1b"] });
    let r = loadSettings({ env: {}, cwd, home });
    assert.deepEqual(r.settings.allowedModels, ["a:latest"]);
    assert.equal(r.sources.allowedModels, "project");
    assert.equal(r.problems.length, 1);
    assert.match(r.problems[0]!.reason, /honoured in part: "evil:1b" left out: not in the allowed/);

    put(projectFile, { allowedModels: ["evil:1b"] });
    r = loadSettings({ env: {}, cwd, home });
    assert.deepEqual(r.settings.allowedModels, ["a", "b:7b"], "never empty, never all");
    assert.match(r.problems[0]!.reason, /none of its models is in the allowed list \(a, b:7b\)/);

    // With no user list (all models), a project list narrows to its own models.
    put(userFile, {});
    r = loadSettings({ env: {}, cwd, home });
    assert.deepEqual(r.settings.allowedModels, ["evil:1b"]);
    assert.deepEqual(r.problems, []);
    // The environment is the user's own, and still wins.
    r = loadSettings({ env: { OLLAMA_MCP_ALLOWED_MODELS: "x,y" }, cwd, home });
    assert.deepEqual(r.settings.allowedModels, ["x", "y"]);
  });
});

Deno.test("project delegationMode and permission mode may only get stricter", async () => {
  await withSandbox(({ home, cwd, userFile, projectFile }) => {
    put(projectFile, { delegationMode: "auto", defaultPermissionMode: "acceptEdits" });
    put(userFile, { defaultPermissionMode: "plan" });
    let r = loadSettings({ env: {}, cwd, home });
    assert.equal(r.settings.delegationMode, "ondemand");
    assert.equal(r.settings.defaultPermissionMode, "plan");
    assert.deepEqual(r.problems.map((p) => p.key), ["delegationMode", "defaultPermissionMode"]);
    assert.match(r.problems[0]!.reason, /more eager than "ondemand" \(off < ondemand < auto\)/);
    assert.match(r.problems[1]!.reason, /allows more than "plan"/);

    put(projectFile, { delegationMode: "off", defaultPermissionMode: "plan" });
    put(userFile, { delegationMode: "auto" });
    r = loadSettings({ env: {}, cwd, home });
    assert.equal(r.settings.delegationMode, "off");
    assert.equal(r.settings.defaultPermissionMode, "plan");
    assert.deepEqual(r.problems, []);
  });
});

Deno.test("project limits may be lowered, not raised; pricing is the user's alone", async () => {
  await withSandbox(({ home, cwd, userFile, projectFile }) => {
    put(userFile, {
      jobTimeoutMs: 60_000,
      pricing: { "a:latest": { inputPerMillion: 3, outputPerMillion: 9 } },
    });
    put(projectFile, {
      jobTimeoutMs: 2_000_000_000,
      maxConcurrent: 64,
      maxInlineChars: 10_000_000,
      pricing: { "a:latest": { inputPerMillion: 0, outputPerMillion: 0 } },
      defaultWaitSeconds: 30,
      defaultEngine: "native",
    });
    let r = loadSettings({ env: {}, cwd, home });
    assert.equal(r.settings.jobTimeoutMs, 60_000);
    assert.equal(r.settings.maxConcurrent, 4);
    assert.equal(r.settings.maxInlineChars, 60_000);
    assert.deepEqual(r.settings.pricing["a:latest"], { inputPerMillion: 3, outputPerMillion: 9 });
    // Neither widens a policy: honoured.
    assert.equal(r.settings.defaultWaitSeconds, 30);
    assert.equal(r.settings.defaultEngine, "native");
    assert.deepEqual(r.problems.map((p) => p.key), [
      "jobTimeoutMs",
      "maxConcurrent",
      "maxInlineChars",
      "pricing",
    ]);
    assert.match(r.problems[0]!.reason, /it is above 60000; a project file may only lower it/);

    put(projectFile, { jobTimeoutMs: 5000, maxConcurrent: 1, maxInlineChars: 1000 });
    r = loadSettings({ env: {}, cwd, home });
    assert.equal(r.settings.jobTimeoutMs, 5000);
    assert.equal(r.settings.maxConcurrent, 1);
    assert.equal(r.settings.maxInlineChars, 1000);
    assert.deepEqual(r.problems, []);
  });
});

Deno.test("config shows why a project value is not honoured", async () => {
  await withSandbox((sb) => {
    put(sb.userFile, { allowedModels: ["qwen3-coder:30b"] });
    put(sb.projectFile, { allowedModels: [], delegationMode: "auto" });
    const { lines } = run(sb, []);
    assert.ok(
      lines.includes("  allowedModels          qwen3-coder:30b   [user]"),
      lines.join("\n"),
    );
    assert.ok(lines.includes("  delegationMode         ondemand   [default]"));
    assert.ok(
      lines.some((l) => /^ {2}Invalid setting allowedModels in .* \[\] is not honoured/.test(l)),
    );
    assert.ok(
      lines.some((l) => /^ {2}Invalid setting delegationMode in .* "auto" is not honoured/.test(l)),
    );
  });
});

Deno.test("config --scope project refuses a value the project file may not set, and writes nothing", async () => {
  await withSandbox((sb) => {
    put(sb.userFile, { allowedModels: ["a"], defaultModel: "a" });
    const attempts: Array<[string[], RegExp]> = [
      [
        ["--allow", "all"],
        /^Cannot set allowedModels in the project file: \[\] is not honoured: an empty list means every model/,
      ],
      [
        ["--mode", "auto"],
        /^Cannot set delegationMode in the project file: "auto" is not honoured/,
      ],
      [
        ["--max-concurrent", "9"],
        /^Cannot set maxConcurrent in the project file: 9 is not honoured/,
      ],
      [["--price", "a=0/0"], /^Cannot set pricing in the project file: delegates can write there/],
    ];
    for (const [argv, message] of attempts) {
      assert.throws(() => run(sb, ["--scope", "project", ...argv]), (e: unknown) => {
        assert.ok(e instanceof ConfigUsageError, String(e));
        assert.match(e.message, message);
        assert.match(e.message, /(Nothing was written|Drop --scope project)/);
        return true;
      });
      assert.equal(existsSync(sb.projectFile), false, argv.join(" "));
    }
    assert.equal(run(sb, ["--scope", "project", "--mode", "off"]).code, 0);
    assert.deepEqual(readJson(sb.projectFile), { delegationMode: "off" });
  });
});

Deno.test("project defaultModel: only among the user's models, never from local to cloud", async () => {
  await withSandbox((sb) => {
    const { home, cwd, userFile, projectFile } = sb;
    const load = (env: Record<string, string> = {}) => loadSettings({ env, cwd, home });
    // Issue 28, item 7: a local default and a cloned project's cloud default.
    put(userFile, { defaultModel: "qwen3-coder:30b" });
    put(projectFile, { defaultModel: "qwen3.5:397b-cloud" });
    let r = load();
    assert.equal(r.settings.defaultModel, "qwen3-coder:30b");
    assert.equal(r.sources.defaultModel, "user");
    assert.deepEqual(r.layers.find((l) => l.name === "project")!.keys, []);
    assert.deepEqual(formatProblems(r.problems), [
      `Invalid setting defaultModel in ${projectFile} (project layer): "qwen3.5:397b-cloud" is ` +
      "not honoured: it is not one of the models you chose (qwen3-coder:30b: your defaultModel " +
      "and allowedModels); a project file, which delegates can write, may pick among the " +
      'models you chose, never move work to another; using "qwen3-coder:30b" from user',
    ]);
    // Allowed by the user, still never from a local default to the cloud.
    put(userFile, {
      defaultModel: "qwen3-coder:30b",
      allowedModels: ["qwen3-coder:30b", "qwen3:8b", "qwen3.5:397b-cloud"],
    });
    r = load();
    assert.equal(r.settings.defaultModel, "qwen3-coder:30b");
    assert.match(r.problems[0]!.reason, /it runs on Ollama's cloud, and without the project/);
    // Another local model of the user's is the project's to pick.
    put(projectFile, { defaultModel: "qwen3:8b" });
    r = load();
    assert.equal(r.settings.defaultModel, "qwen3:8b");
    assert.equal(r.sources.defaultModel, "project");
    assert.deepEqual(r.problems, []);
    assert.deepEqual(r.userModels.defaultModel, "qwen3-coder:30b");
    // A cloud default may give way to another cloud model the user allowed.
    put(userFile, { defaultModel: "gpt-oss:120b-cloud", allowedModels: ["qwen3.5:397b-cloud"] });
    put(projectFile, { defaultModel: "qwen3.5:397b-cloud" });
    assert.equal(load().settings.defaultModel, "qwen3.5:397b-cloud");
    // The environment's list is the user's too; the project's own narrowing is not.
    put(userFile, { defaultModel: "qwen3-coder:30b" });
    put(projectFile, { defaultModel: "qwen3:8b", allowedModels: ["qwen3:8b"] });
    assert.equal(load().settings.defaultModel, "qwen3-coder:30b");
    assert.equal(
      load({ OLLAMA_MCP_ALLOWED_MODELS: "qwen3-coder:30b,qwen3:8b" }).settings.defaultModel,
      "qwen3:8b",
    );
  });
});

Deno.test("config --scope project refuses a default model the user did not choose", async () => {
  await withSandbox((sb) => {
    put(sb.userFile, { defaultModel: "qwen3-coder:30b" });
    assert.throws(
      () => run(sb, ["--scope", "project", "--default-model", "qwen3.5:397b-cloud"]),
      /^ConfigUsageError: Cannot set defaultModel in the project file: "qwen3\.5:397b-cloud" is not honoured: it is not one of the models you chose/,
    );
    assert.equal(existsSync(sb.projectFile), false);
  });
});

Deno.test("project residency: may keep work local, never let it leave; config --residency writes it", async () => {
  await withSandbox((sb) => {
    const { home, cwd, userFile, projectFile } = sb;
    put(projectFile, { residency: "local" });
    let r = loadSettings({ env: {}, cwd, home });
    assert.equal(r.settings.residency, "local");
    assert.equal(r.sources.residency, "project");
    assert.deepEqual(r.problems, []);

    put(userFile, { residency: "local" });
    put(projectFile, { residency: "any" });
    r = loadSettings({ env: {}, cwd, home });
    assert.equal(r.settings.residency, "local");
    assert.equal(r.sources.residency, "user");
    assert.match(r.problems[0]!.reason, /"any" is not honoured: it lets work leave this machine/);

    // The environment is the user's: it wins over both files, as for every setting.
    r = loadSettings({ env: { OLLAMA_MCP_RESIDENCY: "any" }, cwd, home });
    assert.equal(r.settings.residency, "any");
    r = loadSettings({ env: { OLLAMA_MCP_RESIDENCY: "remote" }, cwd, home });
    assert.match(r.problems.at(-1)!.reason, /"remote" is not one of any, local/);

    put(userFile, {});
    assert.equal(run(sb, ["--residency", "local"]).code, 0);
    assert.deepEqual(readJson(userFile), { residency: "local" });
    assert.throws(
      () => run(sb, ["--scope", "project", "--residency", "any"]),
      /Cannot set residency in the project file: "any" is not honoured/,
    );
  });
});
