import assert from "node:assert/strict";
import { FIELDS } from "../../src/settings/fields.ts";
import { MAX_TIMER_MS, type SettingKey } from "../../src/settings/types.ts";
import { formatProblems, loadSettings } from "../../src/settings/load.ts";
import { put, withSandbox } from "./helpers.ts";

function accepts(key: SettingKey, value: unknown): boolean {
  return FIELDS.find((f) => f.key === key)!.schema.safeParse(value).success;
}

Deno.test("ranges: jobTimeoutMs 1000..2^31-1, maxConcurrent 1..64, wait 0..600", () => {
  assert.equal(MAX_TIMER_MS, 2 ** 31 - 1);
  const table: Array<[SettingKey, unknown[], unknown[]]> = [
    ["jobTimeoutMs", [1000, 60_000, 2 ** 31 - 1], [0, -1, 999, 2 ** 31, 1500.5, "60000"]],
    ["maxConcurrent", [1, 4, 64], [0, -1, 65, 2.5, "4"]],
    ["defaultWaitSeconds", [0, 1, 600], [-1, 601, 0.5]],
    ["maxInlineChars", [200, 10_000_000], [199, 10_000_001]],
  ];
  for (const [key, good, bad] of table) {
    for (const v of good) assert.equal(accepts(key, v), true, `${key}=${v} should pass`);
    for (const v of bad) assert.equal(accepts(key, v), false, `${key}=${v} should fail`);
  }
});

Deno.test("schemas: enums, model names and paths", () => {
  for (const m of ["off", "ondemand", "auto"]) assert.equal(accepts("delegationMode", m), true);
  assert.equal(accepts("delegationMode", "always"), false);
  for (const m of ["auto", "acceptEdits", "bypassPermissions", "manual", "default", "plan"]) {
    assert.equal(accepts("defaultPermissionMode", m), true, m);
  }
  assert.equal(accepts("defaultPermissionMode", "yolo"), false);
  assert.equal(accepts("defaultModel", ""), true);
  assert.equal(accepts("defaultModel", "llama3"), true);
  assert.equal(accepts("defaultModel", "a b"), false);
  assert.equal(accepts("defaultModel", "a,b"), false);
  assert.equal(accepts("allowedModels", ["a", "b:7b"]), true);
  assert.equal(accepts("allowedModels", ["a", ""]), false);
  assert.equal(accepts("allowedModels", "a,b"), false);
  assert.equal(accepts("stateDir", "  "), false);
  assert.equal(accepts("baseUrl", "ftp://x"), false);
});

Deno.test("env: out-of-range numbers are reported and the default stays", async () => {
  await withSandbox(({ home, cwd }) => {
    const cases: Array<[string, string, string, string]> = [
      ["OLLAMA_MCP_JOB_TIMEOUT_MS", "0", "0 is not valid: must be at least 1000", "1800000"],
      [
        "OLLAMA_MCP_JOB_TIMEOUT_MS",
        "2147483648",
        "2147483648 is not valid: must be at most 2147483647",
        "1800000",
      ],
      ["OLLAMA_MCP_MAX_CONCURRENT", "0", "0 is not valid: must be at least 1", "4"],
      ["OLLAMA_MCP_MAX_CONCURRENT", "65", "65 is not valid: must be at most 64", "4"],
      [
        "OLLAMA_MCP_MAX_CONCURRENT",
        "1.5",
        "1.5 is not valid: must be a whole number from 1 to 64",
        "4",
      ],
      ["OLLAMA_MCP_DEFAULT_WAIT", "601", "601 is not valid: must be at most 600", "0"],
      ["OLLAMA_MCP_DEFAULT_WAIT", "-1", "-1 is not valid: must be at least 0", "0"],
      ["OLLAMA_MCP_DEFAULT_WAIT", "ten", '"ten" is not a number', "0"],
    ];
    for (const [name, value, reason, using] of cases) {
      const r = loadSettings({ env: { [name]: value }, cwd, home });
      const key = FIELDS.find((f) => f.env.includes(name))!.key;
      assert.deepEqual(r.problems, [
        { layer: "env", where: name, key, reason, using: `${using} from default` },
      ], `${name}=${value}`);
      assert.equal(String(r.settings[key]), using);
      assert.equal(r.sources[key], "default");
      assert.deepEqual(r.layers[3], { name: "env", status: "unused", keys: [] });
    }
  });
});

Deno.test("env: bad OLLAMA_HOST values are errors, not guesses", async () => {
  await withSandbox(({ home, cwd }) => {
    const cases: Array<[string, string]> = [
      ["ftp://h", 'Cannot use scheme "ftp": only http and https are supported'],
      ["h:99999", 'Cannot use port "99999": it must be a number from 1 to 65535'],
      ["http://u:p@h", "Cannot use a URL with credentials in it; Ollama takes none"],
    ];
    for (const [host, message] of cases) {
      const r = loadSettings({ env: { OLLAMA_HOST: host }, cwd, home });
      assert.deepEqual(r.problems, [{
        layer: "env",
        where: "OLLAMA_HOST",
        key: "baseUrl",
        reason: `${JSON.stringify(host)} is not valid: ${message}`,
        using: '"http://127.0.0.1:11434" from default',
      }]);
      assert.equal(r.settings.baseUrl, "http://127.0.0.1:11434");
    }
  });
});

Deno.test("an invalid value keeps the lower layer's value, not the default", async () => {
  await withSandbox(({ home, cwd, userFile, projectFile }) => {
    put(userFile, { delegationMode: "off", jobTimeoutMs: 5000 });
    put(projectFile, { delegationMode: "sometimes", jobTimeoutMs: 0 });
    const r = loadSettings({ env: { OLLAMA_MCP_DELEGATION_MODE: "nope" }, cwd, home });
    assert.equal(r.settings.delegationMode, "off");
    assert.equal(r.sources.delegationMode, "user");
    assert.equal(r.settings.jobTimeoutMs, 5000);
    assert.equal(r.sources.jobTimeoutMs, "user");
    assert.deepEqual(r.problems, [
      {
        layer: "project",
        where: projectFile,
        key: "delegationMode",
        reason: '"sometimes" is not one of off, ondemand, auto',
        using: '"off" from user',
      },
      {
        layer: "project",
        where: projectFile,
        key: "jobTimeoutMs",
        reason: "0 is not valid: must be at least 1000",
        using: "5000 from user",
      },
      {
        layer: "env",
        where: "OLLAMA_MCP_DELEGATION_MODE",
        key: "delegationMode",
        reason: '"nope" is not one of off, ondemand, auto',
        using: '"off" from user',
      },
    ]);
    assert.deepEqual(r.layers[2]?.keys, [], "the project layer set nothing validly");
  });
});

Deno.test("file values of the wrong type are reported with the expected type", async () => {
  await withSandbox(({ home, cwd, userFile }) => {
    put(userFile, {
      maxConcurrent: "4",
      allowedModels: "a,b",
      baseUrl: 5,
      defaultWaitSeconds: 2.5,
      defaultModel: ["x"],
    });
    const r = loadSettings({ env: {}, cwd, home });
    assert.deepEqual(r.problems.map((p) => [p.key, p.reason, p.using]), [
      ["maxConcurrent", '"4" is not a number', "4 from default"],
      ["allowedModels", '"a,b" is not an array', "[] from default"],
      ["baseUrl", "5 is not a string", '"http://127.0.0.1:11434" from default'],
      [
        "defaultWaitSeconds",
        "2.5 is not valid: must be a whole number from 0 to 600",
        "0 from default",
      ],
      ["defaultModel", '["x"] is not a string', '"" from default'],
    ]);
  });
});

Deno.test("a corrupt file is reported and skipped; the other layers still apply", async () => {
  await withSandbox(({ home, cwd, userFile, projectFile }) => {
    put(userFile, '{"delegationMode": "off",');
    put(projectFile, "[1, 2]");
    const r = loadSettings({ env: { OLLAMA_MCP_MAX_CONCURRENT: "9" }, cwd, home });
    assert.equal(r.settings.delegationMode, "ondemand");
    assert.equal(r.settings.maxConcurrent, 9);
    assert.equal(r.problems.length, 2);
    const [u, p] = r.problems;
    assert.equal(u?.layer, "user");
    assert.equal(u?.where, userFile);
    assert.equal(u?.key, "*");
    assert.match(u?.reason ?? "", /^file ignored: not valid JSON: /);
    assert.equal(u?.using, undefined);
    assert.deepEqual(p, {
      layer: "project",
      where: projectFile,
      key: "*",
      reason: "file ignored: must hold a JSON object",
    });
    assert.equal(r.layers[1]?.status, "invalid");
    assert.match(r.layers[1]?.error ?? "", /^not valid JSON: /);
    assert.deepEqual(r.layers[2], {
      name: "project",
      path: projectFile,
      status: "invalid",
      keys: [],
      error: "must hold a JSON object",
    });
  });
});

Deno.test("unknown keys in a file are reported; known keys still apply", async () => {
  await withSandbox(({ home, cwd, projectFile }) => {
    put(projectFile, '{"delegationMod": "auto", "maxConcurrent": 2, "__proto__": {"x": 1}}');
    const r = loadSettings({ env: {}, cwd, home });
    assert.equal(r.settings.maxConcurrent, 2);
    assert.equal(r.settings.delegationMode, "ondemand");
    assert.deepEqual(r.problems, [
      {
        layer: "project",
        where: projectFile,
        key: "delegationMod",
        reason: "unknown setting, ignored",
      },
      {
        layer: "project",
        where: projectFile,
        key: "__proto__",
        reason: "unknown setting, ignored",
      },
    ]);
    assert.deepEqual(r.layers[2]?.keys, ["maxConcurrent"]);
    assert.equal(({} as Record<string, unknown>).x, undefined, "no prototype pollution");
  });
});

Deno.test("formatProblems: one line each with layer, where, key, reason and what is used", async () => {
  await withSandbox(({ home, cwd, userFile, projectFile }) => {
    put(userFile, "[]");
    put(projectFile, { jobTimeoutMs: 5, extra: true });
    const r = loadSettings({ env: { OLLAMA_MCP_JOB_TIMEOUT_MS: "2147483648" }, cwd, home });
    assert.deepEqual(formatProblems(r.problems), [
      `Invalid setting ${userFile} (user layer): file ignored: must hold a JSON object`,
      `Invalid setting jobTimeoutMs in ${projectFile} (project layer): 5 is not valid: ` +
      `must be at least 1000; using 1800000 from default`,
      `Invalid setting extra in ${projectFile} (project layer): unknown setting, ignored`,
      "Invalid setting jobTimeoutMs in OLLAMA_MCP_JOB_TIMEOUT_MS (env layer): 2147483648 is not " +
      "valid: must be at most 2147483647; using 1800000 from default",
    ]);
  });
});

Deno.test("problems say what wins when a later layer overrides the bad value", async () => {
  await withSandbox(({ home, cwd, projectFile }) => {
    put(projectFile, { maxConcurrent: 100 });
    const r = loadSettings({ env: { OLLAMA_MCP_MAX_CONCURRENT: "6" }, cwd, home });
    assert.equal(r.settings.maxConcurrent, 6);
    assert.equal(r.problems[0]?.using, "6 from env");
    assert.equal(r.problems[0]?.reason, "100 is not valid: must be at most 64");
  });
});
