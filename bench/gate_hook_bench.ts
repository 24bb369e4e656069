/**
 * What the plugin's Stop hook (plugins/ollama-delegate/hooks/review_gate.cjs) costs each time
 * Claude ends a turn: with the review gate off (the default), the hook reads the setting and
 * exits; with it on, it starts the program, here the Node bundle directly (npx's own start
 * comes on top), whose `review --gate` then finds nothing to review in a folder that is not a
 * git repository. docs/jobs.md ("Review gate") quotes these figures.
 * Run: deno task build:node && deno run -A bench/gate_hook_bench.ts [runs]
 */
import "./support/help.ts";
import { spawnSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { REPO, tempDir } from "../tests/support/harness.ts";
import { benchArg, median } from "./support/common.ts";

const runs = Number(benchArg(0, "15", "1"));
const HOOK = join(REPO, "plugins", "ollama-delegate", "hooks", "review_gate.cjs");
const BUNDLE = join(REPO, "dist", "node", "ollama-delegate.mjs");

const home = tempDir("od-bench-gate-");
const config = join(home, "config.json");
writeFileSync(config, "{}");
const folder = tempDir("od-bench-gate-cwd-");
const input = JSON.stringify({
  session_id: "bench",
  transcript_path: "/nonexistent/transcript.jsonl",
  cwd: folder,
  hook_event_name: "Stop",
  stop_hook_active: false,
});
const env = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: home,
  OLLAMA_MCP_CONFIG: config,
  OLLAMA_MCP_STATE_DIR: join(home, "state"),
};

function seconds(command: string, args: string[], extra: Record<string, string> = {}): number {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const run = spawnSync(command, args, { input, cwd: folder, env: { ...env, ...extra } });
    times.push((performance.now() - t0) / 1000);
    if (run.status !== 0) throw new Error(`${command} ${args.join(" ")}: ${run.stderr}`);
  }
  return median(times);
}

const node = spawnSync("node", ["--version"]).stdout?.toString().trim();
console.log(`the Stop hook, median of ${runs} (node ${node}):`);
console.log(
  `  gate off: the hook reads the setting and exits  ${seconds("node", [HOOK]).toFixed(2)} s`,
);
if (existsSync(BUNDLE)) {
  const on = seconds("node", [BUNDLE, "review", "--gate"], { OLLAMA_MCP_REVIEW_GATE: "on" });
  console.log(`  gate on: the Node bundle's review --gate, no git repository  ${on.toFixed(2)} s`);
} else {
  console.log(`  gate on: not measured, ${BUNDLE} is missing (deno task build:node)`);
}
