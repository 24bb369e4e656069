import assert from "node:assert/strict";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { CONFIG_HELP, ConfigUsageError } from "../../src/settings/config_cmd.ts";
import { parseDurationMs } from "../../src/settings/config_flags.ts";
import { bytes, put, readJson, run, type Sandbox, withSandbox } from "./helpers.ts";

/** Asserts the argv is refused with exactly `message` and that no settings file appears. */
function refused(sb: Sandbox, argv: string[], message: string) {
  assert.throws(() => run(sb, argv), (e: unknown) => {
    assert.ok(e instanceof ConfigUsageError, `${argv.join(" ")}: ${e}`);
    assert.equal(e.message, message);
    return true;
  });
  assert.equal(existsSync(sb.userFile), false, `${argv.join(" ")} wrote the user file`);
  assert.equal(existsSync(sb.projectFile), false, `${argv.join(" ")} wrote the project file`);
}

Deno.test("parseDurationMs: plain milliseconds, and a ConfigUsageError naming the forms", () => {
  assert.equal(parseDurationMs("5000"), 5000);
  assert.equal(parseDurationMs("90s"), 90_000);
  for (const bad of ["", "-5s", "1e3", "s", "1h30m", "7 parsecs"]) {
    assert.throws(() => parseDurationMs(bad), (e: unknown) => {
      assert.ok(e instanceof ConfigUsageError);
      assert.equal(
        e.message,
        `Cannot use job timeout "${bad}": write a duration like 90s, 30m, 2h, 7d or 2w, or ` +
          `milliseconds`,
      );
      return true;
    });
  }
});

Deno.test("config --help and -h print the help and write nothing", async () => {
  await withSandbox((sb) => {
    for (const argv of [["--help"], ["-h"], ["--help", "--mode", "auto"]]) {
      const { code, lines } = run(sb, argv);
      assert.equal(code, 0);
      assert.deepEqual(lines, [CONFIG_HELP]);
    }
    assert.equal(existsSync(sb.userFile), false);
    for (
      const flag of ["--mode", "--allow", "--default-model", "--permission-mode", "--base-url"]
    ) {
      assert.ok(CONFIG_HELP.includes(flag), flag);
    }
    for (const flag of ["--claude-bin", "--state-dir", "--job-timeout", "--max-concurrent"]) {
      assert.ok(CONFIG_HELP.includes(flag), flag);
    }
    assert.ok(CONFIG_HELP.includes("--scope <user|project>") && CONFIG_HELP.includes("--json"));
  });
});

Deno.test("config with no flags shows settings, sources and layers, and writes nothing", async () => {
  await withSandbox((sb) => {
    put(sb.projectFile, { maxConcurrent: 2 });
    const { code, lines } = run(sb, [], { OLLAMA_MCP_DELEGATION_MODE: "auto" });
    assert.equal(code, 0);
    assert.equal(lines[0], "Settings in force:");
    assert.ok(lines.includes("  delegationMode         auto   [env]"));
    assert.ok(lines.includes("  allowedModels          (all)   [default]"));
    assert.ok(lines.includes("  defaultModel           (auto)   [default]"));
    assert.ok(lines.includes("  defaultBackend         (the Ollama at baseUrl)   [default]"));
    assert.ok(lines.includes("  maxConcurrent          2   [project]"));
    assert.ok(
      lines.includes(
        `  stateDir               ${join(sb.home, ".ollama-mcp", "jobs")}   [default]`,
      ),
    );
    assert.deepEqual(lines.slice(lines.indexOf("Layers (later wins):")), [
      "Layers (later wins):",
      "  default loaded",
      `  user    missing ${sb.userFile}`,
      `  project loaded ${sb.projectFile}: maxConcurrent`,
      "  env     loaded: OLLAMA_MCP_DELEGATION_MODE",
    ]);
    assert.equal(existsSync(sb.userFile), false);
  });
});

Deno.test("config lists problems, including a corrupt file, without failing", async () => {
  await withSandbox((sb) => {
    put(sb.userFile, "[]");
    put(sb.projectFile, { maxConcurrent: 0, nonsense: 1 });
    const { code, lines } = run(sb, []);
    assert.equal(code, 0);
    assert.ok(lines.includes(`  user    invalid ${sb.userFile} (must hold a JSON object)`));
    assert.deepEqual(lines.slice(lines.indexOf("Problems:")), [
      "Problems:",
      `  Invalid setting ${sb.userFile} (user layer): file ignored: must hold a JSON object`,
      `  Invalid setting maxConcurrent in ${sb.projectFile} (project layer): 0 is not valid: ` +
      "must be at least 1; using 4 from default",
      `  Invalid setting nonsense in ${sb.projectFile} (project layer): unknown setting, ignored`,
    ]);
  });
});

Deno.test("config --json prints settings, sources, layers and problems", async () => {
  await withSandbox((sb) => {
    put(sb.userFile, { stateDir: "~/x", bogus: true });
    const { code, lines } = run(sb, ["--json"], { OLLAMA_HOST: "0.0.0.0" });
    assert.equal(code, 0);
    assert.equal(lines.length, 1);
    const out = JSON.parse(lines[0]!) as Record<string, Record<string, unknown>>;
    assert.deepEqual(Object.keys(out), ["settings", "sources", "layers", "problems"]);
    assert.equal(out.settings!.stateDir, join(sb.home, "x"));
    assert.equal(out.settings!.baseUrl, "http://127.0.0.1:11434");
    assert.equal(out.sources!.stateDir, "user");
    assert.equal(out.sources!.baseUrl, "env");
    assert.deepEqual(out.problems, [
      { layer: "user", where: sb.userFile, key: "bogus", reason: "unknown setting, ignored" },
    ]);
  });
});

Deno.test("config: each flag writes its field to the user file, as typed", async () => {
  await withSandbox((sb) => {
    const claude = join(sb.root, "bin", "claude");
    const { code, lines } = run(sb, [
      "--mode=auto",
      "--allow",
      "a, b:7b,,c",
      "--default-model",
      " b:7b ",
      "--permission-mode",
      "plan",
      "--base-url",
      "gpu:9000/v1",
      "--claude-bin",
      claude,
      "--state-dir",
      "~/jobs",
      "--job-timeout",
      "90s",
      "--max-concurrent",
      "8",
    ]);
    assert.equal(code, 0);
    const expected = {
      delegationMode: "auto",
      allowedModels: ["a", "b:7b", "c"],
      defaultModel: "b:7b",
      defaultPermissionMode: "plan",
      baseUrl: "gpu:9000/v1",
      claudeBin: claude,
      stateDir: "~/jobs",
      jobTimeoutMs: 90_000,
      maxConcurrent: 8,
    };
    assert.equal(
      new TextDecoder().decode(bytes(sb.userFile)!),
      JSON.stringify(expected, null, 2) + "\n",
    );
    assert.equal(lines[0], `Wrote ${sb.userFile}`);
    assert.ok(lines.includes("  baseUrl                http://gpu:9000   [user]"));
    assert.ok(lines.includes(`  stateDir               ${join(sb.home, "jobs")}   [user]`));
    assert.equal(
      lines.at(-1),
      "Restart your Claude Code session so the server re-reads its settings.",
    );
    assert.equal(existsSync(sb.projectFile), false);
  });
});

Deno.test("config: --job-timeout units and --allow all / --default-model auto", async () => {
  await withSandbox((sb) => {
    const cases: Array<[string, number]> = [
      ["90s", 90_000],
      ["30m", 1_800_000],
      ["2h", 7_200_000],
      ["2500", 2500],
      ["1500ms", 1500],
      // Days and weeks, as --older-than takes them (refused before one parser served both).
      ["7d", 604_800_000],
      ["2w", 1_209_600_000],
      ["1.5h", 5_400_000],
      ["5 MIN", 300_000],
    ];
    for (const [text, ms] of cases) {
      run(sb, ["--job-timeout", text]);
      assert.deepEqual(readJson(sb.userFile), { jobTimeoutMs: ms }, text);
    }
    put(sb.userFile, { allowedModels: ["a"], defaultModel: "a" });
    run(sb, ["--allow", "all", "--default-model", "auto"]);
    assert.deepEqual(readJson(sb.userFile), { allowedModels: [], defaultModel: "" });
  });
});

Deno.test("config: an invalid flag value is a ConfigUsageError and writes nothing", async () => {
  await withSandbox((sb) => {
    const cases: Array<[string[], string]> = [
      [
        ["--mode", "sometimes"],
        'Cannot set delegationMode from --mode "sometimes": must be one of off, ondemand, auto',
      ],
      [
        ["--max-concurrent", "0"],
        "Cannot set maxConcurrent from --max-concurrent 0: must be at least 1",
      ],
      [
        ["--max-concurrent", "65"],
        "Cannot set maxConcurrent from --max-concurrent 65: must be at most 64",
      ],
      [
        ["--max-concurrent", "1.5"],
        "Cannot set maxConcurrent from --max-concurrent 1.5: must be a whole number from 1 to 64",
      ],
      [
        ["--max-concurrent=-1"],
        "Cannot set maxConcurrent from --max-concurrent -1: must be at least 1",
      ],
      [
        ["--max-concurrent", "abc"],
        'Cannot set maxConcurrent from --max-concurrent "abc": must be a number, not a string',
      ],
      [
        ["--job-timeout", "0"],
        "Cannot set jobTimeoutMs from --job-timeout 0: must be at least 1000 (1s to 2147483647 ms)",
      ],
      [
        ["--job-timeout", "2147483648"],
        "Cannot set jobTimeoutMs from --job-timeout 2147483648: must be at most 2147483647 (1s to 2147483647 ms)",
      ],
      [
        ["--job-timeout", "25d"],
        "Cannot set jobTimeoutMs from --job-timeout 2160000000: must be at most 2147483647 (1s to 2147483647 ms)",
      ],
      [
        ["--job-timeout", "7 fortnights"],
        'Cannot use job timeout "7 fortnights": write a duration like 90s, 30m, 2h, 7d or 2w, or milliseconds',
      ],
      [
        ["--base-url", "ftp://x"],
        'Cannot set baseUrl from --base-url "ftp://x": Cannot use scheme "ftp": only http and https are supported',
      ],
      [
        ["--base-url", "h:99999"],
        'Cannot set baseUrl from --base-url "h:99999": Cannot use port "99999": it must be a number from 1 to 65535',
      ],
      [
        ["--base-url", "http://u:p@h"],
        'Cannot set baseUrl from --base-url "http://u:p@h": Cannot use a URL with credentials in it; Ollama takes none',
      ],
      [
        ["--allow", "a b"],
        'Cannot set allowedModels from --allow ["a b"]: a model name cannot contain spaces or commas',
      ],
      [
        ["--default-model", "a,b"],
        'Cannot set defaultModel from --default-model "a,b": a model name cannot contain spaces or commas',
      ],
      [
        ["--permission-mode", "yolo"],
        'Cannot set defaultPermissionMode from --permission-mode "yolo": must be one of auto, acceptEdits, bypassPermissions, manual, default, dontAsk, plan',
      ],
      [["--state-dir", " "], 'Cannot set stateDir from --state-dir " ": a path cannot be empty'],
      [
        ["--mode", "auto", "--max-concurrent", "99"],
        "Cannot set maxConcurrent from --max-concurrent 99: must be at most 64",
      ],
      [
        ["--scope", "global", "--mode", "auto"],
        'Cannot use scope "global": choose user or project',
      ],
      [["--bogus"], "Unknown option '--bogus'. See ollama-delegate config --help"],
      [["--mode"], "Option '--mode <value>' argument missing. See ollama-delegate config --help"],
      [
        ["extra"],
        "Unexpected argument 'extra'. This command does not take positional arguments. See ollama-delegate config --help",
      ],
    ];
    for (const [argv, message] of cases) refused(sb, argv, message);
  });
});

Deno.test("config: --workspace-root, --allow-secret-file and the sandbox limits write the user file", async () => {
  await withSandbox((sb) => {
    const a = join(sb.root, "code");
    const b = join(sb.home, "work");
    for (const dir of [a, b, join(sb.cwd, "rel")]) mkdirSync(dir, { recursive: true });
    const { code, lines } = run(sb, [
      "--workspace-root",
      `${a},~/work`,
      "--workspace-root",
      "rel",
      "--allow-secret-file",
      ".env.local",
      "--allow-secret-file",
      "dev.pem, test.key",
      "--sandbox-max-processes",
      "256",
      "--sandbox-max-memory",
      "4096",
      "--sandbox-max-file",
      "100",
      "--sandbox-tmp",
      "64",
    ]);
    assert.equal(code, 0);
    assert.deepEqual(readJson(sb.userFile), {
      sandboxMaxProcesses: 256,
      sandboxMaxMemoryMb: 4096,
      sandboxMaxFileMb: 100,
      sandboxTmpMb: 64,
      workspaceRoots: [a, "~/work", join(sb.cwd, "rel")],
      allowSecretFiles: [".env.local", "dev.pem", "test.key"],
    });
    assert.ok(
      lines.includes(`  workspaceRoots         ${a}, ${b}, ${join(sb.cwd, "rel")}   [user]`),
      lines.join("\n"),
    );
    assert.ok(lines.includes("  allowSecretFiles       .env.local, dev.pem, test.key   [user]"));
    assert.ok(lines.includes("  sandboxTmpMb           64   [user]"));

    run(sb, ["--workspace-root", "none", "--allow-secret-file", "none"]);
    const after = readJson(sb.userFile) as Record<string, unknown>;
    assert.deepEqual(after.workspaceRoots, []);
    assert.deepEqual(after.allowSecretFiles, []);
    const shown = run(sb, []).lines;
    assert.ok(shown.includes("  workspaceRoots         (anywhere)   [user]"), shown.join("\n"));
    assert.ok(shown.includes("  allowSecretFiles       (none)   [user]"));
  });
});

Deno.test("config: the new user-only settings refuse --scope project and bad values", async () => {
  await withSandbox((sb) => {
    mkdirSync(join(sb.root, "code"));
    const userOnly: Array<[string[], string]> = [
      [["--workspace-root", join(sb.root, "code")], "workspaceRoots"],
      [["--toolchain-path", join(sb.root, "code")], "toolchainPaths"],
      [["--allow-secret-file", ".env"], "allowSecretFiles"],
      [["--sandbox-max-processes", "64"], "sandboxMaxProcesses"],
      [["--sandbox-max-memory", "512"], "sandboxMaxMemoryMb"],
      [["--sandbox-max-file", "10"], "sandboxMaxFileMb"],
      [["--sandbox-tmp", "10"], "sandboxTmpMb"],
    ];
    for (const [argv, key] of userOnly) {
      refused(
        sb,
        ["--scope", "project", ...argv],
        `Cannot set ${key} in the project file: delegates can write there, so it is only read ` +
          "from the user file or the environment. Drop --scope project",
      );
    }
    const missing = join(sb.root, "missing");
    refused(
      sb,
      ["--workspace-root", missing],
      `Cannot use --workspace-root "${missing}": "${missing}" is not an existing directory. ` +
        "Create it first, or check the path",
    );
    refused(
      sb,
      ["--workspace-root", "none", "--workspace-root", join(sb.root, "code")],
      "Cannot use --workspace-root none with other values: none clears the list on its own",
    );
    refused(
      sb,
      ["--allow-secret-file", " , "],
      "Cannot use an empty --allow-secret-file: name one or more, or none",
    );
    refused(
      sb,
      ["--sandbox-max-processes", "8"],
      "Cannot set sandboxMaxProcesses from --sandbox-max-processes 8: must be at least 16",
    );
    refused(
      sb,
      ["--sandbox-tmp", "lots"],
      'Cannot set sandboxTmpMb from --sandbox-tmp "lots": must be a number, not a string',
    );
    for (const flag of ["--workspace-root", "--allow-secret-file", "--sandbox-max-processes"]) {
      assert.ok(CONFIG_HELP.includes(flag), flag);
    }
    for (const flag of ["--sandbox-max-memory", "--sandbox-max-file", "--sandbox-tmp"]) {
      assert.ok(CONFIG_HELP.includes(flag), flag);
    }
  });
});

Deno.test("config: --max-context, --keep-alive and --claude-tools write the user file", async () => {
  await withSandbox((sb) => {
    const { code, lines } = run(sb, [
      "--max-context",
      "64k",
      "--keep-alive",
      "30m",
      "--claude-tools",
      "Bash, Read,,Grep",
    ]);
    assert.equal(code, 0);
    assert.deepEqual(readJson(sb.userFile), {
      maxContext: 65_536,
      keepAlive: "30m",
      claudeTools: ["Bash", "Read", "Grep"],
    });
    assert.ok(lines.includes("  maxContext             65536   [user]"), lines.join("\n"));
    assert.ok(lines.includes("  keepAlive              30m   [user]"));
    assert.ok(lines.includes("  claudeTools            Bash, Read, Grep   [user]"));

    // Plain tokens, 0 (the model's own), -1 (keep loaded) and 0 (unload at once).
    for (
      const [argv, key, value] of [
        [["--max-context", "40000"], "maxContext", 40_000],
        [["--max-context", "0"], "maxContext", 0],
        [["--max-context", "1m"], "maxContext", 1_048_576],
        [["--keep-alive", "-1"], "keepAlive", "-1"],
        [["--keep-alive", "0"], "keepAlive", "0"],
      ] as Array<[string[], string, unknown]>
    ) {
      run(sb, argv);
      assert.equal((readJson(sb.userFile) as Record<string, unknown>)[key], value, argv.join(" "));
    }

    // "default" takes the setting out of the file, so the built-in default applies again.
    run(sb, ["--keep-alive", "default", "--claude-tools", "default"]);
    const after = readJson(sb.userFile) as Record<string, unknown>;
    assert.equal("keepAlive" in after, false, JSON.stringify(after));
    assert.equal("claudeTools" in after, false, JSON.stringify(after));
    const shown = run(sb, []).lines;
    assert.ok(shown.includes("  keepAlive              (auto)   [default]"), shown.join("\n"));
    assert.ok(
      shown.includes("  claudeTools            Bash, Read, Edit, Write, Glob, Grep   [default]"),
    );
  });
});

Deno.test("config: --max-context, --keep-alive and --claude-tools refuse bad values and the project file", async () => {
  await withSandbox((sb) => {
    for (
      const [argv, key] of [
        [["--max-context", "32k"], "maxContext"],
        [["--keep-alive", "10m"], "keepAlive"],
        [["--keep-alive", "default"], "keepAlive"],
        [["--claude-tools", "Bash"], "claudeTools"],
      ] as Array<[string[], string]>
    ) {
      refused(
        sb,
        ["--scope", "project", ...argv],
        `Cannot set ${key} in the project file: delegates can write there, so it is only read ` +
          "from the user file or the environment. Drop --scope project",
      );
    }
    refused(
      sb,
      ["--max-context", "lots"],
      'Cannot set maxContext from --max-context "lots": must be a number, not a string',
    );
    refused(
      sb,
      ["--max-context", "-5"],
      "Cannot set maxContext from --max-context -5: must be at least 0",
    );
    refused(
      sb,
      ["--keep-alive", "forever"],
      'Cannot set keepAlive from --keep-alive "forever": is a duration like 30m, 1h, 0 (unload ' +
        "at once) or -1 (keep loaded)",
    );
    refused(
      sb,
      ["--claude-tools", " , "],
      "Cannot use an empty --claude-tools: name tools (e.g. Bash,Read,Edit), or default",
    );
    refused(
      sb,
      ["--claude-tools", "Read,bash"],
      'Cannot use --claude-tools "bash": Claude Code\'s tool names are case-sensitive; write Bash',
    );
    refused(
      sb,
      ["--claude-tools", "Bash,mcp__x y"],
      'Cannot set claudeTools from --claude-tools ["Bash","mcp__x y"]: is a tool name like ' +
        "Bash or Read",
    );
    for (const flag of ["--max-context", "--keep-alive", "--claude-tools"]) {
      assert.ok(CONFIG_HELP.includes(flag), flag);
    }
  });
});

/** The `ollama-delegate config ...` command a refusal suggests, as argv for run(). */
function suggested(message: string): string[] {
  const m = /: ollama-delegate config (.+?)(?:\. |, | \()/.exec(message);
  assert.ok(m, `no command in: ${message}`);
  return m[1]!.split(" ");
}

function refusal(sb: Sandbox, argv: string[], env: Record<string, string> = {}): string {
  let message = "";
  assert.throws(() => run(sb, argv, env), (e: unknown) => {
    assert.ok(e instanceof ConfigUsageError, String(e));
    message = e.message;
    return true;
  });
  return message;
}

Deno.test("config --default-model outside the allowed list says to add it with --allow, and that works", async () => {
  await withSandbox((sb) => {
    put(sb.userFile, { allowedModels: ["qwen3:8b", "gemma2:2b"] });
    const message = refusal(sb, ["--default-model", "llama3"]);
    assert.equal(
      message,
      'Cannot save: default model "llama3" is not in the allowed list (qwen3:8b, gemma2:2b). ' +
        "To use it, allow it too: ollama-delegate config --allow qwen3:8b,gemma2:2b,llama3 " +
        "--default-model llama3. Or pick an allowed model (--default-model qwen3:8b), or " +
        "--default-model auto",
    );
    assert.doesNotMatch(message, /Pass --default-model too/);
    assert.deepEqual(readJson(sb.userFile), { allowedModels: ["qwen3:8b", "gemma2:2b"] });
    // The advice, run as given, does what the user wanted.
    assert.equal(run(sb, suggested(message)).code, 0);
    assert.deepEqual(readJson(sb.userFile), {
      allowedModels: ["qwen3:8b", "gemma2:2b", "llama3"],
      defaultModel: "llama3",
    });
  });
});

Deno.test("config --allow that leaves the default out says how to keep it, and that works", async () => {
  await withSandbox((sb) => {
    put(sb.userFile, { defaultModel: "llama3" });
    const message = refusal(sb, ["--allow", "qwen3:8b"]);
    assert.equal(
      message,
      'Cannot save: default model "llama3" is not in the allowed list (qwen3:8b). To keep it, ' +
        "allow it too: ollama-delegate config --allow qwen3:8b,llama3. Or pick an allowed " +
        "model (--default-model qwen3:8b), or --default-model auto",
    );
    assert.equal(run(sb, suggested(message)).code, 0);
    assert.deepEqual(readJson(sb.userFile), {
      defaultModel: "llama3",
      allowedModels: ["qwen3:8b", "llama3"],
    });
  });
});

Deno.test("config: a stranded default names the layer whose allowed list is in force", async () => {
  await withSandbox((sb) => {
    // The environment's list: no file can widen it.
    const env = { OLLAMA_MCP_ALLOWED_MODELS: "a,b" };
    assert.match(
      refusal(sb, ["--default-model", "c"], env),
      /^Cannot save: default model "c" is not in the allowed list \(a, b\), which OLLAMA_MCP_ALLOWED_MODELS sets\. To use it, add "c" to OLLAMA_MCP_ALLOWED_MODELS\. Or pick/,
    );
    // The project file's list, while writing the user file: widen the project's list first.
    put(sb.projectFile, { allowedModels: ["p"] });
    const message = refusal(sb, ["--default-model", "u"]);
    assert.equal(
      message,
      `Cannot save: default model "u" is not in the allowed list (p), which ${sb.projectFile} ` +
        "sets. To use it, allow it too: ollama-delegate config --scope project --allow p,u " +
        "(a project file may only narrow the user file's list), then run this command again. " +
        "Or pick an allowed model (--default-model p), or --default-model auto",
    );
    assert.equal(run(sb, suggested(message)).code, 0);
    assert.equal(run(sb, ["--default-model", "u"]).code, 0);
    assert.deepEqual(readJson(sb.userFile), { defaultModel: "u" });
  });
});
