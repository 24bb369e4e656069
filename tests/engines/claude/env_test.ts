import assert from "node:assert/strict";
import {
  claudeChildEnv,
  GIT_SAFETY_ENV,
  ollamaValues,
  pinnedSettings,
} from "../../../src/engines/claude/env.ts";
import { sandboxSettings } from "../../../src/engines/claude/sandbox.ts";
import { allowlistedEnv } from "../../../src/platform/env.ts";

const BASE = "http://127.0.0.1:11434";
const MODEL = "qwen3-coder:480b-cloud";
const CONFIG_DIR = "/home/u/.ollama-delegate/claude";

/** A parent environment full of things a delegate must not see. */
const POISONED: Record<string, string | undefined> = {
  HOME: "/home/u",
  PATH: "/usr/local/bin:/usr/bin",
  LANG: "en_US.UTF-8",
  https_proxy: "http://proxy:3128",
  ANTHROPIC_API_KEY: "sk-ant-secret",
  ANTHROPIC_BASE_URL: "https://api.anthropic.com",
  ANTHROPIC_MODEL: "claude-opus",
  AWS_SECRET_ACCESS_KEY: "aws-secret",
  OPENAI_API_KEY: "sk-openai",
  GOOGLE_APPLICATION_CREDENTIALS: "/home/u/gcp.json",
  CLAUDECODE: "1",
  CLAUDE_CODE_ENTRYPOINT: "cli",
  CLAUDE_CONFIG_DIR: "/home/u/.claude",
  AZURE_X: "azure",
  BEDROCK_X: "bedrock",
  VERTEX_X: "vertex",
  FOO: "bar",
  TERM: undefined,
};

const EXPECTED_OLLAMA: Record<string, string> = {
  ANTHROPIC_BASE_URL: BASE,
  ANTHROPIC_AUTH_TOKEN: "ollama",
  ANTHROPIC_API_KEY: "",
  ANTHROPIC_CUSTOM_HEADERS: "",
  ANTHROPIC_MODEL: MODEL,
  ANTHROPIC_DEFAULT_OPUS_MODEL: MODEL,
  ANTHROPIC_DEFAULT_SONNET_MODEL: MODEL,
  ANTHROPIC_DEFAULT_HAIKU_MODEL: MODEL,
  ANTHROPIC_DEFAULT_FABLE_MODEL: MODEL,
  ANTHROPIC_SMALL_FAST_MODEL: MODEL,
  CLAUDE_CODE_SUBAGENT_MODEL: MODEL,
  CLAUDE_CODE_USE_BEDROCK: "0",
  CLAUDE_CODE_USE_VERTEX: "0",
  CLAUDE_CODE_USE_FOUNDRY: "0",
  CLAUDE_CODE_ATTRIBUTION_HEADER: "0",
  CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY: "1",
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
  DISABLE_FEEDBACK_COMMAND: "1",
  DISABLE_AUTOUPDATER: "1",
  DISABLE_TELEMETRY: "1",
  DISABLE_ERROR_REPORTING: "1",
};

Deno.test("claude env: only allowlisted parent names, then exactly the Ollama values", () => {
  const env = claudeChildEnv({
    parentEnv: POISONED,
    baseUrl: BASE,
    model: MODEL,
    claudeConfigDir: CONFIG_DIR,
  });
  const expected: Record<string, string> = {
    ...EXPECTED_OLLAMA,
    CLAUDE_CONFIG_DIR: CONFIG_DIR,
    ...GIT_SAFETY_ENV,
  };
  // The platform allowlist decides the inherited part; on POSIX that is these four.
  if (Deno.build.os !== "windows") {
    Object.assign(expected, {
      HOME: "/home/u",
      PATH: "/usr/local/bin:/usr/bin",
      LANG: "en_US.UTF-8",
      https_proxy: "http://proxy:3128",
    });
  }
  assert.deepEqual(env, expected);
});

Deno.test("claude env: no parent secret survives, whatever the platform", () => {
  const env = claudeChildEnv({
    parentEnv: POISONED,
    baseUrl: BASE,
    model: MODEL,
    claudeConfigDir: CONFIG_DIR,
  });
  const values = Object.values(env);
  for (
    const secret of [
      "sk-ant-secret",
      "https://api.anthropic.com",
      "claude-opus",
      "aws-secret",
      "sk-openai",
      "/home/u/gcp.json",
      "/home/u/.claude",
      "azure",
      "bedrock",
      "vertex",
      "bar",
      "cli",
    ]
  ) assert.equal(values.includes(secret), false, secret);
  for (const name of ["CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "FOO", "AZURE_X", "TERM"]) {
    assert.equal(name in env, false, name);
  }
  assert.equal(env.ANTHROPIC_API_KEY, "");
  assert.equal(env.ANTHROPIC_AUTH_TOKEN, "ollama");
  assert.equal(env.CLAUDE_CONFIG_DIR, CONFIG_DIR);
});

Deno.test("claude env: the same inherited part as allowlistedEnv on this platform", () => {
  const env = claudeChildEnv({
    parentEnv: POISONED,
    baseUrl: BASE,
    model: MODEL,
    claudeConfigDir: CONFIG_DIR,
  });
  for (const [k, v] of Object.entries(allowlistedEnv(POISONED))) assert.equal(env[k], v, k);
});

Deno.test("ollamaValues: the model fills every model slot", () => {
  const v = ollamaValues(BASE, "m1");
  assert.deepEqual(
    Object.entries(v).filter(([, value]) => value === "m1").map(([k]) => k).sort(),
    [
      "ANTHROPIC_DEFAULT_FABLE_MODEL",
      "ANTHROPIC_DEFAULT_HAIKU_MODEL",
      "ANTHROPIC_DEFAULT_OPUS_MODEL",
      "ANTHROPIC_DEFAULT_SONNET_MODEL",
      "ANTHROPIC_MODEL",
      "ANTHROPIC_SMALL_FAST_MODEL",
      "CLAUDE_CODE_SUBAGENT_MODEL",
    ],
  );
});

Deno.test("pinnedSettings: model plus an env block pinning endpoint, key, token and model", () => {
  const parsed = JSON.parse(pinnedSettings(BASE, MODEL));
  assert.deepEqual(Object.keys(parsed).sort(), ["env", "model"]);
  assert.equal(parsed.model, MODEL);
  assert.deepEqual(parsed.env, EXPECTED_OLLAMA);
  assert.equal(parsed.env.ANTHROPIC_BASE_URL, BASE);
  assert.equal(parsed.env.ANTHROPIC_API_KEY, "");
  assert.equal(parsed.env.ANTHROPIC_AUTH_TOKEN, "ollama");
  assert.equal(parsed.env.ANTHROPIC_MODEL, MODEL);
});

Deno.test("pinnedSettings: is one JSON string (safe as a single --settings= value)", () => {
  const s = pinnedSettings('http://h:1/"x"', 'm"\n');
  assert.equal(s.includes("\n"), false);
  assert.equal(JSON.parse(s).model, 'm"\n');
});

Deno.test("claude env: git ignores a repository's fsmonitor and hooks", () => {
  const env = claudeChildEnv({
    parentEnv: { ...POISONED, GIT_CONFIG_COUNT: "1", GIT_CONFIG_KEY_0: "core.fsmonitor" },
    baseUrl: BASE,
    model: MODEL,
    claudeConfigDir: CONFIG_DIR,
  });
  assert.equal(env.GIT_CONFIG_COUNT, "2");
  const pairs = [0, 1].map((i) => [env[`GIT_CONFIG_KEY_${i}`], env[`GIT_CONFIG_VALUE_${i}`]]);
  assert.deepEqual(pairs, [["core.fsmonitor", "false"], ["core.hooksPath", "/dev/null"]]);
});

Deno.test("claude env: relative and empty PATH entries are dropped (POSIX and Windows)", () => {
  const input = { baseUrl: BASE, model: MODEL, claudeConfigDir: CONFIG_DIR };
  const posix = claudeChildEnv({
    ...input,
    parentEnv: { PATH: "node_modules/.bin::/usr/bin:.:bin:/bin:" },
  }, false);
  assert.equal(posix.PATH, "/usr/bin:/bin");
  const windows = claudeChildEnv({
    ...input,
    parentEnv: { Path: "node_modules\\.bin;;C:\\Windows;.;\\x;C:rel;D:\\tools" },
  }, true);
  assert.equal(windows.Path, "C:\\Windows;D:\\tools");
});

Deno.test("claude env: the turn's marker is set when given", () => {
  const marker = { name: "OLLAMA_DELEGATE_TURN", value: "job.1.abc" };
  const env = claudeChildEnv({
    parentEnv: POISONED,
    baseUrl: BASE,
    model: MODEL,
    claudeConfigDir: CONFIG_DIR,
    marker,
  });
  assert.equal(env.OLLAMA_DELEGATE_TURN, "job.1.abc");
});

Deno.test("pinnedSettings: a sandbox block when Claude Code's sandbox is on", () => {
  const sandbox = sandboxSettings({ cwd: "/w", addDirs: [], protect: [] });
  const parsed = JSON.parse(pinnedSettings(BASE, MODEL, sandbox));
  assert.deepEqual(Object.keys(parsed).sort(), ["env", "model", "sandbox"]);
  assert.deepEqual(parsed.sandbox, sandbox);
});

Deno.test("claude env: the lean harness turns off Claude Code's git status at start; the full one keeps it", () => {
  const base = { parentEnv: POISONED, baseUrl: BASE, model: MODEL, claudeConfigDir: CONFIG_DIR };
  // Lean: the prompt has no git section, so the git processes that gather one are not run.
  assert.equal(claudeChildEnv({ ...base, lean: true }).CLAUDE_CODE_DISABLE_GIT_INSTRUCTIONS, "1");
  // Full: Claude Code's own prompt, git instructions and status included.
  assert.equal(
    "CLAUDE_CODE_DISABLE_GIT_INSTRUCTIONS" in claudeChildEnv({ ...base, lean: false }),
    false,
  );
});
