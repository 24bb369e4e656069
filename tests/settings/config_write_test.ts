import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { ConfigUsageError } from "../../src/settings/config_cmd.ts";
import { bytes, put, readJson, run, type Sandbox, withSandbox } from "./helpers.ts";

const posix = Deno.build.os !== "windows";

/** Asserts the argv is refused with `message` and the file is byte-for-byte as before. */
function refusedKeeping(
  sb: Sandbox,
  file: string,
  argv: string[],
  message: string | RegExp,
  env: Record<string, string> = {},
) {
  const before = bytes(file);
  assert.throws(() => run(sb, argv, env), (e: unknown) => {
    assert.ok(e instanceof ConfigUsageError, String(e));
    if (typeof message === "string") assert.equal(e.message, message);
    else assert.match(e.message, message);
    return true;
  });
  assert.deepEqual(bytes(file), before, `${argv.join(" ")} changed ${file}`);
}

/** The refusal, up to its advice (tests/settings/config_cmd_test.ts checks the advice). */
function strandMessage(model: string, list: string): RegExp {
  const escaped = `Cannot save: default model "${model}" is not in the allowed list (${list})`
    .replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`^${escaped}[.,] .*allow.* or --default-model auto$`);
}

Deno.test("config --scope project writes ./ollama-mcp.config.json only", async () => {
  await withSandbox((sb) => {
    const { code, lines } = run(sb, ["--scope", "project", "--mode", "off"]);
    assert.equal(code, 0);
    assert.deepEqual(readJson(sb.projectFile), { delegationMode: "off" });
    assert.equal(existsSync(sb.userFile), false);
    assert.equal(lines[0], `Wrote ${sb.projectFile}`);
    assert.ok(lines.includes("  delegationMode         off   [project]"));
  });
});

Deno.test("config writes to $OLLAMA_MCP_CONFIG when it is set", async () => {
  await withSandbox((sb) => {
    const custom = join(sb.root, "cfg", "mine.json");
    const { lines } = run(sb, ["--mode", "off"], { OLLAMA_MCP_CONFIG: custom });
    assert.deepEqual(readJson(custom), { delegationMode: "off" });
    assert.equal(existsSync(sb.userFile), false);
    assert.equal(lines[0], `Wrote ${custom}`);
  });
});

Deno.test("config keeps unknown keys and key order already in the file", async () => {
  await withSandbox((sb) => {
    put(sb.userFile, '{"custom":{"nested":[1,"x"]},"delegationMode":"off","maxConcurrent":2}');
    run(sb, ["--mode", "auto", "--job-timeout", "2h"]);
    const text = new TextDecoder().decode(bytes(sb.userFile)!);
    assert.equal(
      text,
      JSON.stringify(
        {
          custom: { nested: [1, "x"] },
          delegationMode: "auto",
          maxConcurrent: 2,
          jobTimeoutMs: 7_200_000,
        },
        null,
        2,
      ) + "\n",
    );
  });
});

Deno.test("config writes atomically: creates the directory, leaves no temp file, mode 0600", async () => {
  await withSandbox((sb) => {
    assert.equal(existsSync(join(sb.home, ".ollama-mcp")), false);
    run(sb, ["--mode", "auto"]);
    run(sb, ["--max-concurrent", "3"]);
    assert.deepEqual(readdirSync(join(sb.home, ".ollama-mcp")), ["config.json"]);
    assert.deepEqual(readJson(sb.userFile), { delegationMode: "auto", maxConcurrent: 3 });
    if (posix) assert.equal(statSync(sb.userFile).mode & 0o777, 0o600);
  });
});

Deno.test("stranding: narrowing the allowlist past the default is refused, file unchanged", async () => {
  await withSandbox((sb) => {
    put(sb.userFile, '{ "defaultModel": "x",  "keep": true }\n');
    refusedKeeping(sb, sb.userFile, ["--allow", "a,b"], strandMessage("x", "a, b"));
    refusedKeeping(sb, sb.userFile, ["--allow", "a", "--mode", "off"], strandMessage("x", "a"));
  });
});

Deno.test("stranding: a default outside the allowlist is refused and no file is created", async () => {
  await withSandbox((sb) => {
    refusedKeeping(
      sb,
      sb.userFile,
      ["--allow", "a,b", "--default-model", "c"],
      strandMessage("c", "a, b"),
    );
    assert.equal(existsSync(sb.userFile), false);
    put(sb.userFile, { allowedModels: ["a", "b"], defaultModel: "a" });
    refusedKeeping(sb, sb.userFile, ["--default-model", "c"], strandMessage("c", "a, b"));
  });
});

Deno.test("stranding: a project allowlist counts when writing the user file", async () => {
  await withSandbox((sb) => {
    put(sb.projectFile, { allowedModels: ["p"] });
    refusedKeeping(sb, sb.userFile, ["--default-model", "u"], strandMessage("u", "p"));
    assert.equal(existsSync(sb.userFile), false);
  });
});

Deno.test("stranding: --default-model auto, --allow all or a matching default are accepted", async () => {
  await withSandbox((sb) => {
    put(sb.userFile, { defaultModel: "x" });
    assert.equal(run(sb, ["--allow", "a,b", "--default-model", "auto"]).code, 0);
    assert.deepEqual(readJson(sb.userFile), { defaultModel: "", allowedModels: ["a", "b"] });
    put(sb.userFile, { defaultModel: "x", allowedModels: ["x"] });
    run(sb, ["--allow", "all"]);
    assert.deepEqual(readJson(sb.userFile), { defaultModel: "x", allowedModels: [] });
    run(sb, ["--allow", "a,b", "--default-model", "b"]);
    assert.deepEqual(readJson(sb.userFile), { defaultModel: "b", allowedModels: ["a", "b"] });
  });
});

Deno.test("stranding: llama3 and llama3:latest count as the same model", async () => {
  await withSandbox((sb) => {
    assert.equal(run(sb, ["--allow", "llama3:latest", "--default-model", "llama3"]).code, 0);
    assert.deepEqual(readJson(sb.userFile), {
      allowedModels: ["llama3:latest"],
      defaultModel: "llama3",
    });
    assert.equal(run(sb, ["--allow", "llama3,qwen3"]).code, 0);
    assert.equal(run(sb, ["--default-model", "qwen3:latest"]).code, 0);
    assert.deepEqual(readJson(sb.userFile), {
      allowedModels: ["llama3", "qwen3"],
      defaultModel: "qwen3:latest",
    });
    refusedKeeping(
      sb,
      sb.userFile,
      ["--default-model", "llama3:8b"],
      strandMessage("llama3:8b", "llama3, qwen3"),
    );
  });
});

Deno.test("stranding is not checked when neither allow nor default changes", async () => {
  await withSandbox((sb) => {
    put(sb.userFile, { allowedModels: ["a"], defaultModel: "x" });
    assert.equal(run(sb, ["--mode", "auto"]).code, 0);
    assert.deepEqual(readJson(sb.userFile), {
      allowedModels: ["a"],
      defaultModel: "x",
      delegationMode: "auto",
    });
  });
});

Deno.test("a corrupt target file is refused and left byte-for-byte unchanged", async () => {
  await withSandbox((sb) => {
    put(sb.userFile, '{"delegationMode": "off",');
    refusedKeeping(
      sb,
      sb.userFile,
      ["--mode", "auto"],
      new RegExp(
        `^Cannot change ${
          RegExp.escape(sb.userFile)
        } \\(not valid JSON: .+\\)\\. Fix or remove it first; nothing was written$`,
      ),
    );
    put(sb.projectFile, "[1,2]\n");
    refusedKeeping(
      sb,
      sb.projectFile,
      ["--scope", "project", "--mode", "auto"],
      `Cannot change ${sb.projectFile} (must hold a JSON object). Fix or remove it first; nothing was written`,
    );
    assert.equal(new TextDecoder().decode(bytes(sb.projectFile)!), "[1,2]\n");
  });
});

Deno.test("an unreadable target (a directory) is refused", async () => {
  await withSandbox((sb) => {
    mkdirSync(sb.userFile, { recursive: true });
    assert.throws(() => run(sb, ["--mode", "auto"]), (e: unknown) => {
      assert.ok(e instanceof ConfigUsageError);
      assert.match(e.message, /^Cannot change .+ \(cannot read: .+\)\. Fix or remove it first/);
      return true;
    });
    assert.equal(statSync(sb.userFile).isDirectory(), true);
  });
});

Deno.test("a corrupt file in the other scope does not block a write", async () => {
  await withSandbox((sb) => {
    put(sb.projectFile, "not json");
    const { code, lines } = run(sb, ["--mode", "auto"]);
    assert.equal(code, 0);
    assert.deepEqual(readJson(sb.userFile), { delegationMode: "auto" });
    assert.equal(new TextDecoder().decode(bytes(sb.projectFile)!), "not json");
    assert.ok(
      lines.some((l) =>
        l.startsWith(
          `  Invalid setting ${sb.projectFile} (project layer): file ignored: not valid JSON`,
        )
      ),
    );
  });
});

Deno.test("config notes when an environment variable overrides the written value", async () => {
  await withSandbox((sb) => {
    const { lines } = run(sb, ["--max-concurrent", "8", "--mode", "auto"], {
      OLLAMA_MCP_MAX_CONCURRENT: "2",
    });
    assert.deepEqual(readJson(sb.userFile), { delegationMode: "auto", maxConcurrent: 8 });
    assert.deepEqual(lines.filter((l) => l.startsWith("Note:")), [
      "Note: OLLAMA_MCP_MAX_CONCURRENT in the environment overrides maxConcurrent; the file value is not in force.",
    ]);
    assert.ok(lines.includes("  maxConcurrent          2   [env]"));
    const host = run(sb, ["--base-url", "gpu:1"], { OLLAMA_HOST: "other:2" });
    assert.deepEqual(host.lines.filter((l) => l.startsWith("Note:")), [
      "Note: OLLAMA_HOST in the environment overrides baseUrl; the file value is not in force.",
    ]);
  });
});

Deno.test("config notes when the project file wins over a user-scope write", async () => {
  await withSandbox((sb) => {
    put(sb.projectFile, { delegationMode: "off" });
    const { lines } = run(sb, ["--mode", "auto"]);
    assert.deepEqual(lines.filter((l) => l.startsWith("Note:")), [
      `Note: ${sb.projectFile} sets delegationMode too and wins over the user file.`,
    ]);
    assert.equal(
      run(sb, ["--scope", "project", "--mode", "auto"]).lines.some((l) => l.startsWith("Note:")),
      false,
    );
  });
});
