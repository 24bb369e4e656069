/**
 * What the plugin's UserPromptSubmit hook (plugins/ollama-delegate/hooks/unread_results.cjs)
 * costs on a prompt when nothing is unread: wall time of the hook against `node -e 0` (Node's
 * own start), with no marker at all, and with 1,000 unread jobs of other projects in the state
 * dir (the hook lists only its project's folder). It adds no text to the prompt then, so no
 * tokens. Run: deno run -A bench/unread_hook_bench.ts [runs]
 */
import "./support/help.ts";
import { execFileSync, spawnSync } from "node:child_process";
import { join } from "node:path";
import process from "node:process";
import { markUnread } from "../src/jobs/unread.ts";
import { REPO, tempDir } from "../tests/support/harness.ts";
import { benchArg, median, QUICK } from "./support/common.ts";

const runs = Number(benchArg(0, "30", "1"));
const HOOK = join(REPO, "plugins", "ollama-delegate", "hooks", "unread_results.cjs");
const node = execFileSync("which", ["node"], { encoding: "utf8" }).trim();
const home = tempDir("od-bench-home-");
const project = tempDir("od-bench-project-");
const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, CLAUDE_PROJECT_DIR: project };

function time(args: string[]): number {
  const t = performance.now();
  const r = spawnSync(node, args, { cwd: project, env, input: '{"prompt":"x"}', encoding: "utf8" });
  if (r.status !== 0 || r.stdout !== "") throw new Error(`unexpected: ${r.status} ${r.stdout}`);
  return performance.now() - t;
}

function series(label: string, args: string[]): void {
  // A warm-up run (not in quick mode, whose figures mean nothing).
  if (!QUICK) time(args);
  const ms = Array.from({ length: runs }, () => time(args));
  console.log(`${label.padEnd(44)} median ${median(ms).toFixed(1)} ms (${runs} runs)`);
}

series("node -e 0 (Node's start)", ["-e", "0"]);
series("hook, no state dir", [HOOK]);
const stateDir = join(home, ".ollama-mcp", "jobs");
/** Unread jobs of other projects; quick mode makes a few (the hook lists only its own folder). */
const others = QUICK ? 20 : 1000;
for (let i = 0; i < others; i++) {
  await markUnread(stateDir, tempDir("od-bench-other-"), crypto.randomUUID());
}
series(`hook, ${others.toLocaleString("en-US")} unread jobs of other projects`, [HOOK]);

// With something to tell: the hook starts `npx --prefix <plugin> -y ollama-delegate@<v> unread
// --hook`; npx takes the packed package from its cache (filled by the first run) and the program
// tells one job. The package comes from a loopback registry, as in tests/e2e/plugin_gate_test.ts.
const { buildNpm } = await import("../scripts/build_npm.ts");
const { startNpmRegistry } = await import("../tests/support/npm_registry.ts");
const { userNpmrc } = await import("../tests/support/planted_package.ts");
const { baseRecord, writeJob } = await import("../tests/cli/jobs_support.ts");
const { runPackage } = await import("../tests/support/npm_package.ts");
const pack = tempDir("od-bench-pack-");
// The test suite's quick run hands it the package it packed once (scripts/test.ts).
const registry = await startNpmRegistry([runPackage() ?? buildNpm(pack, join(pack, "stage"))]);
userNpmrc(home, registry.url);
const told: number[] = [];
// The first run fills npx's cache; quick mode times one more.
for (let i = 0; i <= (QUICK ? 1 : Math.min(runs, 10)); i++) {
  const job = baseRecord(crypto.randomUUID(), crypto.randomUUID(), { project });
  writeJob(stateDir, job);
  await markUnread(stateDir, project, job.id);
  const t = performance.now();
  // Not spawnSync: the registry answers npx from this process's event loop.
  const child = new Deno.Command(node, {
    args: [HOOK],
    cwd: project,
    env,
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode("{}"));
  await writer.close();
  const r = await child.output();
  const ms = performance.now() - t;
  const out = new TextDecoder().decode(r.stdout);
  if (!out.includes("additionalContext")) {
    throw new Error(`not told: ${out}${new TextDecoder().decode(r.stderr)}`);
  }
  // The first run fills npx's cache from the registry; the others are what a user meets.
  if (i > 0) told.push(ms);
}
await registry.close();
console.log(
  `${"hook, one unread job (npx from its cache)".padEnd(44)} median ${
    median(told).toFixed(1)
  } ms (${told.length} runs)`,
);
