/**
 * Pools in the settings: a backend's `urls`, the default Ollama's `baseUrls`
 * (OLLAMA_MCP_BASE_URLS), and the `config` flags that write them.
 */
import assert from "node:assert/strict";
import { ConfigUsageError } from "../../src/settings/config_cmd.ts";
import { loadSettings } from "../../src/settings/load.ts";
import { bytes, put, readJson, run, withSandbox } from "./helpers.ts";

Deno.test("pools: a backend lists urls (strings or with their own limit); url is the first", async () => {
  await withSandbox(({ home, cwd, userFile }) => {
    put(userFile, {
      backends: {
        gpus: {
          urls: ["gpu1:11434", { url: "http://gpu2:11434/v1", maxConcurrent: 2 }],
          kind: "ollama",
          maxConcurrent: 1,
        },
      },
      baseUrls: ["box1", { url: "box2:11435", maxConcurrent: 3 }],
    });
    const r = loadSettings({ env: {}, cwd, home });
    assert.deepEqual(r.problems, []);
    assert.deepEqual(r.settings.backends.gpus, {
      url: "http://gpu1:11434",
      urls: [{ url: "http://gpu1:11434" }, { url: "http://gpu2:11434", maxConcurrent: 2 }],
      kind: "ollama",
      maxConcurrent: 1,
    });
    assert.deepEqual(r.settings.baseUrls, [
      { url: "http://box1:11434" },
      { url: "http://box2:11435", maxConcurrent: 3 },
    ]);
  });
});

Deno.test("pools: a backend with both url and urls, neither, an empty or repeated list, is refused", async () => {
  await withSandbox(({ home, cwd, userFile }) => {
    const cases: Array<[unknown, RegExp]> = [
      [
        { url: "http://a:1", urls: ["http://b:1"] },
        /url \(one endpoint\) or urls \(a pool\), not both/,
      ],
      [{ kind: "openai" }, /needs url \(one endpoint\) or urls/],
      [{ urls: [] }, /urls lists no endpoint/],
      [{ urls: ["a:1", "http://a:1/v1"] }, /lists http:\/\/a:1 twice/],
      [{ urls: [{ url: "a:1", maxConcurrent: 0 }] }, /at least 1/],
    ];
    for (const [spec, message] of cases) {
      put(userFile, { backends: { x: spec } });
      const r = loadSettings({ env: {}, cwd, home });
      const problem = r.problems.find((p) => p.key === "backends");
      assert.ok(problem, JSON.stringify(spec));
      assert.match(problem.reason, message, JSON.stringify(spec));
      assert.deepEqual(r.settings.backends, {}, "an invalid value is not used");
    }
    const env = loadSettings({
      env: { OLLAMA_MCP_BASE_URLS: '[{"url":"a:1","maxConcurrent":2},"b:2"]' },
      cwd,
      home,
    });
    assert.deepEqual(env.settings.baseUrls, [
      { url: "http://a:1", maxConcurrent: 2 },
      { url: "http://b:2" },
    ]);
  });
});

Deno.test("config --backend name=url,url writes a pool; --base-urls sets and clears the default's", async () => {
  await withSandbox((sb) => {
    let r = run(sb, ["--backend", "gpus=gpu1:8000, gpu2:8000", "--backend-max", "1"]);
    assert.equal(r.code, 0);
    assert.deepEqual(readJson(sb.userFile), {
      backends: { gpus: { urls: ["gpu1:8000", "gpu2:8000"], kind: "openai", maxConcurrent: 1 } },
    });
    assert.ok(
      r.lines.some((l) => l.includes("gpus=http://gpu1:8000,http://gpu2:8000 (openai, max 1)")),
      r.lines.join("\n"),
    );
    r = run(sb, ["--base-urls", "box1,box2:11435"]);
    assert.deepEqual((readJson(sb.userFile) as { baseUrls: unknown }).baseUrls, [
      "box1",
      "box2:11435",
    ]);
    assert.ok(
      r.lines.some((l) => /baseUrls +http:\/\/box1:11434, http:\/\/box2:11435 +\[user\]/.test(l)),
      r.lines.join("\n"),
    );
    r = run(sb, ["--base-urls", "none"]);
    assert.equal((readJson(sb.userFile) as { baseUrls?: unknown }).baseUrls, undefined);
    const before = bytes(sb.userFile);
    for (
      const [argv, message] of [
        [["--base-urls", "a:1,a:1"], /lists http:\/\/a:1 twice/],
        [["--base-urls", "a:1", "--scope", "project"], /Cannot set baseUrls in the project file/],
      ] as Array<[string[], RegExp]>
    ) {
      assert.throws(() => run(sb, argv), (e: unknown) => {
        assert.ok(e instanceof ConfigUsageError, String(e));
        assert.match(e.message, message);
        return true;
      });
      assert.deepEqual(bytes(sb.userFile), before);
    }
  });
});
