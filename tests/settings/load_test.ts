import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { defaultSettings, FIELDS } from "../../src/settings/fields.ts";
import { loadSettings, readSettingsFile } from "../../src/settings/load.ts";
import { put, withSandbox } from "./helpers.ts";

Deno.test("fields: every env name and default, as users' existing settings and scripts spell them", () => {
  const table = Object.fromEntries(FIELDS.map((f) => [f.key, [f.env, f.default]]));
  assert.deepEqual(table, {
    delegationMode: [["OLLAMA_MCP_DELEGATION_MODE"], "ondemand"],
    allowedModels: [["OLLAMA_MCP_ALLOWED_MODELS"], []],
    defaultModel: [["OLLAMA_MCP_DEFAULT_MODEL"], ""],
    residency: [["OLLAMA_MCP_RESIDENCY"], "any"],
    // acceptEdits, not auto: auto may be unavailable off Anthropic.
    defaultPermissionMode: [["OLLAMA_MCP_PERMISSION_MODE"], "acceptEdits"],
    baseUrl: [["OLLAMA_MCP_BASE_URL", "OLLAMA_HOST"], "http://127.0.0.1:11434"],
    baseUrls: [["OLLAMA_MCP_BASE_URLS"], []],
    claudeBin: [["OLLAMA_MCP_CLAUDE_BIN"], "claude"],
    claudeConfigDir: [["OLLAMA_MCP_CLAUDE_CONFIG_DIR"], "~/.ollama-mcp/claude"],
    stateDir: [["OLLAMA_MCP_STATE_DIR"], "~/.ollama-mcp/jobs"],
    jobTimeoutMs: [["OLLAMA_MCP_JOB_TIMEOUT_MS"], 1_800_000],
    maxInlineChars: [["OLLAMA_MCP_MAX_INLINE_CHARS"], 60_000],
    maxConcurrent: [["OLLAMA_MCP_MAX_CONCURRENT"], 4],
    defaultWaitSeconds: [["OLLAMA_MCP_DEFAULT_WAIT"], 0],
    defaultEngine: [["OLLAMA_MCP_DEFAULT_ENGINE"], "claude"],
    defaultIsolation: [["OLLAMA_MCP_DEFAULT_ISOLATION"], "none"],
    backends: [["OLLAMA_MCP_BACKENDS"], {}],
    defaultBackend: [["OLLAMA_MCP_DEFAULT_BACKEND"], ""],
    sandbox: [["OLLAMA_MCP_SANDBOX"], "on"],
    pricing: [["OLLAMA_MCP_PRICING"], {}],
    retainDays: [["OLLAMA_MCP_RETAIN_DAYS"], 30],
    workspaceRoots: [["OLLAMA_MCP_WORKSPACE_ROOTS"], []],
    toolchainPaths: [["OLLAMA_MCP_TOOLCHAIN_PATHS"], []],
    allowSecretFiles: [["OLLAMA_MCP_ALLOW_SECRET_FILES"], []],
    sandboxMaxProcesses: [["OLLAMA_MCP_SANDBOX_MAX_PROCESSES"], 512],
    sandboxMaxMemoryMb: [["OLLAMA_MCP_SANDBOX_MAX_MEMORY_MB"], 2048],
    sandboxMaxFileMb: [["OLLAMA_MCP_SANDBOX_MAX_FILE_MB"], 1024],
    sandboxTmpMb: [["OLLAMA_MCP_SANDBOX_TMP_MB"], 512],
    maxContext: [["OLLAMA_MCP_MAX_CONTEXT"], 0],
    keepAlive: [["OLLAMA_MCP_KEEP_ALIVE"], ""],
    claudeTools: [["OLLAMA_MCP_CLAUDE_TOOLS"], ["Bash", "Read", "Edit", "Write", "Glob", "Grep"]],
    claudeHarness: [["OLLAMA_MCP_CLAUDE_HARNESS"], "lean"],
    reviewGate: [["OLLAMA_MCP_REVIEW_GATE"], "off"],
    reviewGateSeverity: [["OLLAMA_MCP_REVIEW_GATE_SEVERITY"], "high"],
    reviewGateAgreement: [["OLLAMA_MCP_REVIEW_GATE_AGREEMENT"], 1],
    reviewGateRounds: [["OLLAMA_MCP_REVIEW_GATE_ROUNDS"], 2],
    reviewGateModels: [["OLLAMA_MCP_REVIEW_GATE_MODELS"], []],
    reviewGateSeconds: [["OLLAMA_MCP_REVIEW_GATE_TIMEOUT"], 300],
    dailyBudgetUsd: [["OLLAMA_MCP_DAILY_BUDGET_USD"], {}],
    dailyBudgetTokens: [["OLLAMA_MCP_DAILY_BUDGET_TOKENS"], {}],
    claudeAgentModels: [["OLLAMA_MCP_CLAUDE_AGENT_MODELS"], {}],
    orchestratorPrice: [["OLLAMA_MCP_ORCHESTRATOR_PRICE"], "opus"],
    permissionAskSeconds: [["OLLAMA_MCP_PERMISSION_ASK_SECONDS"], 120],
  });
});

Deno.test("defaultSettings returns a fresh copy each time", () => {
  const a = defaultSettings();
  a.allowedModels.push("mutated");
  assert.deepEqual(defaultSettings().allowedModels, []);
});

Deno.test("loadSettings: no files and no env gives the defaults with ~ expanded", async () => {
  await withSandbox(({ home, cwd, userFile, projectFile }) => {
    const r = loadSettings({ env: {}, cwd, home });
    assert.deepEqual(r.settings, {
      delegationMode: "ondemand",
      allowedModels: [],
      defaultModel: "",
      residency: "any",
      defaultPermissionMode: "acceptEdits",
      baseUrl: "http://127.0.0.1:11434",
      baseUrls: [],
      claudeBin: "claude",
      claudeConfigDir: join(home, ".ollama-mcp", "claude"),
      stateDir: join(home, ".ollama-mcp", "jobs"),
      jobTimeoutMs: 1_800_000,
      maxInlineChars: 60_000,
      maxConcurrent: 4,
      defaultWaitSeconds: 0,
      defaultEngine: "claude",
      defaultIsolation: "none",
      backends: {},
      defaultBackend: "",
      sandbox: "on",
      pricing: {},
      retainDays: 30,
      workspaceRoots: [],
      toolchainPaths: [],
      allowSecretFiles: [],
      sandboxMaxProcesses: 512,
      sandboxMaxMemoryMb: 2048,
      sandboxMaxFileMb: 1024,
      sandboxTmpMb: 512,
      maxContext: 0,
      keepAlive: "",
      claudeTools: ["Bash", "Read", "Edit", "Write", "Glob", "Grep"],
      claudeHarness: "lean",
      reviewGate: "off",
      reviewGateSeverity: "high",
      reviewGateAgreement: 1,
      reviewGateRounds: 2,
      reviewGateModels: [],
      reviewGateSeconds: 300,
      dailyBudgetUsd: {},
      dailyBudgetTokens: {},
      claudeAgentModels: {},
      orchestratorPrice: "opus",
      permissionAskSeconds: 120,
    });
    assert.ok(Object.values(r.sources).every((s) => s === "default"));
    assert.deepEqual(r.problems, []);
    assert.deepEqual(r.locations, { userFile, projectFile });
    assert.deepEqual(r.layers, [
      { name: "default", status: "loaded", keys: [] },
      { name: "user", path: userFile, status: "missing", keys: [] },
      { name: "project", path: projectFile, status: "missing", keys: [] },
      { name: "env", status: "unused", keys: [] },
    ]);
  });
});

Deno.test("loadSettings: later layers win: default < user < project < env", async () => {
  await withSandbox(({ home, cwd, userFile, projectFile }) => {
    put(userFile, { delegationMode: "auto", maxConcurrent: 3, defaultWaitSeconds: 5 });
    put(projectFile, { delegationMode: "off", maxConcurrent: 2 });
    const env = { OLLAMA_MCP_DELEGATION_MODE: "ondemand" };
    const r = loadSettings({ env, cwd, home });
    assert.equal(r.settings.delegationMode, "ondemand");
    assert.equal(r.sources.delegationMode, "env");
    assert.equal(r.settings.maxConcurrent, 2);
    assert.equal(r.sources.maxConcurrent, "project");
    assert.equal(r.settings.defaultWaitSeconds, 5);
    assert.equal(r.sources.defaultWaitSeconds, "user");
    assert.equal(r.settings.jobTimeoutMs, 1_800_000);
    assert.equal(r.sources.jobTimeoutMs, "default");
    assert.deepEqual(r.layers.map((l) => [l.name, l.status, l.keys]), [
      ["default", "loaded", []],
      ["user", "loaded", ["delegationMode", "maxConcurrent", "defaultWaitSeconds"]],
      ["project", "loaded", ["delegationMode", "maxConcurrent"]],
      ["env", "loaded", ["OLLAMA_MCP_DELEGATION_MODE"]],
    ]);
    assert.deepEqual(r.problems, []);
  });
});

Deno.test("loadSettings: OLLAMA_MCP_CONFIG names the user file instead of ~/.ollama-mcp", async () => {
  await withSandbox(({ root, home, cwd, userFile }) => {
    put(userFile, { delegationMode: "off" });
    const custom = join(root, "elsewhere", "mine.json");
    put(custom, { delegationMode: "auto" });
    const r = loadSettings({ env: { OLLAMA_MCP_CONFIG: custom }, cwd, home });
    assert.equal(r.locations.userFile, custom);
    assert.equal(r.settings.delegationMode, "auto");
    assert.equal(r.sources.delegationMode, "user");
    assert.equal(r.layers[1]?.path, custom);
  });
});

Deno.test("loadSettings: every OLLAMA_MCP_* variable sets its field", async () => {
  await withSandbox(({ root, home, cwd }) => {
    const env = {
      OLLAMA_MCP_DELEGATION_MODE: "auto",
      OLLAMA_MCP_ALLOWED_MODELS: " a, b:7b ,,c ",
      OLLAMA_MCP_DEFAULT_MODEL: " b:7b ",
      OLLAMA_MCP_RESIDENCY: " local",
      OLLAMA_MCP_PERMISSION_MODE: "plan",
      OLLAMA_MCP_BASE_URL: "gpu:9000",
      OLLAMA_MCP_BASE_URLS: "gpu1, gpu2:11435",
      OLLAMA_MCP_CLAUDE_BIN: join(root, "bin", "claude"),
      OLLAMA_MCP_CLAUDE_CONFIG_DIR: "~/cc",
      OLLAMA_MCP_STATE_DIR: "~/x",
      OLLAMA_MCP_JOB_TIMEOUT_MS: " 60000 ",
      OLLAMA_MCP_MAX_INLINE_CHARS: "5000",
      OLLAMA_MCP_MAX_CONCURRENT: "8",
      OLLAMA_MCP_DEFAULT_WAIT: "30",
      OLLAMA_MCP_DEFAULT_ENGINE: "native",
      OLLAMA_MCP_DEFAULT_ISOLATION: " worktree",
      OLLAMA_MCP_BACKENDS: '{"gpu":{"url":"gpu:8000","apiKeyEnv":"GPU_KEY"}}',
      OLLAMA_MCP_DEFAULT_BACKEND: " gpu ",
      OLLAMA_MCP_SANDBOX: "off",
      OLLAMA_MCP_PRICING: '{"b:7b":{"inputPerMillion":1,"outputPerMillion":2}}',
      OLLAMA_MCP_RETAIN_DAYS: "7",
      OLLAMA_MCP_WORKSPACE_ROOTS: "~/code:/srv/work",
      OLLAMA_MCP_TOOLCHAIN_PATHS: "~/.sdkman:/opt/jdk",
      OLLAMA_MCP_ALLOW_SECRET_FILES: ".env.test, fixture.pem",
      OLLAMA_MCP_SANDBOX_MAX_PROCESSES: "64",
      OLLAMA_MCP_SANDBOX_MAX_MEMORY_MB: "512",
      OLLAMA_MCP_SANDBOX_MAX_FILE_MB: "16",
      OLLAMA_MCP_SANDBOX_TMP_MB: "32",
      OLLAMA_MCP_MAX_CONTEXT: "65536",
      OLLAMA_MCP_KEEP_ALIVE: "30m",
      OLLAMA_MCP_CLAUDE_TOOLS: "Read, Grep",
      OLLAMA_MCP_CLAUDE_HARNESS: "full",
      OLLAMA_MCP_REVIEW_GATE: " on",
      OLLAMA_MCP_REVIEW_GATE_SEVERITY: "Medium",
      OLLAMA_MCP_REVIEW_GATE_AGREEMENT: "2",
      OLLAMA_MCP_REVIEW_GATE_ROUNDS: "3",
      OLLAMA_MCP_REVIEW_GATE_MODELS: "a, b:7b",
      OLLAMA_MCP_REVIEW_GATE_TIMEOUT: "120",
      OLLAMA_MCP_DAILY_BUDGET_USD: '{"openrouter": 2.5}',
      OLLAMA_MCP_DAILY_BUDGET_TOKENS: '{"ollama": 100000}',
      OLLAMA_MCP_CLAUDE_AGENT_MODELS: "code-reviewer=qwen3-coder:30b, sonnet=b:7b",
      OLLAMA_MCP_ORCHESTRATOR_PRICE: "3/15",
      OLLAMA_MCP_PERMISSION_ASK_SECONDS: "30",
    };
    const r = loadSettings({ env, cwd, home });
    assert.deepEqual(r.settings, {
      delegationMode: "auto",
      allowedModels: ["a", "b:7b", "c"],
      defaultModel: "b:7b",
      residency: "local",
      defaultPermissionMode: "plan",
      baseUrl: "http://gpu:9000",
      baseUrls: [{ url: "http://gpu1:11434" }, { url: "http://gpu2:11435" }],
      claudeBin: join(root, "bin", "claude"),
      claudeConfigDir: join(home, "cc"),
      stateDir: join(home, "x"),
      jobTimeoutMs: 60_000,
      maxInlineChars: 5000,
      maxConcurrent: 8,
      defaultWaitSeconds: 30,
      defaultEngine: "native",
      defaultIsolation: "worktree",
      backends: { gpu: { url: "http://gpu:8000", kind: "openai", apiKeyEnv: "GPU_KEY" } },
      defaultBackend: "gpu",
      sandbox: "off",
      pricing: { "b:7b": { inputPerMillion: 1, outputPerMillion: 2 } },
      retainDays: 7,
      workspaceRoots: [join(home, "code"), "/srv/work"],
      toolchainPaths: [join(home, ".sdkman"), "/opt/jdk"],
      allowSecretFiles: [".env.test", "fixture.pem"],
      sandboxMaxProcesses: 64,
      sandboxMaxMemoryMb: 512,
      sandboxMaxFileMb: 16,
      sandboxTmpMb: 32,
      maxContext: 65536,
      keepAlive: "30m",
      claudeTools: ["Read", "Grep"],
      claudeHarness: "full",
      reviewGate: "on",
      reviewGateSeverity: "medium",
      reviewGateAgreement: 2,
      reviewGateRounds: 3,
      reviewGateModels: ["a", "b:7b"],
      reviewGateSeconds: 120,
      dailyBudgetUsd: { openrouter: 2.5 },
      dailyBudgetTokens: { ollama: 100000 },
      claudeAgentModels: { "code-reviewer": "qwen3-coder:30b", sonnet: "b:7b" },
      orchestratorPrice: "3/15",
      permissionAskSeconds: 30,
    });
    assert.ok(Object.values(r.sources).every((s) => s === "env"));
    assert.deepEqual(r.problems, []);
    assert.equal(r.layers[3]?.keys.length, 43);
  });
});

Deno.test("loadSettings: OLLAMA_MCP_BASE_URL wins over OLLAMA_HOST", async () => {
  await withSandbox(({ home, cwd }) => {
    const r = loadSettings({
      env: { OLLAMA_MCP_BASE_URL: "http://a:1", OLLAMA_HOST: "b:2" },
      cwd,
      home,
    });
    assert.equal(r.settings.baseUrl, "http://a:1");
    assert.deepEqual(r.layers[3]?.keys, ["OLLAMA_MCP_BASE_URL"]);
  });
});

Deno.test("loadSettings: OLLAMA_HOST forms are normalised", async () => {
  await withSandbox(({ home, cwd }) => {
    const cases: Array<[string, string]> = [
      ["0.0.0.0", "http://127.0.0.1:11434"],
      ["gpu", "http://gpu:11434"],
      ["gpu:9000", "http://gpu:9000"],
      [":9000", "http://127.0.0.1:9000"],
      ["[::1]", "http://[::1]:11434"],
      ["http://h:1/v1/", "http://h:1"],
    ];
    for (const [host, expected] of cases) {
      const r = loadSettings({ env: { OLLAMA_HOST: host }, cwd, home });
      assert.equal(r.settings.baseUrl, expected, `OLLAMA_HOST=${host}`);
      assert.equal(r.sources.baseUrl, "env");
      assert.deepEqual(r.problems, []);
    }
  });
});

Deno.test("loadSettings: empty variables count as unset", async () => {
  await withSandbox(({ home, cwd, projectFile }) => {
    put(projectFile, { maxConcurrent: 3 });
    const r = loadSettings({
      env: { OLLAMA_MCP_BASE_URL: "", OLLAMA_HOST: "gpu", OLLAMA_MCP_MAX_CONCURRENT: "" },
      cwd,
      home,
    });
    assert.equal(r.settings.baseUrl, "http://gpu:11434");
    assert.deepEqual(r.layers[3]?.keys, ["OLLAMA_HOST"]);
    assert.equal(r.settings.maxConcurrent, 3);
    assert.equal(r.sources.maxConcurrent, "project");
  });
});

Deno.test("loadSettings: baseUrl from a file is normalised too", async () => {
  await withSandbox(({ home, cwd, userFile }) => {
    put(userFile, { baseUrl: "0.0.0.0:8000/v1" });
    assert.equal(loadSettings({ env: {}, cwd, home }).settings.baseUrl, "http://127.0.0.1:8000");
  });
});

Deno.test("loadSettings: ~ in path settings expands to home, relative paths to cwd", async () => {
  await withSandbox(({ home, cwd, userFile }) => {
    put(userFile, { stateDir: "~/x", claudeConfigDir: "rel/cc", claudeBin: "~/bin/claude" });
    const r = loadSettings({ env: {}, cwd, home });
    assert.equal(r.settings.stateDir, join(home, "x"));
    assert.equal(r.settings.claudeConfigDir, join(cwd, "rel", "cc"));
    assert.equal(r.settings.claudeBin, join(home, "bin", "claude"));
    assert.ok(!r.settings.stateDir.includes("~"), "never a literal ./~");
  });
});

Deno.test("loadSettings: claudeBin stays a bare name for PATH lookup; a relative path resolves", async () => {
  await withSandbox(({ home, cwd }) => {
    const bare = loadSettings({ env: { OLLAMA_MCP_CLAUDE_BIN: "claude-dev" }, cwd, home });
    assert.equal(bare.settings.claudeBin, "claude-dev");
    const rel = loadSettings({ env: { OLLAMA_MCP_CLAUDE_BIN: "./bin/claude" }, cwd, home });
    assert.equal(rel.settings.claudeBin, join(cwd, "bin", "claude"));
  });
});

Deno.test("loadSettings: overrides replace a file's content without reading it", async () => {
  await withSandbox(({ home, cwd, projectFile }) => {
    put(projectFile, "{ corrupt");
    const r = loadSettings({
      env: {},
      cwd,
      home,
      overrides: { project: { delegationMode: "off" } },
    });
    assert.equal(r.settings.delegationMode, "off");
    assert.equal(r.sources.delegationMode, "project");
    assert.deepEqual(r.problems, []);
  });
});

Deno.test("readSettingsFile: missing, empty, object, array, scalar, bad JSON, directory", async () => {
  await withSandbox(({ root }) => {
    const p = (name: string) => join(root, name);
    assert.deepEqual(readSettingsFile(p("none.json")), { kind: "missing" });
    put(p("empty.json"), "  \n");
    assert.deepEqual(readSettingsFile(p("empty.json")), { kind: "object", value: {} });
    put(p("obj.json"), '{"a":1}');
    assert.deepEqual(readSettingsFile(p("obj.json")), { kind: "object", value: { a: 1 } });
    for (const text of ["[]", '[{"a":1}]', "null", "42", '"s"', "true"]) {
      put(p("x.json"), text);
      assert.deepEqual(
        readSettingsFile(p("x.json")),
        { kind: "invalid", error: "must hold a JSON object" },
        text,
      );
    }
    put(p("bad.json"), '{"a":');
    const bad = readSettingsFile(p("bad.json"));
    assert.equal(bad.kind, "invalid");
    assert.match(bad.kind === "invalid" ? bad.error : "", /^not valid JSON: /);
    mkdirSync(p("dir.json"));
    const dir = readSettingsFile(p("dir.json"));
    assert.equal(dir.kind, "invalid");
    assert.match(dir.kind === "invalid" ? dir.error : "", /^cannot read: /);
  });
});

Deno.test("loadSettings: sandbox and backends are not honoured from the project file", async () => {
  await withSandbox(({ home, cwd, userFile, projectFile }) => {
    put(userFile, { backends: { a: { url: "http://a:1" } } });
    put(projectFile, {
      sandbox: "off",
      backends: { evil: { url: "http://evil:1", apiKeyEnv: "OPENAI_API_KEY" } },
      maxConcurrent: 2,
    });
    const r = loadSettings({ env: {}, cwd, home });
    assert.equal(r.settings.sandbox, "on");
    assert.deepEqual(Object.keys(r.settings.backends), ["a"]);
    assert.equal(r.settings.maxConcurrent, 2);
    assert.deepEqual(
      r.problems.map((p) => [p.key, p.layer]),
      [["sandbox", "project"], ["backends", "project"]],
    );
    assert.match(r.problems[0]!.reason, /delegates can write/);
  });
});

Deno.test("loadSettings: defaultBackend comes from the user file or env, never the project file", async () => {
  await withSandbox(({ home, cwd, userFile, projectFile }) => {
    put(userFile, { backends: { vllm: { url: "http://gpu:8000", kind: "openai" } } });
    // A delegate that writes the project file must not send the next jobs to another backend.
    put(projectFile, { defaultBackend: "vllm" });
    const r = loadSettings({ env: {}, cwd, home });
    assert.equal(r.settings.defaultBackend, "");
    assert.deepEqual(r.problems.map((p) => [p.key, p.layer]), [["defaultBackend", "project"]]);
    assert.match(r.problems[0]!.reason, /delegates can write/);

    put(userFile, {
      backends: { vllm: { url: "http://gpu:8000", kind: "openai" } },
      defaultBackend: "vllm",
    });
    put(projectFile, {});
    const user = loadSettings({ env: {}, cwd, home });
    assert.equal(user.settings.defaultBackend, "vllm");
    assert.equal(user.sources.defaultBackend, "user");
    assert.deepEqual(user.problems, []);
  });
});

Deno.test("loadSettings: a defaultBackend that names no backend is a problem naming it and the backends", async () => {
  await withSandbox(({ home, cwd, userFile }) => {
    put(userFile, {
      backends: { vllm: { url: "http://gpu:8000", kind: "openai" } },
      defaultBackend: "vlm",
    });
    const r = loadSettings({ env: {}, cwd, home });
    assert.equal(r.settings.defaultBackend, "", "the Ollama at baseUrl stays the default");
    assert.equal(r.sources.defaultBackend, "default");
    assert.equal(r.problems.length, 1);
    assert.equal(r.problems[0]!.key, "defaultBackend");
    assert.equal(r.problems[0]!.where, userFile);
    assert.equal(
      r.problems[0]!.reason,
      '"vlm" is not one of your backends ("ollama", "vllm"); name one of them, or add "vlm" ' +
        "to backends",
    );
    assert.deepEqual(r.layers.find((l) => l.name === "user")?.keys, ["backends"]);

    // From the environment: the variable is named; a name that is not a backend name at all
    // is refused by its form.
    const env = loadSettings({ env: { OLLAMA_MCP_DEFAULT_BACKEND: "nope" }, cwd, home });
    assert.equal(env.problems.at(-1)!.where, "OLLAMA_MCP_DEFAULT_BACKEND");
    assert.match(env.problems.at(-1)!.reason, /^"nope" is not one of your backends/);
    assert.equal(env.settings.defaultBackend, "");
    const odd = loadSettings({ env: { OLLAMA_MCP_DEFAULT_BACKEND: "a/b" }, cwd, home });
    const form = odd.problems.find((p) => p.layer === "env");
    assert.equal(form?.key, "defaultBackend");
    assert.match(form!.reason, /^"a\/b" is not valid: a backend name is letters/);

    // "ollama" is the Ollama at baseUrl, as for a call's backend.
    const ollama = loadSettings({ env: { OLLAMA_MCP_DEFAULT_BACKEND: "ollama" }, cwd, home });
    assert.equal(ollama.settings.defaultBackend, "ollama");
    assert.deepEqual(ollama.problems.filter((p) => p.key === "defaultBackend"), []);
  });
});

Deno.test("loadSettings: daily budgets come from the user file, never the project file", async () => {
  await withSandbox(({ home, cwd, userFile, projectFile }) => {
    put(userFile, { dailyBudgetUsd: { ollama: 1 } });
    put(projectFile, { dailyBudgetUsd: { ollama: 1000 }, dailyBudgetTokens: { ollama: 1e12 } });
    const r = loadSettings({ env: {}, cwd, home });
    assert.deepEqual(r.settings.dailyBudgetUsd, { ollama: 1 });
    assert.deepEqual(r.settings.dailyBudgetTokens, {});
    assert.deepEqual(
      r.problems.map((p) => [p.key, p.layer]),
      [["dailyBudgetUsd", "project"], ["dailyBudgetTokens", "project"]],
    );
  });
});

Deno.test("loadSettings: a backend with a bad url or key variable is reported", async () => {
  await withSandbox(({ home, cwd }) => {
    const r = loadSettings({
      env: { OLLAMA_MCP_BACKENDS: '{"x":{"url":"ftp://x","apiKeyEnv":"A-B"}}' },
      cwd,
      home,
    });
    assert.deepEqual(r.settings.backends, {});
    assert.equal(r.problems[0]?.key, "backends");
  });
});

Deno.test("loadSettings: the project file cannot redirect delegates or loosen their permissions", async () => {
  await withSandbox(({ home, cwd, projectFile }) => {
    put(projectFile, {
      claudeBin: "./evil.sh",
      claudeConfigDir: "./cc",
      stateDir: "./forged",
      baseUrl: "http://attacker:1",
      retainDays: 0,
      defaultPermissionMode: "bypassPermissions",
      maxConcurrent: 2,
    });
    const r = loadSettings({ env: {}, cwd, home });
    assert.equal(r.settings.claudeBin, "claude");
    assert.equal(r.settings.baseUrl, "http://127.0.0.1:11434");
    assert.equal(r.settings.stateDir, join(home, ".ollama-mcp", "jobs"));
    assert.equal(r.settings.retainDays, 30);
    assert.equal(r.settings.defaultPermissionMode, "acceptEdits");
    assert.equal(r.settings.maxConcurrent, 2);
    assert.deepEqual(r.problems.map((p) => p.key).sort(), [
      "baseUrl",
      "claudeBin",
      "claudeConfigDir",
      "defaultPermissionMode",
      "retainDays",
      "stateDir",
    ]);
    put(projectFile, { defaultPermissionMode: "plan" });
    assert.equal(loadSettings({ env: {}, cwd, home }).settings.defaultPermissionMode, "plan");
  });
});
