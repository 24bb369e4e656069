/**
 * `ollama-delegate doctor` as a user runs it: the real Claude Code CLI, real bubblewrap, and
 * the Ollama emulator (or nothing at all where Ollama should be). The command runs in this
 * process with its environment, working directory and home injected (tests/cli/jobs_support.ts);
 * the colour test starts the real program on a terminal.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { type EmulatedModel, startOllamaEmulator } from "../support/emulator/emulator.ts";
import { CLAUDE_BIN, realDenoDir, serverCommand, tempDir } from "../support/harness.ts";
import { cliEnv, runCli } from "./jobs_support.ts";
import {
  assertEscaped,
  EVIL_MODEL,
  EVIL_SAID,
  EVIL_SHOWN,
  EVIL_VERSION,
} from "./backend_text_support.ts";

interface JsonCheck {
  id: string;
  status: "pass" | "fail" | "warn";
  required: boolean;
  summary: string;
  hint?: string;
  details?: Record<string, unknown>;
}

interface JsonReport {
  ok: boolean;
  defaultEngine: string;
  checks: JsonCheck[];
}

interface DoctorRun {
  code: number;
  stdout: string;
  stderr: string;
  home: string;
  stateDir: string;
}

interface DoctorOptions {
  args?: string[];
  baseUrl?: string;
  /** Written to $OLLAMA_MCP_CONFIG: an object as JSON, a string as is. */
  userConfig?: Record<string, unknown> | string;
  env?: Record<string, string>;
  home?: string;
}

/** The server's command line with `doctor` in place of `serve` (Deno or the Node bundle). */
function doctorCommand(args: string[]): { command: string; args: string[] } {
  const { command, args: serverArgs } = serverCommand();
  const base = serverArgs.at(-1) === "serve" ? serverArgs.slice(0, -1) : serverArgs;
  return { command, args: [...base, "doctor", ...args] };
}

function doctorEnv(opts: DoctorOptions, home: string, stateDir: string): Record<string, string> {
  const configFile = join(home, "config.json");
  if (opts.userConfig !== undefined) {
    writeFileSync(
      configFile,
      typeof opts.userConfig === "string" ? opts.userConfig : JSON.stringify(opts.userConfig),
    );
  }
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    DENO_DIR: realDenoDir(),
    OLLAMA_MCP_CONFIG: configFile,
    OLLAMA_MCP_STATE_DIR: stateDir,
    OLLAMA_MCP_CLAUDE_BIN: CLAUDE_BIN,
    ...(opts.baseUrl ? { OLLAMA_MCP_BASE_URL: opts.baseUrl } : {}),
    ...opts.env,
  };
}

/** Runs `doctor` in this process (doctorMain with an injected io), as through a pipe. */
async function doctor(opts: DoctorOptions = {}): Promise<DoctorRun> {
  const home = opts.home ?? tempDir("od-doctor-");
  const stateDir = join(home, "state");
  const env = doctorEnv(opts, home, stateDir);
  const run = await runCli({ env, cwd: home, stateDir }, ["doctor", ...(opts.args ?? [])]);
  return { code: run.code ?? -1, stdout: run.stdout, stderr: run.stderr, home, stateDir };
}

async function doctorJson(opts: DoctorOptions = {}): Promise<DoctorRun & { report: JsonReport }> {
  const run = await doctor({ ...opts, args: ["--json", ...(opts.args ?? [])] });
  let report: JsonReport;
  try {
    report = JSON.parse(run.stdout) as JsonReport;
  } catch (e) {
    throw new Error(`doctor --json printed no JSON (${e}): ${run.stdout}\n${run.stderr}`);
  }
  return { ...run, report };
}

function check(report: JsonReport, id: string): JsonCheck {
  const found = report.checks.find((c) => c.id === id);
  assert.ok(found, `no check "${id}" in ${report.checks.map((c) => c.id).join(", ")}`);
  return found;
}

/** The report line of a check: `  STATUS  Title  summary`. */
function line(stdout: string, title: string): string {
  const found = stdout.split("\n").find((l) =>
    new RegExp(`^  (PASS|FAIL|WARN)  ${title} `).test(l)
  );
  assert.ok(found, `no line for "${title}" in:\n${stdout}`);
  return found;
}

/** The `fix:` line printed under a check's line. */
function fixUnder(stdout: string, title: string): string {
  const lines = stdout.split("\n");
  const at = lines.indexOf(line(stdout, title));
  const fix = lines.slice(at + 1).find((l) =>
    /^ {10,}fix: /.test(l) || /^ {2}[A-Z]{4} {2}/.test(l)
  );
  assert.ok(fix && fix.includes("fix: "), `no fix under "${title}" in:\n${stdout}`);
  return fix;
}

const GOOD_MODELS: EmulatedModel[] = [
  { name: "qwen3:8b" },
  { name: "glm-5:cloud", contextLength: 131_072 },
];

const claudeVersion = () =>
  /\d+\.\d+\.\d+/.exec(execFileSync(CLAUDE_BIN, ["--version"], { encoding: "utf8" }))![0];

Deno.test("doctor: a working setup passes every check and exits 0", async () => {
  const emu = await startOllamaEmulator({ models: GOOD_MODELS, version: "0.34.1" });
  try {
    const run = await doctor({
      baseUrl: emu.url,
      userConfig: {
        defaultModel: "glm-5:cloud",
        backends: { spare: { url: emu.url, kind: "ollama" } },
      },
    });
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.doesNotMatch(run.stdout, /^ {2}(FAIL|WARN) /m, run.stdout);
    assert.ok(!run.stdout.includes("\x1b["), "no colour without a terminal");
    assert.match(line(run.stdout, "Claude Code CLI"), new RegExp(`Claude Code ${claudeVersion()}`));
    assert.ok(line(run.stdout, "Claude Code CLI").includes(CLAUDE_BIN));
    assert.ok(line(run.stdout, "Ollama").includes(`Ollama 0.34.1 at ${emu.url}`));
    assert.match(line(run.stdout, "Models"), /2 model\(s\), 2 with tools: qwen3:8b, glm-5:cloud/);
    assert.match(line(run.stdout, "Default model"), /"glm-5:cloud" \(set in defaultModel\)/);
    // A cloud default is named so, with how to keep work local (issue 29).
    assert.match(
      line(run.stdout, "Default model"),
      /; it is a cloud model \(glm-5:cloud runs on ollama\.com, through http:\/\/127\.0\.0\.1:\d+\)$/,
    );
    assert.match(
      run.stdout,
      /^ +to keep work local: ollama-delegate config --residency local --default-model <a local model> /m,
    );
    assert.match(line(run.stdout, "Context length"), /131072 tokens/);
    assert.match(line(run.stdout, "Sandbox \\(bubblewrap\\)"), /bwrap runs commands/);
    assert.match(line(run.stdout, "Backend spare"), /Ollama 0\.34\.1/);
    assert.ok(line(run.stdout, "State dir").includes(run.stateDir));
    assert.match(run.stdout, /^Ready: everything the claude engine needs works\.$/m);
    // The emulator saw the checks themselves, not a cached answer.
    const show = emu.requests.filter((r) => r.path === "/api/show");
    assert.ok(
      show.some((r) => (r.json as { model?: string }).model === "glm-5:cloud"),
      "context read from /api/show",
    );
    assert.ok(emu.requests.filter((r) => r.path === "/api/version").length >= 2, "Ollama + spare");
    // The write probe leaves nothing behind.
    assert.deepEqual(readdirSync(run.stateDir), []);
  } finally {
    await emu.close();
  }
});

Deno.test("doctor --json: every check with id, status, required, summary; ok matches the exit code", async () => {
  const emu = await startOllamaEmulator({ models: GOOD_MODELS });
  try {
    const { code, report } = await doctorJson({
      baseUrl: emu.url,
      userConfig: { defaultModel: "glm-5:cloud" },
    });
    assert.equal(code, 0);
    assert.equal(report.ok, true);
    assert.equal(report.defaultEngine, "claude");
    assert.deepEqual(report.checks.map((c) => c.id), [
      "config",
      "state",
      "claude",
      "claude.sandbox",
      "requests",
      "ollama",
      "models",
      "model.default",
      "model.context",
      "models.retired",
      "sandbox",
      "journal",
      "toolchains",
    ]);
    for (const c of report.checks) {
      assert.ok(["pass", "fail", "warn"].includes(c.status), JSON.stringify(c));
      assert.equal(typeof c.summary, "string");
      assert.ok(c.summary.length > 0);
      assert.equal(typeof c.required, "boolean");
      if (c.hint !== undefined) assert.equal(typeof c.hint, "string");
      assert.equal(c.status, "pass", JSON.stringify(c));
      assert.equal("lines" in c, false, "text-only lines stay out of the JSON");
    }
    assert.deepEqual(
      report.checks.filter((c) => c.required).map((c) => c.id),
      ["config", "state", "claude", "claude.sandbox", "ollama", "model.default"],
    );
    assert.equal(check(report, "claude").details?.path, CLAUDE_BIN);
    assert.equal(check(report, "claude").details?.version, claudeVersion());
    assert.equal(check(report, "ollama").details?.url, emu.url);
    const models = check(report, "models").details?.models as { name: string; tools: boolean }[];
    assert.deepEqual(models.map((m) => [m.name, m.tools]), [["qwen3:8b", true], [
      "glm-5:cloud",
      true,
    ]]);
    assert.equal(check(report, "model.context").details?.modelContextLength, 131_072);
  } finally {
    await emu.close();
  }
});

Deno.test("doctor: a stopped Ollama fails with the URL and says to start ollama serve", async () => {
  const emu = await startOllamaEmulator();
  const url = emu.url;
  await emu.close();
  const run = await doctor({ baseUrl: url });
  assert.equal(run.code, 1, run.stdout + run.stderr);
  assert.match(line(run.stdout, "Ollama"), /^ {2}FAIL {2}Ollama +Cannot reach Ollama at /);
  assert.ok(line(run.stdout, "Ollama").includes(url));
  assert.match(fixUnder(run.stdout, "Ollama"), /ollama serve/);
  assert.match(run.stdout, /^Not ready: 1 check\(s\) the claude engine needs failed \(Ollama\)/m);
  const { code, report } = await doctorJson({ baseUrl: url });
  assert.equal(code, 1);
  assert.equal(report.ok, false);
  const ollama = check(report, "ollama");
  assert.equal(ollama.status, "fail");
  assert.equal(ollama.required, true);
  assert.match(ollama.hint ?? "", /ollama serve/);
  assert.equal(check(report, "claude").status, "pass", "the rest is still checked");
});

Deno.test("doctor: a missing claude binary fails for the claude engine, warns for native", async () => {
  const emu = await startOllamaEmulator({ models: GOOD_MODELS });
  try {
    const env = { OLLAMA_MCP_CLAUDE_BIN: "/nonexistent" };
    const run = await doctor({ baseUrl: emu.url, env });
    assert.equal(run.code, 1, run.stdout);
    assert.match(
      line(run.stdout, "Claude Code CLI"),
      /^ {2}FAIL {2}Claude Code CLI +"\/nonexistent" does not exist or is not an executable file/,
    );
    assert.match(fixUnder(run.stdout, "Claude Code CLI"), /--claude-bin <path>/);
    assert.match(fixUnder(run.stdout, "Claude Code CLI"), /OLLAMA_MCP_CLAUDE_BIN/);

    // A bare name is looked up on the delegate's PATH, which the summary shows.
    const named = await doctorJson({
      baseUrl: emu.url,
      env: { OLLAMA_MCP_CLAUDE_BIN: "claude-not-installed-od" },
    });
    assert.equal(named.code, 1);
    assert.match(
      check(named.report, "claude").summary,
      /^"claude-not-installed-od" was not found on the delegate's PATH \(.*\/usr\/bin/,
    );

    // The native engine does not need Claude Code: the same failure is only a warning.
    const native = await doctorJson({
      baseUrl: emu.url,
      env: { ...env, OLLAMA_MCP_DEFAULT_ENGINE: "native" },
    });
    assert.equal(native.code, 0, native.stdout);
    assert.equal(native.report.defaultEngine, "native");
    const claude = check(native.report, "claude");
    assert.equal(claude.status, "warn");
    assert.equal(claude.required, false);
    assert.equal(check(native.report, "sandbox").required, true);
  } finally {
    await emu.close();
  }
});

Deno.test("doctor: a claude binary that does not answer --version is not runnable", async () => {
  const emu = await startOllamaEmulator({ models: GOOD_MODELS });
  try {
    const dir = tempDir("od-fake-claude-");
    const fake = join(dir, "claude");
    writeFileSync(fake, "#!/bin/sh\necho 'broken install' >&2\nexit 3\n", { mode: 0o755 });
    const { code, report } = await doctorJson({
      baseUrl: emu.url,
      env: { OLLAMA_MCP_CLAUDE_BIN: fake },
    });
    assert.equal(code, 1);
    const claude = check(report, "claude");
    assert.equal(claude.status, "fail");
    assert.match(claude.summary, /not runnable: `--version` exited with 3: broken install/);
  } finally {
    await emu.close();
  }
});

Deno.test("doctor: a user config that is not JSON fails and names the file", async () => {
  const emu = await startOllamaEmulator({ models: GOOD_MODELS });
  try {
    const run = await doctor({ baseUrl: emu.url, userConfig: '{ "delegationMode": "auto", ' });
    const file = join(run.home, "config.json");
    assert.equal(run.code, 1, run.stdout);
    assert.match(line(run.stdout, "Settings"), /^ {2}FAIL {2}Settings /);
    assert.ok(line(run.stdout, "Settings").includes(file), run.stdout);
    assert.ok(
      run.stdout.includes(`Invalid setting ${file} (user layer): file ignored: not valid JSON`),
      run.stdout,
    );
    assert.match(fixUnder(run.stdout, "Settings"), /ollama-delegate config/);
    assert.match(run.stdout, /Not ready: .*\(Settings\)/);

    // A valid file with a bad value fails the same way, naming the key.
    const bad = await doctorJson({ baseUrl: emu.url, userConfig: { maxConcurrent: 0 } });
    assert.equal(bad.code, 1);
    const config = check(bad.report, "config");
    assert.equal(config.status, "fail");
    assert.ok(config.summary.includes(join(bad.home, "config.json")), config.summary);
    const problems = config.details?.problems as { key: string }[];
    assert.deepEqual(problems.map((p) => p.key), ["maxConcurrent"]);
  } finally {
    await emu.close();
  }
});

Deno.test("doctor: a default model with an 8k context warns with the num_ctx fix", async () => {
  const emu = await startOllamaEmulator({
    models: [{ name: "qwen3:8b", contextLength: 8192 }, { name: "glm-5:cloud" }],
  });
  try {
    const run = await doctor({ baseUrl: emu.url, userConfig: { defaultModel: "qwen3:8b" } });
    assert.equal(run.code, 0, "a short context is a warning, not a failure");
    assert.match(
      line(run.stdout, "Context length"),
      /^ {2}WARN {2}Context length +"qwen3:8b" supports a context of 8192 tokens; coding agents need 65536/,
    );
    const fix = fixUnder(run.stdout, "Context length");
    assert.ok(fix.includes("OLLAMA_CONTEXT_LENGTH=65536 ollama serve"), fix);
    assert.ok(fix.includes("PARAMETER num_ctx 65536"), fix);
    const { report } = await doctorJson({
      baseUrl: emu.url,
      userConfig: { defaultModel: "qwen3:8b" },
    });
    const context = check(report, "model.context");
    assert.equal(context.status, "warn");
    assert.equal(context.details?.modelContextLength, 8192);
    assert.equal(context.details?.needed, 65536);
  } finally {
    await emu.close();
  }
});

Deno.test("doctor: a local model with a long context still warns that Ollama's default may be short", async () => {
  const emu = await startOllamaEmulator({ models: [{ name: "qwen3:8b", contextLength: 262_144 }] });
  try {
    const { code, report } = await doctorJson({ baseUrl: emu.url });
    assert.equal(code, 0);
    assert.equal(check(report, "model.default").details?.model, "qwen3:8b");
    const context = check(report, "model.context");
    assert.equal(context.status, "warn");
    assert.match(context.summary, /server default \(4k under 24 GiB of VRAM, more above\)/);
    assert.match(context.summary, /at 4096 tokens the claude engine's prompt \(about \d+ tokens/);
    assert.match(context.hint ?? "", /num_ctx 65536/);
    assert.match(
      context.hint ?? "",
      /ollama-delegate models derive qwen3:8b --ctx 64k, then ollama-delegate config --default-model qwen3:8b-ctx64k/,
    );
  } finally {
    await emu.close();
  }
});

Deno.test("doctor: a model loaded with less context than Claude Code's prompt gets the models derive fix, which works", async () => {
  const emu = await startOllamaEmulator({
    models: [{ name: "qwen3-coder:30b", contextLength: 262_144 }],
    contextMode: "real",
    defaultContextLength: 4096,
  });
  try {
    // Loaded as a request without options.num_ctx loads it: with the server default.
    const load = await fetch(`${emu.url}/api/generate`, {
      method: "POST",
      body: JSON.stringify({ model: "qwen3-coder:30b" }),
    });
    assert.equal(load.status, 200);
    await load.body?.cancel();
    // Claude Code's full harness: its prompt does not fit 4,096 tokens.
    const userConfig = { defaultModel: "qwen3-coder:30b", claudeHarness: "full" };
    const run = await doctor({ baseUrl: emu.url, userConfig });
    assert.equal(run.code, 0, "a short context is a warning");
    assert.match(
      line(run.stdout, "Context length"),
      /WARN {2}Context length +"qwen3-coder:30b" runs with a context of 4096 tokens \(as loaded now\), less than the \d+ tokens the claude engine needs \(its prompt is about \d+ tokens per request, plus room to answer\): the claude engine refuses it while it is loaded so, since Ollama would cut the engine's own instructions/,
    );
    assert.match(
      fixUnder(run.stdout, "Context length"),
      /fix: Derive a copy that Ollama runs with 64k: ollama-delegate models derive qwen3-coder:30b --ctx 64k, then ollama-delegate config --default-model qwen3-coder:30b-ctx64k; or use engine "native"/,
    );
    const { report } = await doctorJson({ baseUrl: emu.url, userConfig });
    const details = check(report, "model.context").details ?? {};
    assert.equal(details.effectiveContextLength, 4096);
    assert.equal(details.contextSource, "loaded");
    assert.equal(details.engine, "claude");
    assert.ok((details.enginePromptTokens as number) > 4096, JSON.stringify(details));
    assert.ok(
      (details.engineRequiredContext as number) > (details.enginePromptTokens as number),
      "room to answer",
    );

    // The fix, as printed: derive, make it the default, and the check passes.
    const derive = await runCli(cliEnv({ env: { OLLAMA_MCP_BASE_URL: emu.url } }), [
      "models",
      "derive",
      "qwen3-coder:30b",
      "--ctx",
      "64k",
    ]);
    assert.equal(derive.code, 0, derive.stdout + derive.stderr);
    const fixed = await doctorJson({
      baseUrl: emu.url,
      userConfig: { defaultModel: "qwen3-coder:30b-ctx64k" },
    });
    const context = check(fixed.report, "model.context");
    assert.equal(context.status, "pass", JSON.stringify(context));
    assert.match(context.summary, /"qwen3-coder:30b-ctx64k" runs with a context of 65536 tokens/);
  } finally {
    await emu.close();
  }
});

Deno.test("doctor: for the native engine only the model's maximum and maxContext count", async () => {
  const emu = await startOllamaEmulator({
    models: [{ name: "qwen3-coder:30b", contextLength: 262_144 }],
    contextMode: "real",
    defaultContextLength: 4096,
  });
  try {
    const load = await fetch(`${emu.url}/api/generate`, {
      method: "POST",
      body: JSON.stringify({ model: "qwen3-coder:30b" }),
    });
    await load.body?.cancel();
    const native = { defaultModel: "qwen3-coder:30b", defaultEngine: "native" };
    const { report } = await doctorJson({ baseUrl: emu.url, userConfig: native });
    const context = check(report, "model.context");
    assert.equal(context.status, "pass", JSON.stringify(context));
    assert.match(
      context.summary,
      /"qwen3-coder:30b" supports 262144 tokens; the native engine asks Ollama for the context each request needs/,
    );
    const capped = await doctorJson({
      baseUrl: emu.url,
      userConfig: { ...native, maxContext: 16_384 },
    });
    const short = check(capped.report, "model.context");
    assert.equal(short.status, "warn");
    assert.match(
      short.summary,
      /may ask Ollama for at most 16384 tokens for "qwen3-coder:30b" \(maxContext 16384\)/,
    );
    assert.match(short.hint ?? "", /ollama-delegate config --max-context 64k/);
  } finally {
    await emu.close();
  }
});

Deno.test("doctor: models without tools and retired models are reported", async () => {
  const emu = await startOllamaEmulator({
    models: [
      { name: "gemma3:4b", capabilities: ["completion"] },
      { name: "glm-4.7:cloud" },
    ],
  });
  try {
    const home = tempDir("od-doctor-");
    mkdirSync(join(home, "state"), { recursive: true });
    writeFileSync(
      join(home, "state", ".retired.json"),
      JSON.stringify({ "glm-4.7:cloud": { text: "glm-4.7 was retired", at: Date.now() } }),
    );
    const { code, report } = await doctorJson({ baseUrl: emu.url, home });
    assert.equal(code, 1, "no usable default model");
    const models = check(report, "models").details?.models as { name: string; tools: boolean }[];
    assert.deepEqual(models.map((m) => [m.name, m.tools]), [["gemma3:4b", false], [
      "glm-4.7:cloud",
      true,
    ]]);
    const retired = check(report, "models.retired");
    assert.equal(retired.status, "warn");
    assert.match(retired.summary, /glm-4\.7:cloud/);
    const def = check(report, "model.default");
    assert.equal(def.status, "fail");
    assert.equal(def.required, true);

    // Naming the tool-less model as default fails with the reason.
    const named = await doctorJson({
      baseUrl: emu.url,
      home,
      userConfig: { defaultModel: "gemma3:4b" },
    });
    assert.match(check(named.report, "model.default").summary, /does not support tools/);
  } finally {
    await emu.close();
  }
});

Deno.test("doctor and doctor --probe: model names, versions and answers from the backend are shown escaped", async () => {
  const emu = await startOllamaEmulator({
    models: [{ name: EVIL_MODEL }, { name: "qwen3:8b" }],
    version: EVIL_VERSION,
    chatScript: () => ({ kind: "text", text: EVIL_SAID }),
    script: () => ({ kind: "text", text: EVIL_SAID }),
  });
  try {
    const run = await doctor({ baseUrl: emu.url });
    assertEscaped(run.stdout);
    assert.ok(line(run.stdout, "Ollama").includes("Ollama 0.34.1\\033]0;pwned\\a at "), run.stdout);
    assert.ok(line(run.stdout, "Models").includes(`with tools: ${EVIL_SHOWN}, qwen3:8b`));
    // The model table under it: one row per model, its column sized to what is shown.
    const rows = run.stdout.split("\n").filter((l) => / {2}local, tools/.test(l));
    assert.deepEqual(rows.map((l) => l.trim()), [
      `${EVIL_SHOWN}  local, tools, context 32768`,
      `${"qwen3:8b".padEnd(EVIL_SHOWN.length)}  local, tools, context 32768`,
    ]);

    const probe = await doctor({ baseUrl: emu.url, args: ["--probe", "--timeout", "30"] });
    assertEscaped(probe.stdout);
    assert.match(
      probe.stdout,
      new RegExp(`^ {2}${RegExp.escape(EVIL_SHOWN)} +no call +no call `, "m"),
    );
    assert.ok(
      probe.stdout.includes(
        `  ${EVIL_SHOWN}: native: answered without a call: "fine\\033[2J\\342\\201\\246 PASS all good"`,
      ),
      probe.stdout,
    );
  } finally {
    await emu.close();
  }
});

Deno.test("doctor: backends are probed with their key; failures count only for the native engine", async () => {
  const seen: (string | null)[] = [];
  const api = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, (req) => {
    seen.push(req.headers.get("authorization"));
    if (new URL(req.url).pathname !== "/v1/models") return new Response("no", { status: 404 });
    if (req.headers.get("authorization") !== "Bearer sekrit") {
      return Response.json({ error: { message: "invalid api key" } }, { status: 401 });
    }
    return Response.json({ object: "list", data: [{ id: "m1", object: "model" }] });
  });
  const emu = await startOllamaEmulator({ models: GOOD_MODELS });
  const gone = await startOllamaEmulator();
  const goneUrl = gone.url;
  await gone.close();
  try {
    const remote = `http://127.0.0.1:${api.addr.port}`;
    const userConfig = {
      defaultModel: "glm-5:cloud",
      backends: {
        remote: { url: remote, kind: "openai", apiKeyEnv: "OD_TEST_KEY" },
        down: { url: goneUrl, kind: "ollama" },
      },
    };
    const withKey = await doctorJson({
      baseUrl: emu.url,
      userConfig,
      env: { OD_TEST_KEY: "sekrit" },
    });
    assert.equal(seen.at(-1), "Bearer sekrit");
    const ok = check(withKey.report, "backend.remote");
    assert.equal(ok.status, "pass", JSON.stringify(ok));
    assert.match(ok.summary, /lists 1 model/);
    const down = check(withKey.report, "backend.down");
    assert.equal(down.status, "warn", "the claude engine does not need backends");
    assert.equal(down.required, false);
    assert.equal(withKey.code, 0);

    const noKey = await doctorJson({ baseUrl: emu.url, userConfig });
    assert.equal(seen.at(-1), null, "no Authorization header without the key");
    const refused = check(noKey.report, "backend.remote");
    assert.equal(refused.status, "warn");
    assert.match(refused.summary, /HTTP 401: invalid api key/);
    assert.match(refused.summary, /OD_TEST_KEY is not set/);
    assert.match(refused.hint ?? "", /Set OD_TEST_KEY/);

    // For the native engine every named backend is needed.
    const native = await doctorJson({
      baseUrl: emu.url,
      userConfig: { ...userConfig, defaultEngine: "native" },
      env: { OD_TEST_KEY: "sekrit" },
    });
    assert.equal(native.code, 1);
    assert.equal(check(native.report, "backend.down").status, "fail");
    assert.equal(check(native.report, "backend.remote").status, "pass");
  } finally {
    await emu.close();
    await api.shutdown();
  }
});

Deno.test("doctor: colour on a terminal, not with NO_COLOR or a dumb terminal, FORCE_COLOR wins", async () => {
  const emu = await startOllamaEmulator({ models: GOOD_MODELS });
  try {
    const home = tempDir("od-doctor-");
    const { command, args } = doctorCommand([]);
    const quoted = [command, ...args].map((a) => `'${a.replaceAll("'", `'\\''`)}'`).join(" ");
    const onTty = async (extra: Record<string, string>) => {
      const out = await new Deno.Command("script", {
        args: ["-qec", quoted, "/dev/null"],
        cwd: home,
        env: {
          ...doctorEnv(
            { baseUrl: emu.url, userConfig: { defaultModel: "glm-5:cloud" } },
            home,
            join(home, "state"),
          ),
          TERM: "xterm",
          ...extra,
        },
        clearEnv: true,
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).output();
      return new TextDecoder().decode(out.stdout);
    };
    const coloured = await onTty({});
    assert.ok(coloured.includes("\x1b[32mPASS\x1b[39m"), JSON.stringify(coloured.slice(0, 300)));
    const plainCases: Record<string, string>[] = [{ NO_COLOR: "1" }, { TERM: "dumb" }, {
      FORCE_COLOR: "0",
    }];
    for (const extra of plainCases) {
      const plain = await onTty(extra);
      assert.ok(plain.includes("PASS"), plain);
      assert.ok(!plain.includes("\x1b["), `${JSON.stringify(extra)}: ${plain.slice(0, 300)}`);
    }
    const forced = await onTty({ NO_COLOR: "1", FORCE_COLOR: "1" });
    assert.ok(forced.includes("\x1b[32mPASS\x1b[39m"), JSON.stringify(forced.slice(0, 300)));
  } finally {
    await emu.close();
  }
});

Deno.test("doctor --help and a bad flag", async () => {
  const help = await doctor({ args: ["--help"], baseUrl: "http://127.0.0.1:9" });
  assert.equal(help.code, 0);
  assert.match(help.stdout, /^Usage: ollama-delegate doctor \[--json\]/);
  assert.match(help.stdout, /--json/);
  const bad = await doctor({ args: ["--bogus"], baseUrl: "http://127.0.0.1:9" });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /ollama-delegate doctor: .*--bogus/);
  assert.equal(bad.stdout, "");
  assert.equal(existsSync(join(help.home, "state")), false, "--help checks nothing");
});

Deno.test("doctor: each endpoint of a pool is checked; a dead one warns while another answers", async () => {
  const a = await startOllamaEmulator({ models: GOOD_MODELS, version: "0.34.1" });
  const b = await startOllamaEmulator({ models: GOOD_MODELS });
  const dead = await startOllamaEmulator();
  await dead.close();
  try {
    const { code, report, stdout } = await doctorJson({
      env: { OLLAMA_MCP_BASE_URLS: `${dead.url},${a.url}` },
      userConfig: {
        defaultModel: "glm-5:cloud",
        backends: { gpus: { urls: [b.url, dead.url], kind: "ollama" } },
      },
    });
    assert.equal(code, 0, stdout);
    // The default Ollama is checked in depth at the first endpoint that answers.
    assert.equal(check(report, "ollama").status, "pass");
    assert.match(check(report, "ollama").summary, new RegExp(`Ollama 0\\.34\\.1 at ${a.url}`));
    const pool = check(report, "ollama.pool");
    assert.equal(pool.status, "warn");
    assert.equal(pool.summary, `1 of 2 endpoints answer; down: ${dead.url}`);
    const gpus = check(report, "backend.gpus");
    assert.equal(gpus.status, "warn");
    assert.equal(gpus.summary, `1 of 2 endpoints answer; down: ${dead.url}`);
    const text = await doctor({
      env: { OLLAMA_MCP_BASE_URLS: `${dead.url},${a.url}` },
      userConfig: { defaultModel: "glm-5:cloud" },
    });
    assert.match(
      text.stdout,
      new RegExp(`${dead.url} {2}DOWN: Cannot reach Ollama at ${dead.url}`),
    );
    assert.match(text.stdout, new RegExp(`${a.url} {2}up: Ollama 0\\.34\\.1 at ${a.url}`));
  } finally {
    await a.close();
    await b.close();
  }
});

Deno.test("doctor: every endpoint of a pool is shown with its models; the default model missing at one warns", async () => {
  const a = await startOllamaEmulator({ models: GOOD_MODELS });
  const b = await startOllamaEmulator({
    models: [{ name: "glm-5:cloud", contextLength: 131_072 }],
  });
  try {
    const opts = {
      baseUrl: a.url,
      env: { OLLAMA_MCP_BASE_URLS: `${a.url},${b.url}` },
      userConfig: { defaultModel: "qwen3:8b" },
    };
    const { code, report, stdout } = await doctorJson(opts);
    assert.equal(code, 0, stdout);
    const pool = check(report, "ollama.pool");
    assert.equal(pool.status, "warn");
    assert.equal(
      pool.summary,
      `2 of 2 endpoints answer; missing at some endpoints: qwen3:8b (at ${b.url})`,
    );
    assert.match(pool.hint ?? "", /run models derive again, which creates it on every endpoint/);
    const endpoints = pool.details?.endpoints as { url: string; models?: string[] }[];
    assert.deepEqual(endpoints.map((e) => [e.url, e.models]), [
      [a.url, ["qwen3:8b", "glm-5:cloud"]],
      [b.url, ["glm-5:cloud"]],
    ]);
    const text = await doctor(opts);
    assert.match(
      text.stdout,
      new RegExp(`${a.url} {2}up: Ollama \\S+ at ${a.url}; 2 model\\(s\\)$`, "m"),
    );
    assert.match(
      text.stdout,
      new RegExp(`${b.url} {2}up: Ollama \\S+ at ${b.url}; 1 model\\(s\\); lacks qwen3:8b$`, "m"),
    );

    // With the model on both, the pool passes.
    const both = await doctorJson({ ...opts, userConfig: { defaultModel: "glm-5:cloud" } });
    assert.equal(check(both.report, "ollama.pool").status, "pass");
    assert.equal(check(both.report, "ollama.pool").summary, "2 of 2 endpoints answer");
  } finally {
    await a.close();
    await b.close();
  }
});

Deno.test("doctor: residency local picks a local default and fails a cloud one, saying how", async () => {
  const emu = await startOllamaEmulator({ models: GOOD_MODELS });
  try {
    const picked = await doctorJson({ baseUrl: emu.url, userConfig: { residency: "local" } });
    const auto = check(picked.report, "model.default");
    assert.equal(auto.status, "pass");
    assert.equal(auto.details?.model, "qwen3:8b", "the local model, not the first cloud one");
    assert.match(auto.summary, /\(picked automatically\) .*; it runs locally$/);

    const run = await doctor({
      baseUrl: emu.url,
      userConfig: { residency: "local", defaultModel: "glm-5:cloud" },
    });
    assert.equal(run.code, 1, run.stdout);
    assert.match(
      line(run.stdout, "Default model"),
      /^ {2}FAIL .*"glm-5:cloud" \(set in defaultModel\) is refused: the default model "glm-5:cloud" \(backend "ollama"\) would leave this machine: glm-5:cloud runs on ollama\.com, through http:\/\/127\.0\.0\.1:\d+; the setting residency is "local"/,
    );
    assert.match(
      fixUnder(run.stdout, "Default model"),
      /fix: Set a local default model \(ollama-delegate config --default-model <a local model>\), or let work leave this machine \(--residency any\)/,
    );
  } finally {
    await emu.close();
  }
});

Deno.test("doctor: an Anthropic-compatible backend is checked as Ollama is: listed, model, context, tools", async () => {
  const MODEL = "Qwen/Qwen3-Coder-30B-A3B-Instruct";
  const emu = await startOllamaEmulator({ models: GOOD_MODELS });
  const good = await startOllamaEmulator({
    flavour: "vllm",
    apiKey: "sk-v",
    models: [{ name: MODEL, contextLength: 131_072 }],
  });
  const small = await startOllamaEmulator({
    flavour: "vllm",
    noToolChoice: true,
    models: [{ name: MODEL, contextLength: 8192 }],
  });
  const llama = await startOllamaEmulator({
    flavour: "llamacpp",
    models: [{ name: "coder", contextLength: 32768 }],
  });
  try {
    const { report } = await doctorJson({
      baseUrl: emu.url,
      userConfig: {
        defaultModel: MODEL,
        backends: {
          gpus: { url: good.url, kind: "anthropic", apiKeyEnv: "OD_VLLM" },
          small: { url: small.url, kind: "anthropic" },
          llama: { url: llama.url, kind: "anthropic" },
        },
      },
      env: { OD_VLLM: "sk-v" },
    });
    assert.equal(check(report, "backend.gpus").status, "pass");
    assert.equal(check(report, "backend.gpus.model").summary, `serves "${MODEL}"`);
    assert.equal(check(report, "backend.gpus.context").status, "pass");
    assert.equal(check(report, "backend.gpus.context").summary, "131072 tokens");
    assert.equal(check(report, "backend.gpus.tools").status, "pass");
    // Every request of the doctor's went to vLLM with its key; none asked for /api/*.
    assert.ok(good.requests.every((r) => r.headers.authorization === "Bearer sk-v"));
    assert.equal(good.requests.filter((r) => r.path.startsWith("/api/")).length, 0);

    const context = check(report, "backend.small.context");
    assert.equal(context.status, "warn", "backend checks are required only for native");
    assert.match(context.summary, /^8192 tokens: a coding job's conversation outgrows it/);
    const tools = check(report, "backend.small.tools");
    assert.match(tools.summary, /HTTP 400: "auto" tool choice requires --enable-auto-tool-choice/);
    assert.match(tools.hint ?? "", /--enable-auto-tool-choice --tool-call-parser/);

    // llama-server: its one model whatever the name, its context from /props.
    assert.equal(check(report, "backend.llama.model").summary, 'serves "coder"');
    assert.match(check(report, "backend.llama.context").summary, /^32768 tokens: /);
    assert.ok(llama.requests.some((r) => r.path === "/props"));
  } finally {
    for (const e of [emu, good, small, llama]) await e.close();
  }
});

Deno.test("doctor: a defaultBackend is named, and the default model is checked there, not on Ollama", async () => {
  const MODEL = "Qwen/Qwen3-Coder-30B-A3B-Instruct";
  const vllm = await startOllamaEmulator({
    flavour: "vllm",
    models: [{ name: MODEL, contextLength: 131_072 }, { name: "other" }],
  });
  const gone = await startOllamaEmulator();
  const goneUrl = gone.url;
  await gone.close();
  try {
    // No Ollama at baseUrl: with the default elsewhere, the default engine does not need it.
    const config = {
      defaultEngine: "native",
      defaultModel: MODEL,
      backends: { lms: { url: vllm.url, kind: "openai" } },
      defaultBackend: "lms",
    };
    const run = await doctorJson({ baseUrl: goneUrl, userConfig: config });
    const home = check(run.report, "backend.default");
    assert.equal(home.status, "pass");
    assert.equal(
      home.summary,
      `jobs that name no backend run on backend "lms" (kind openai, ${vllm.url}), set in ` +
        "defaultBackend",
    );
    const model = check(run.report, "model.default");
    assert.equal(model.status, "pass", JSON.stringify(model));
    assert.equal(model.required, true);
    assert.equal(model.summary, `"${MODEL}" (set in defaultModel) is listed by backend "lms"`);
    assert.equal(run.report.checks.filter((c) => c.id === "model.context").length, 0);
    assert.equal(check(run.report, "ollama").required, false);
    assert.equal(run.code, 0, run.stdout);

    // A default model the backend does not serve fails what the default engine needs.
    const missing = await doctorJson({
      baseUrl: goneUrl,
      userConfig: { ...config, defaultModel: "qwen3:8b" },
    });
    const absent = check(missing.report, "model.default");
    assert.equal(absent.status, "fail");
    assert.equal(
      absent.summary,
      `"qwen3:8b" is not among the 2 model(s) backend "lms" lists (${MODEL}, other)`,
    );
    assert.equal(missing.code, 1);

    // The claude engine on an Anthropic-compatible default: its checks are the needed ones.
    const claude = await doctor({
      baseUrl: goneUrl,
      userConfig: {
        defaultModel: MODEL,
        backends: { gpus: { url: vllm.url, kind: "anthropic" } },
        defaultBackend: "gpus",
      },
    });
    assert.match(line(claude.stdout, "Default backend"), /backend "gpus" \(kind anthropic, /);
    assert.match(line(claude.stdout, "Default model"), /is listed by backend "gpus"/);
    assert.match(line(claude.stdout, "Backend gpus tool use"), /accepts a request with tools/);
    assert.match(line(claude.stdout, "Ollama"), /^ {2}WARN /);
    assert.equal(claude.code, 0, claude.stdout);
  } finally {
    await vllm.close();
  }
});
