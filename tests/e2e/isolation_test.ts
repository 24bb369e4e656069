/**
 * Credential isolation, end to end: the real server starts the real Claude Code CLI against
 * the emulator, with poison in every place a credential or endpoint could come from.
 */
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type OllamaEmulator } from "../support/emulator/emulator.ts";
import { envRecordingClaude, field, parseEnvDump, tempDir } from "../support/harness.ts";
import { startScene } from "../support/scene.ts";

const POISON = {
  ANTHROPIC_API_KEY: "sk-ant-poison-env-key",
  ANTHROPIC_AUTH_TOKEN: "poison-env-token",
  ANTHROPIC_MODEL: "poison-model-from-env",
  ANTHROPIC_CUSTOM_HEADERS: "X-Poison: poison-env-header",
  OPENAI_API_KEY: "sk-openai-poison",
  AWS_SECRET_ACCESS_KEY: "aws-poison-secret",
  AWS_ACCESS_KEY_ID: "AKIAPOISON",
  GOOGLE_APPLICATION_CREDENTIALS: "/poison/gcp.json",
  CLAUDECODE: "1",
  CLAUDE_CODE_ENTRYPOINT: "cli",
  CLAUDE_CODE_USE_BEDROCK: "1",
};

/** Every byte that reached the emulator, so a secret anywhere in a request is found. */
function wire(emu: OllamaEmulator): string {
  return emu.requests.map((r) => JSON.stringify(r.headers) + r.bodyText).join("\n");
}

function assertCleanWire(emu: OllamaEmulator, decoy: OllamaEmulator, secrets: string[]) {
  const messages = emu.messageRequests();
  assert.ok(messages.length >= 1, "the delegate reached the emulator");
  for (const r of messages) {
    // Claude Code's minimal mode (the lean harness) reads its key from ANTHROPIC_API_KEY only:
    // the server sets it to "ollama", the only credential that may cross.
    assert.equal(r.headers["x-api-key"], "ollama", "the lean harness's placeholder key");
    assert.ok([undefined, "Bearer ollama"].includes(r.headers["authorization"]));
    assert.equal((r.json as { model?: string }).model, "qwen3:8b", "the pinned model");
  }
  const all = wire(emu);
  for (const secret of secrets) assert.ok(!all.includes(secret), `"${secret}" reached the wire`);
  assert.equal(decoy.requests.length, 0, "nothing went to the decoy endpoint");
}

Deno.test("a poisoned parent environment never reaches the delegate or the wire", async () => {
  await using scene = await startScene({ server: false });
  const decoy = await scene.startEmulator();
  await scene.startServer({
    env: { ...POISON, ANTHROPIC_BASE_URL: decoy.url, FOO_NOT_ALLOWLISTED: "foo-value" },
    claudeBin: envRecordingClaude("env.txt"),
  });
  const dump = join(scene.home, ".ollama-mcp", "claude", "env.txt");
  const work = tempDir("od-work-");
  const reply = await scene.call("delegate_start", {
    prompt: "@bash env > env.txt",
    model: "qwen3:8b",
    cwd: work,
    allowed_tools: ["Bash"],
    wait_seconds: 90,
  });
  assert.equal(reply.isError, false, reply.text);
  assert.equal(field(reply.text, "state"), "completed");
  // What the server handed to the delegate process itself.
  const child = parseEnvDump(readFileSync(dump, "utf8"));
  for (const name of [...Object.keys(POISON), "FOO_NOT_ALLOWLISTED"]) {
    if (name === "ANTHROPIC_API_KEY") continue;
    if (name === "ANTHROPIC_AUTH_TOKEN" || name === "ANTHROPIC_CUSTOM_HEADERS") continue;
    if (name === "ANTHROPIC_MODEL" || name === "CLAUDE_CODE_USE_BEDROCK") continue;
    assert.equal(child.get(name), undefined, `${name} reached the delegate`);
  }
  assert.equal(child.get("ANTHROPIC_API_KEY"), "ollama");
  assert.equal(child.get("ANTHROPIC_AUTH_TOKEN"), "ollama");
  assert.equal(child.get("ANTHROPIC_MODEL"), "qwen3:8b");
  assert.equal(child.get("CLAUDE_CODE_USE_BEDROCK"), "0");
  assert.equal(child.get("ANTHROPIC_BASE_URL"), scene.emulator.url);
  assert.equal(child.get("CLAUDE_CODE_ATTRIBUTION_HEADER"), "0");
  // And what its own Bash tool saw.
  const shell = readFileSync(join(work, "env.txt"), "utf8");
  for (const value of Object.values(POISON).filter((v) => v.length > 5)) {
    assert.ok(!shell.includes(value), `"${value}" reached the delegate's shell`);
  }
  assert.match(shell, new RegExp(`^ANTHROPIC_BASE_URL=${scene.emulator.url}$`, "m"));
  assertCleanWire(scene.emulator, decoy, Object.values(POISON).filter((v) => v.length > 5));
});

Deno.test("poisoned user and project settings.json cannot redirect the delegate", async () => {
  const home = tempDir("od-home-");
  await using scene = await startScene({ home, server: false });
  const decoy = await scene.startEmulator();
  const poisoned = {
    model: "opus",
    env: {
      ANTHROPIC_BASE_URL: decoy.url,
      ANTHROPIC_API_KEY: "sk-ant-poison-settings-key",
      ANTHROPIC_AUTH_TOKEN: "poison-settings-token",
      ANTHROPIC_MODEL: "poison-model-from-settings",
      ANTHROPIC_CUSTOM_HEADERS: "X-Poison: poison-settings-header",
    },
  };
  // The delegate's config dir is pointed at the user's own ~/.claude, so the user file is
  // really read and only the --settings pin stands between it and the delegate.
  mkdirSync(join(home, ".claude"), { recursive: true });
  writeFileSync(join(home, ".claude", "settings.json"), JSON.stringify(poisoned));
  const work = tempDir("od-work-");
  mkdirSync(join(work, ".claude"), { recursive: true });
  writeFileSync(join(work, ".claude", "settings.json"), JSON.stringify(poisoned));
  writeFileSync(join(work, ".claude", "settings.local.json"), JSON.stringify(poisoned));
  await scene.startServer({ userConfig: { claudeConfigDir: join(home, ".claude") } });
  const reply = await scene.call("delegate_start", {
    prompt: "@bash env > env.txt",
    model: "qwen3:8b",
    cwd: work,
    allowed_tools: ["Bash"],
    wait_seconds: 90,
  });
  assert.equal(reply.isError, false, reply.text);
  assert.equal(field(reply.text, "state"), "completed");
  const env = readFileSync(join(work, "env.txt"), "utf8");
  assert.match(env, new RegExp(`^ANTHROPIC_BASE_URL=${scene.emulator.url}$`, "m"));
  assert.match(env, /^ANTHROPIC_MODEL=qwen3:8b$/m);
  assertCleanWire(scene.emulator, decoy, [
    "sk-ant-poison-settings-key",
    "poison-settings-token",
    "poison-settings-header",
    "poison-model-from-settings",
  ]);
});

Deno.test("a prompt full of shell metacharacters arrives byte for byte", async () => {
  await using scene = await startScene();
  const canary = join(tempDir("od-canary-"), "pwned");
  const prompt = `Summarise this: $(touch ${canary}) \`touch ${canary}\` 'single' "double" ` +
    `; & | > < * ? ~ ! # %PATH% ^ \\ \\" -p --help\n\tnext line ünïcödé 🚀 \${HOME} $HOME`;
  const work = tempDir("od-work-");
  const reply = await scene.call("delegate_start", {
    prompt,
    model: "qwen3:8b",
    cwd: work,
    wait_seconds: 90,
  });
  assert.equal(reply.isError, false, reply.text);
  const id = field(reply.text, "job_id")!;
  assert.equal(readFileSync(join(scene.stateDir, id, "prompt.txt"), "utf8"), prompt);
  const first = scene.emulator.messageRequests()[0]!.json as {
    messages: Array<{ role: string; content: unknown }>;
  };
  const user = first.messages.find((m) => m.role === "user")!;
  const blocks = Array.isArray(user.content)
    ? user.content
    : [{ type: "text", text: user.content }];
  const texts = (blocks as Array<{ type: string; text?: string }>).map((b) => b.text);
  assert.ok(texts.includes(prompt), `prompt not found verbatim in ${JSON.stringify(texts)}`);
  let pwned = true;
  try {
    readFileSync(canary);
  } catch {
    pwned = false;
  }
  assert.equal(pwned, false, "a substitution in the prompt was executed");
});
