/**
 * The plugin's review gate as a user meets it: the real Claude Code CLI installs the plugin
 * from this repository's marketplace, runs a turn in which the (emulated) model writes a file,
 * and at the turn's end runs the plugin's Stop hook, which starts `ollama-delegate review
 * --gate` through the real `npx -y` from the packed npm package (a loopback registry). The
 * emulator plays both Claude Code's model and the gate's reviewers; the gate blocks the stop
 * once, Claude Code hands the findings to its model, and the next stop goes through.
 */
import { git } from "../support/git_repo.ts";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { buildNpm } from "../../scripts/build_npm.ts";
import { VERSION } from "../../src/version.ts";
import { startNpmRegistry } from "../support/npm_registry.ts";
import { plantNpmrc, plantPackage, userNpmrc } from "../support/planted_package.ts";
import type { ChatRequestView, MessagesRequestView } from "../support/ollama_emulator.ts";
import { CLAUDE_BIN, REPO, tempDir } from "../support/harness.ts";
import { startScene } from "../support/scene.ts";

const PLUGIN = join(REPO, "plugins", "ollama-delegate");
const GATE_MARK = "ollama-delegate review gate, round 1";

async function claude(
  cwd: string,
  args: string[],
  env: Record<string, string>,
  stdin?: string,
): Promise<{ status: number; stdout: string; stderr: string }> {
  const child = new Deno.Command(CLAUDE_BIN, {
    args,
    cwd,
    clearEnv: true,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", NO_COLOR: "1", ...env },
    stdin: stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(300_000),
  }).spawn();
  if (stdin !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(stdin));
    await writer.close();
  }
  const out = await child.output();
  const text = new TextDecoder();
  return { status: out.code, stdout: text.decode(out.stdout), stderr: text.decode(out.stderr) };
}

/** The Stop hook's program, as hooks.json names it. */
const HOOK = join(PLUGIN, "hooks", "review_gate.cjs");

Deno.test("plugin: the hooks file runs the plugin's own hook program, which names this version, and the CLI registers its Stop hook", async () => {
  const hooks = JSON.parse(readFileSync(join(PLUGIN, "hooks", "hooks.json"), "utf8"));
  const stop = hooks.hooks.Stop[0].hooks[0];
  assert.equal(stop.command, "node");
  assert.deepEqual(stop.args, ["${CLAUDE_PLUGIN_ROOT}/hooks/review_gate.cjs"]);
  assert.ok(readFileSync(HOOK, "utf8").includes(`const VERSION = "${VERSION}";`));
  // Over our own limit (MAX_GATE_SECONDS), so the gate fails open before Claude Code kills it.
  assert.equal(stop.timeout, 900);
  const r = await claude(tempDir("od-gate-home-"), ["plugin", "validate", PLUGIN], {
    HOME: tempDir("od-gate-home-"),
  });
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.match(
    r.stdout,
    /hooks: Stop command node \["\$\{CLAUDE_PLUGIN_ROOT\}\/hooks\/review_gate\.cjs"\]/,
  );
});

Deno.test("plugin: with the gate off the Stop hook reads the setting and exits, starting nothing; on, it starts npx from an absolute PATH entry with the plugin's folder as npm's prefix", () => {
  // A stand-in npx that records being started, on a PATH of its own beside node.
  const bin = tempDir("od-gate-bin-");
  const marker = join(bin, "npx-ran");
  writeFileSync(join(bin, "npx"), `#!/bin/sh\necho "$@" > '${marker}'\ncat >> '${marker}'\n`, {
    mode: 0o755,
  });
  // The project's own npx, on a relative PATH entry ahead of the real one (a PATH with
  // ./node_modules/.bin in it): it must not run.
  const project = tempDir("od-gate-project-");
  const planted = join(project, "planted-npx-ran");
  mkdirSync(join(project, "node_modules", ".bin"), { recursive: true });
  writeFileSync(join(project, "node_modules", ".bin", "npx"), `#!/bin/sh\ntouch '${planted}'\n`, {
    mode: 0o755,
  });
  const node = execFileSync("which", ["node"], { encoding: "utf8" }).trim();
  const run = (env: Record<string, string>) => {
    const home = tempDir("od-gate-home-");
    mkdirSync(join(home, ".ollama-mcp"), { recursive: true });
    return spawnSync(node, [HOOK], {
      cwd: project,
      input: '{"session_id":"s1","stop_hook_active":false}',
      env: { PATH: `node_modules/.bin:${bin}:/usr/bin:/bin`, HOME: home, ...env },
      encoding: "utf8",
    });
  };
  const off = run({});
  assert.equal(off.status, 0, off.stderr);
  assert.equal(existsSync(marker), false, "npx was started with the gate off");
  const offInFile = run({ OLLAMA_MCP_CONFIG: join(bin, "cfg.json") });
  assert.equal(offInFile.status, 0);
  assert.equal(existsSync(marker), false);
  writeFileSync(join(bin, "cfg.json"), JSON.stringify({ reviewGate: "on" }));
  const on = run({ OLLAMA_MCP_CONFIG: join(bin, "cfg.json") });
  assert.equal(on.status, 0, on.stderr);
  assert.equal(existsSync(planted), false, "the project's npx ran");
  // Started with the pinned package, npm's prefix outside the project, and the hook's input on
  // its stdin.
  assert.equal(
    readFileSync(marker, "utf8"),
    `--prefix ${PLUGIN} -y ollama-delegate@${VERSION} review --gate\n` +
      '{"session_id":"s1","stop_hook_active":false}',
  );
});

Deno.test({
  name: "plugin: installed, its Stop hook runs the review gate through npx, blocks once with " +
    "the findings, and lets the next stop through",
  async fn() {
    const packDir = tempDir("od-pack-");
    const tarball = buildNpm(packDir, join(packDir, "stage"));
    const registry = await startNpmRegistry([tarball]);
    const reviews: ChatRequestView[] = [];
    const fed: MessagesRequestView[] = [];
    const home = tempDir("od-gate-home-");
    const project = join(home, "project");
    mkdirSync(project);
    git(project, "init", "-q", "-b", "main");
    writeFileSync(join(project, "app.ts"), "const a = 1;\nexport {};\n");
    // A cloned repository that ships its own "ollama-delegate" and a .npmrc naming another
    // registry: the gate, which runs as the user outside every sandbox, must use neither.
    const hostile = await startNpmRegistry([]);
    const marker = plantPackage(project, join(home, "planted-ran"));
    plantNpmrc(project, hostile.url);
    git(project, "add", ".");
    git(project, "commit", "-q", "-m", "one");
    try {
      await using scene = await startScene({
        server: false,
        emulator: {
          models: [{ name: "qwen3:8b" }, { name: "qwen3-coder:30b" }, { name: "gpt-oss:20b" }],
          // Claude Code's own model: write app.ts, then say it is done; after the gate's
          // block, answer the findings.
          script: (view) => {
            if (view.tools.length === 0) return undefined;
            if (JSON.stringify(view.messages).includes(GATE_MARK)) {
              fed.push(view);
              return {
                kind: "text",
                text: "The reviewers found eval of input; leaving it to you.",
              };
            }
            if (view.lastToolResult === undefined) {
              return {
                kind: "tool_use",
                name: "Write",
                input: {
                  file_path: join(project, "app.ts"),
                  content: "const a = 1;\nconst b = eval(input);\nexport {};\n",
                },
              };
            }
            return { kind: "text", text: "Wrote app.ts." };
          },
          // The gate's two reviewers, on the native engine.
          chatScript: (view) => {
            if (!view.firstUserText.includes("Review these changes")) return undefined;
            reviews.push(view);
            return {
              kind: "text",
              text: JSON.stringify({
                findings: [{
                  file: "app.ts",
                  line: 2,
                  severity: "high",
                  claim: `eval of input runs arbitrary code (${view.model})`,
                  evidence: "const b = eval(input);",
                }],
              }),
            };
          },
        },
      });
      const url = scene.emulator.url;
      userNpmrc(home, registry.url);
      const env = { HOME: home };
      for (
        const args of [
          ["plugin", "marketplace", "add", REPO],
          ["plugin", "install", "ollama-delegate@ollama-delegate"],
        ]
      ) {
        const r = await claude(home, args, env);
        assert.equal(r.status, 0, r.stdout + r.stderr);
      }
      const run = await claude(project, [
        "-p",
        "--output-format",
        "json",
        "--model",
        "qwen3:8b",
        "--permission-mode",
        "acceptEdits",
      ], {
        ...env,
        ANTHROPIC_BASE_URL: url,
        ANTHROPIC_AUTH_TOKEN: "ollama",
        ANTHROPIC_API_KEY: "",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        DISABLE_AUTOUPDATER: "1",
        // What the gate reads: Claude Code hands its environment to the hook.
        OLLAMA_HOST: url,
        OLLAMA_MCP_REVIEW_GATE: "on",
        OLLAMA_MCP_DEFAULT_ENGINE: "native",
        OLLAMA_MCP_REVIEW_GATE_MODELS: "qwen3-coder:30b,gpt-oss:20b",
        OLLAMA_MCP_REVIEW_GATE_AGREEMENT: "2",
      }, "Add b to app.ts.");
      assert.equal(run.status, 0, run.stdout + run.stderr);
      const result = JSON.parse(run.stdout);
      // The gate reviewed with both models, blocked once, and Claude's model got the findings.
      assert.deepEqual(reviews.map((v) => v.model).sort(), ["gpt-oss:20b", "qwen3-coder:30b"]);
      assert.equal(fed.length, 1, `the block reason reached the model once: ${run.stdout}`);
      const told = JSON.stringify(fed[0]!.messages);
      assert.match(told, /\[high\] app\.ts:2 \(2 of 2: qwen3-coder:30b, gpt-oss:20b\)/);
      assert.equal(result.result, "The reviewers found eval of input; leaving it to you.");
      // The gate's round was counted for this Claude Code session.
      const state = join(home, ".ollama-mcp", "jobs", ".gate", `${result.session_id}.json`);
      assert.ok(existsSync(state), state);
      assert.equal(JSON.parse(readFileSync(state, "utf8")).blocks, 1);
      assert.ok(registry.requests.some((p) => p.endsWith(`/ollama-delegate-${VERSION}.tgz`)));
      assert.equal(existsSync(marker), false, "the project's own package ran");
      assert.deepEqual(hostile.requests, [], "the project's registry was asked");
    } finally {
      await registry.close();
      await hostile.close();
    }
  },
});
