import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { ConfigUsageError } from "../../src/settings/config_cmd.ts";
import { loadSettings } from "../../src/settings/load.ts";
import { put, readJson, run, withSandbox } from "./helpers.ts";

Deno.test("config: the review gate is turned on and off, and its options written, in the user file", async () => {
  await withSandbox((sb) => {
    const on = run(sb, [
      "--review-gate",
      "on",
      "--gate-severity",
      "Critical",
      "--gate-agreement",
      "2",
      "--gate-rounds",
      "3",
      "--gate-models",
      "qwen3-coder:30b, gpt-oss:20b",
      "--gate-timeout",
      "600",
    ]);
    assert.equal(on.code, 0);
    assert.deepEqual(readJson(sb.userFile), {
      reviewGate: "on",
      reviewGateSeverity: "critical",
      reviewGateAgreement: 2,
      reviewGateRounds: 3,
      reviewGateModels: ["qwen3-coder:30b", "gpt-oss:20b"],
      reviewGateSeconds: 600,
    });
    run(sb, ["--review-gate", "off", "--gate-models", "default"]);
    const file = readJson(sb.userFile) as Record<string, unknown>;
    assert.equal(file.reviewGate, "off");
    assert.equal("reviewGateModels" in file, false);
    // Claude Code stops the hook at 900 s: the gate's own limit stays below, to fail open first.
    assert.throws(
      () => run(sb, ["--gate-timeout", "900"]),
      (e: unknown) => e instanceof ConfigUsageError && /reviewGateSeconds/.test(e.message),
    );
  });
});

Deno.test("config: a project may turn the review gate off, never on, and sets none of its options", async () => {
  await withSandbox((sb) => {
    assert.throws(
      () => run(sb, ["--scope", "project", "--review-gate", "on"]),
      (e: unknown) =>
        e instanceof ConfigUsageError &&
        /Cannot set reviewGate in the project file/.test(e.message),
    );
    assert.throws(
      () => run(sb, ["--scope", "project", "--gate-rounds", "9"]),
      (e: unknown) => e instanceof ConfigUsageError && /reviewGateRounds/.test(e.message),
    );
    assert.equal(existsSync(sb.projectFile), false);
    put(sb.userFile, { reviewGate: "on", reviewGateRounds: 2 });
    put(sb.projectFile, { reviewGate: "on", reviewGateRounds: 9 });
    const r = loadSettings({ env: {}, cwd: sb.cwd, home: sb.home });
    assert.equal(r.settings.reviewGate, "on");
    assert.equal(r.settings.reviewGateRounds, 2);
    put(sb.userFile, { reviewGate: "off" });
    put(sb.projectFile, { reviewGate: "on" });
    assert.equal(loadSettings({ env: {}, cwd: sb.cwd, home: sb.home }).settings.reviewGate, "off");
    put(sb.userFile, { reviewGate: "on" });
    put(sb.projectFile, { reviewGate: "off" });
    assert.equal(loadSettings({ env: {}, cwd: sb.cwd, home: sb.home }).settings.reviewGate, "off");
  });
});
