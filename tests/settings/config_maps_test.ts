import assert from "node:assert/strict";
import { ConfigUsageError } from "../../src/settings/config_cmd.ts";
import { bytes, put, readJson, run, withSandbox } from "./helpers.ts";

Deno.test("config --backend adds, replaces and --remove-backend removes a backend", async () => {
  await withSandbox((sb) => {
    put(sb.userFile, { keep: 1 });
    let r = run(sb, [
      "--backend",
      "vllm=gpu:8000",
      "--api-key-env",
      "VLLM_KEY",
      "--backend-max",
      "2",
    ]);
    assert.equal(r.code, 0);
    assert.deepEqual(readJson(sb.userFile), {
      keep: 1,
      backends: {
        vllm: { url: "gpu:8000", kind: "openai", apiKeyEnv: "VLLM_KEY", maxConcurrent: 2 },
      },
    });
    assert.ok(
      r.lines.some((l) => l.includes("vllm=http://gpu:8000 (openai, key from $VLLM_KEY, max 2)")),
      r.lines.join("\n"),
    );
    r = run(sb, ["--backend", "lab=http://lab:11434", "--backend-kind", "ollama"]);
    assert.deepEqual(Object.keys((readJson(sb.userFile) as { backends: object }).backends), [
      "vllm",
      "lab",
    ]);
    r = run(sb, ["--remove-backend", "vllm"]);
    assert.deepEqual((readJson(sb.userFile) as { backends: object }).backends, {
      lab: { url: "http://lab:11434", kind: "ollama" },
    });
  });
});

Deno.test("config refuses bad backends and user-only settings in the project file", async () => {
  await withSandbox((sb) => {
    put(sb.userFile, { backends: { a: { url: "http://a:1" } } });
    const before = bytes(sb.userFile);
    const cases: Array<[string[], RegExp]> = [
      [["--backend", "noequals"], /write name=url/],
      [["--backend", "x=ftp://h"], /scheme "ftp"/],
      [["--backend", "bad name=http://h"], /backend name/],
      [["--backend", "x=http://h", "--backend-kind", "grpc"], /at x\.kind/],
      [["--backend", "x=http://h", "--api-key-env", "A-B"], /environment variable name/],
      [["--api-key-env", "K"], /go with --backend/],
      [["--remove-backend", "zzz"], /not there \(a\)/],
      [["--sandbox", "off", "--scope", "project"], /Cannot set sandbox in the project file/],
      [["--backend", "x=http://h", "--scope", "project"], /Cannot set backends in the project/],
      [["--sandbox", "maybe"], /Cannot set sandbox/],
      [["--engine", "gpt"], /Cannot set defaultEngine/],
      [["--isolation", "box"], /Cannot set defaultIsolation/],
      [["--price", "m=cheap"], /model=input\/output/],
      [["--retain-days=-1"], /Cannot set retainDays/],
      [
        ["--default-backend", "b"],
        /^Cannot leave defaultBackend on a backend that is not there: "b" is not one of your backends \("ollama", "a"\); name one of them, or add "b" to backends\. Nothing was written$/,
      ],
      [
        ["--default-backend", "a", "--scope", "project"],
        /Cannot set defaultBackend in the project/,
      ],
    ];
    for (const [argv, message] of cases) {
      assert.throws(() => run(sb, argv), (e: unknown) => {
        assert.ok(e instanceof ConfigUsageError, `${argv.join(" ")}: ${e}`);
        assert.match(e.message, message, argv.join(" "));
        return true;
      });
      assert.deepEqual(bytes(sb.userFile), before, argv.join(" "));
      assert.equal(bytes(sb.projectFile), null);
    }
  });
});

Deno.test("config --default-backend names one of your backends; removing it is refused", async () => {
  await withSandbox((sb) => {
    put(sb.userFile, { backends: { lms: { url: "http://lms:1234", kind: "openai" } } });
    const r = run(sb, ["--default-backend", "lms"]);
    assert.equal(r.code, 0);
    assert.equal((readJson(sb.userFile) as { defaultBackend: string }).defaultBackend, "lms");
    const before = bytes(sb.userFile);
    assert.throws(
      () => run(sb, ["--remove-backend", "lms"]),
      /Cannot leave defaultBackend on a backend that is not there: "lms" is not one of your backends \("ollama"\)/,
    );
    assert.deepEqual(bytes(sb.userFile), before);
  });
});

Deno.test("config --price, --engine, --sandbox and --retain-days write their settings", async () => {
  await withSandbox((sb) => {
    const r = run(sb, [
      "--price",
      "qwen3-coder:480b-cloud=0.5/2",
      "--engine",
      "native",
      "--isolation",
      "worktree",
      "--sandbox",
      "off",
      "--retain-days",
      "7",
    ]);
    assert.equal(r.code, 0);
    assert.deepEqual(readJson(sb.userFile), {
      defaultEngine: "native",
      defaultIsolation: "worktree",
      sandbox: "off",
      retainDays: 7,
      pricing: { "qwen3-coder:480b-cloud": { inputPerMillion: 0.5, outputPerMillion: 2 } },
    });
    run(sb, ["--remove-price", "qwen3-coder:480b-cloud"]);
    assert.deepEqual((readJson(sb.userFile) as { pricing: object }).pricing, {});
  });
});

Deno.test("config --agent-model maps a Claude Code subagent's name or alias to a model, in the user file only", async () => {
  await withSandbox((sb) => {
    let r = run(sb, ["--agent-model", "sonnet=qwen3-coder:30b"]);
    assert.equal(r.code, 0);
    r = run(sb, ["--agent-model", "code-reviewer = qwen3:8b"]);
    assert.deepEqual(readJson(sb.userFile), {
      claudeAgentModels: { sonnet: "qwen3-coder:30b", "code-reviewer": "qwen3:8b" },
    });
    assert.ok(
      r.lines.some((l) => l.includes("sonnet") && l.includes("qwen3-coder:30b")),
      r.lines.join("\n"),
    );
    run(sb, ["--remove-agent-model", "sonnet"]);
    assert.deepEqual(readJson(sb.userFile), { claudeAgentModels: { "code-reviewer": "qwen3:8b" } });
    for (
      const [argv, message] of [
        [["--agent-model", "sonnet"], /write name=model/],
        [["--agent-model", "a b=qwen3:8b"], /is not a valid name/],
        [["--agent-model", "x=has space"], /cannot contain spaces/],
        [["--agent-model", "x=qwen3:8b", "--scope", "project"], /claudeAgentModels in the project/],
      ] as Array<[string[], RegExp]>
    ) {
      assert.throws(() => run(sb, argv), (e: unknown) => {
        assert.ok(e instanceof ConfigUsageError, String(e));
        assert.match(e.message, message);
        return true;
      });
    }
  });
});
