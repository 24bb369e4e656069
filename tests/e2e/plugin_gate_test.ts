/**
 * The plugin's review gate as a user meets it: the real Claude Code CLI installs the plugin
 * from this repository's marketplace, runs a turn in which the (emulated) model writes a file,
 * and at the turn's end runs the plugin's Stop hook, which starts `ollama-delegate review
 * --gate` through the real `npx -y` from the packed npm package (a loopback registry). The
 * emulator plays both Claude Code's model and the gate's reviewers; the gate blocks the stop
 * once, Claude Code hands the findings to its model, and the next stop goes through.
 */
import { committedRepo, git } from "../support/git_repo.ts";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { VERSION } from "../../src/version.ts";
import { packedNpmPackage } from "../support/npm_package.ts";
import { startNpmRegistry } from "../support/npm_registry.ts";
import { plantNpmrc, plantPackage, userNpmrc } from "../support/planted_package.ts";
import type { ChatRequestView, MessagesRequestView } from "../support/emulator/emulator.ts";
import { CLAUDE_BIN, REPO, tempDir, until } from "../support/harness.ts";
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
  // The unread results' hook (issue 31, item 2), on every prompt.
  const prompt = hooks.hooks.UserPromptSubmit[0].hooks[0];
  assert.equal(prompt.command, "node");
  assert.deepEqual(prompt.args, ["${CLAUDE_PLUGIN_ROOT}/hooks/unread_results.cjs"]);
  assert.ok(readFileSync(UNREAD_HOOK, "utf8").includes(`const VERSION = "${VERSION}";`));
  assert.match(
    r.stdout,
    /hooks: UserPromptSubmit command node \["\$\{CLAUDE_PLUGIN_ROOT\}\/hooks\/unread_results\.cjs"\]/,
  );
});

/** The UserPromptSubmit hook's program. */
const UNREAD_HOOK = join(PLUGIN, "hooks", "unread_results.cjs");

Deno.test("plugin: the UserPromptSubmit hook reads one folder and starts nothing while nothing is unread; with an unread job of this project it starts npx from an absolute PATH entry with the plugin's folder as npm's prefix", async () => {
  const bin = tempDir("od-unread-bin-");
  const marker = join(bin, "npx-ran");
  writeFileSync(join(bin, "npx"), `#!/bin/sh\necho "$@" > '${marker}'\ncat >> '${marker}'\n`, {
    mode: 0o755,
  });
  const project = tempDir("od-unread-project-");
  const planted = join(project, "planted-npx-ran");
  mkdirSync(join(project, "node_modules", ".bin"), { recursive: true });
  writeFileSync(join(project, "node_modules", ".bin", "npx"), `#!/bin/sh\ntouch '${planted}'\n`, {
    mode: 0o755,
  });
  // A project settings file naming another state dir: the hook must not read it.
  const decoy = tempDir("od-unread-decoy-");
  writeFileSync(join(project, "ollama-mcp.config.json"), JSON.stringify({ stateDir: decoy }));
  const node = execFileSync("which", ["node"], { encoding: "utf8" }).trim();
  const home = tempDir("od-unread-home-");
  const stateDir = join(home, ".ollama-mcp", "jobs");
  const input = JSON.stringify({ session_id: "s1", cwd: project, prompt: "next" });
  const run = (env: Record<string, string> = {}) =>
    spawnSync(node, [UNREAD_HOOK], {
      cwd: project,
      input,
      env: { PATH: `node_modules/.bin:${bin}:/usr/bin:/bin`, HOME: home, ...env },
      encoding: "utf8",
    });
  const empty = run({ CLAUDE_PROJECT_DIR: project });
  assert.equal(empty.status, 0, empty.stderr);
  assert.equal(empty.stdout, "", "nothing to say adds nothing to the prompt");
  assert.equal(existsSync(marker), false, "npx was started with nothing unread");
  // Another project's unread job is not this one's.
  const { markUnread } = await import("../../src/jobs/unread.ts");
  await markUnread(stateDir, tempDir("od-unread-other-"), crypto.randomUUID());
  assert.equal(run({ CLAUDE_PROJECT_DIR: project }).status, 0);
  assert.equal(existsSync(marker), false, "npx was started for another project's job");
  // A decoy state dir in the project's file, with an unread job of this project: not read.
  await markUnread(decoy, project, crypto.randomUUID());
  assert.equal(run({ CLAUDE_PROJECT_DIR: project }).status, 0);
  assert.equal(existsSync(marker), false, "the project's settings file chose the state dir");
  // This project's unread job, in the user's state dir (found through its real path).
  await markUnread(stateDir, project, crypto.randomUUID());
  const told = run({});
  assert.equal(told.status, 0, told.stderr);
  assert.equal(existsSync(planted), false, "the project's npx ran");
  assert.equal(
    readFileSync(marker, "utf8"),
    `--prefix ${PLUGIN} -y ollama-delegate@${VERSION} unread --hook\n${input}`,
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
    const tarball = packedNpmPackage();
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

const BRIEF = "@hang\nGoal: make the date tests pass.\nFiles: src/date.ts.\nDone when: true";

Deno.test({
  name: "plugin: /ollama-delegate:handoff starts a delegate with its brief, verify and a " +
    "worktree; claude -p ending with it still running interrupts it, the next prompt's context " +
    "says so once through the UserPromptSubmit hook, and a follow-up continues it",
  async fn() {
    const tarball = packedNpmPackage();
    const registry = await startNpmRegistry([tarball]);
    const home = tempDir("od-unread-home-");
    const project = join(home, "project");
    committedRepo(project, { "date.ts": "export {};\n" });
    const stateDir = join(home, ".ollama-mcp", "jobs");
    /** Each prompt's requests to Claude Code's model, by the prompt's words. */
    const seen: Record<string, MessagesRequestView[]> = {};
    let jobId = "";
    const toolNamed = (view: MessagesRequestView, tool: string) =>
      (view.tools as Array<{ name?: string }>).map((t) => t.name ?? "")
        .find((n) => n.startsWith("mcp__plugin_ollama-delegate") && n.endsWith(`__${tool}`));
    try {
      await using scene = await startScene({
        server: false,
        emulator: {
          models: [{ name: "qwen3:8b" }],
          // Claude Code's own model.
          script: (view) => {
            const start = toolNamed(view, "delegate_start");
            if (!start) return undefined;
            const prompt = ["Write the brief", "what next", "and now"].find((p) =>
              JSON.stringify(view.messages).includes(p)
            );
            if (!prompt) return undefined;
            (seen[prompt] ??= []).push(view);
            const last = view.lastToolResult;
            if (prompt === "Write the brief") {
              if (last === undefined) {
                return {
                  kind: "tool_use",
                  name: start,
                  input: { prompt: BRIEF, cwd: project, verify: "true", isolation: "worktree" },
                };
              }
              jobId = /job_id: +(\S+)/.exec(last)?.[1] ?? "";
              return { kind: "text", text: `Brief\n${BRIEF}\nStarted job ${jobId}.` };
            }
            if (prompt === "what next" && last === undefined) {
              return {
                kind: "tool_use",
                name: toolNamed(view, "delegate_followup")!,
                input: { job_id: jobId.slice(0, 8), prompt: "RESUME", wait_seconds: 120 },
              };
            }
            return { kind: "text", text: "Noted." };
          },
          // The delegate: it hangs on the brief (@hang), and answers the follow-up.
          chatScript: (view) =>
            JSON.stringify(view.messages).includes("RESUME")
              ? { kind: "text", text: "resumed and done" }
              : undefined,
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
      const ask = (words: string) =>
        claude(project, [
          "-p",
          "--output-format",
          "json",
          "--model",
          "qwen3:8b",
          "--allowedTools",
          "mcp__plugin_ollama-delegate_ollama",
        ], {
          ...env,
          ANTHROPIC_BASE_URL: url,
          ANTHROPIC_AUTH_TOKEN: "ollama",
          ANTHROPIC_API_KEY: "",
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
          DISABLE_AUTOUPDATER: "1",
          MCP_TIMEOUT: "120000",
          // Print mode sends its first request without waiting for a server that is still
          // starting (npx, then Node, twice: Claude Code's discover probe and the session); a
          // busy machine made the plugin's tools miss it. This makes it wait for the servers.
          MCP_CONNECTION_NONBLOCKING: "false",
          ENABLE_TOOL_SEARCH: "false",
          OLLAMA_HOST: url,
          OLLAMA_MCP_DEFAULT_ENGINE: "native",
          OLLAMA_MCP_DEFAULT_MODEL: "qwen3:8b",
        }, words);

      // npx fetches the package once: print mode does not wait long for a server to connect.
      const warm = await claude(project, ["mcp", "list"], env);
      assert.match(warm.stdout, /ollama.*Connected/, warm.stdout + warm.stderr);

      // 1. The handoff: the command's instructions reach the model, which starts the delegate.
      const first = await ask("/ollama-delegate:handoff make the date tests pass");
      assert.equal(first.status, 0, first.stdout + first.stderr);
      const briefed = JSON.stringify(seen["Write the brief"]?.[0]?.messages ?? []);
      for (const part of ["Goal", "Done when", "verify", 'isolation: \\"worktree\\"', "Brief"]) {
        assert.ok(
          briefed.includes(part),
          `the command's text names ${part}: ${briefed}\n${first.stdout}\n${
            scene.emulator.messageRequests().map((q) =>
              JSON.stringify(
                (q.json as { tools?: Array<{ name: string }> }).tools?.map((t) => t.name),
              )
            ).join("\n")
          }`,
        );
      }
      assert.match(JSON.parse(first.stdout).result, /^Brief\n@hang\nGoal: make the date tests/);
      assert.ok(jobId, `the delegate started: ${first.stdout}`);
      const record = () => JSON.parse(readFileSync(join(stateDir, jobId, "job.json"), "utf8"));
      assert.deepEqual(record().checks.verify, ["true"]);
      assert.match(record().worktree.branch, /^delegate\//);
      // claude -p has ended with the delegate still running: its server stopped it.
      await until(() => record().state === "interrupted" || undefined, 30_000, "interrupted");
      assert.match(record().errorText, /follow up to continue/);

      // 2. The next prompt is told, through the hook, and the model continues the session.
      const second = await ask("what next?");
      assert.equal(second.status, 0, second.stdout + second.stderr);
      const told = JSON.stringify(seen["what next"]?.[0]?.messages ?? []);
      // Claude Code 2.1.332 adds it to the system prompt, after "UserPromptSubmit hook
      // additional context:".
      const id = jobId.slice(0, 8);
      const line = "UserPromptSubmit hook additional context: ollama-delegate: 1 delegation " +
        "ended since your last message without the result reaching you:\n" +
        `- job ${id} "@hang Goal: make the date tests pass. Files: src/date.ts. Do…" ` +
        "interrupted (not verified): Stopped because the client closed stdin before the job " +
        `finished; follow up to continue. delegate_followup({ job_id: "${id}", prompt }) ` +
        `continues its session; delegate_result({ job_id: "${id}" }) shows what it did\n`;
      assert.ok(told.includes(JSON.stringify(line).slice(1, -1)), told);
      const resumed = seen["what next"]!.at(-1)!.lastToolResult ?? "";
      assert.match(resumed, /state: +completed \(verified\)/, resumed);

      // 3. Told once: the prompt after says nothing of it.
      const third = await ask("and now?");
      assert.equal(third.status, 0, third.stdout + third.stderr);
      const later = JSON.stringify(seen["and now"]?.[0]?.messages ?? []);
      assert.ok(later.includes("and now"), later);
      assert.doesNotMatch(later, /delegations? ended since your last message/);
    } finally {
      await registry.close();
    }
  },
});
