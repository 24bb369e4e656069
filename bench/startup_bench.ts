/**
 * Cold start to an answered `initialize`: ollama-delegate against a bare MCP SDK server with
 * one tool, same Deno, alternating runs. Also with 2,000 stored jobs, to show start-up does
 * not grow with the job count, and with OpenTelemetry configured (OTEL_EXPORTER_OTLP_ENDPOINT),
 * whose SDK loads with the job layer, after `initialize`: what loading it costs then is
 * measured apart, in a fresh process. The tools load after `initialize` is answered (issue 34,
 * item 3): the time to an answered tools/list sent right behind it is printed too.
 * Then the same under Node: the npm package's split bundle (what `npx -y ollama-delegate`
 * runs) and the release's single file against the bare server bundled into one file.
 * Ratios are the median of each run's ratio to the bare server's run beside it.
 * Run: deno run -A bench/startup_bench.ts [runs]
 */
import "./support/help.ts";
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { REPO, tempDir } from "../tests/support/harness.ts";
import { INITIALIZE_LINE, TOOLS_LIST_LINES } from "../tests/support/raw_mcp.ts";
import { buildNode } from "../scripts/build_node.ts";
import { runPackageProgram } from "../tests/support/npm_package.ts";
import { which } from "../src/platform/which.ts";
import { benchArg, median, QUICK } from "./support/common.ts";

const runs = Number(benchArg(0, "15", "1"));
/** Stored jobs of the second measure. */
const JOBS = QUICK ? 20 : 2000;

/**
 * Milliseconds from spawning `command` to the answer of `initialize`, or with `list` of the
 * tools/list sent right behind it.
 */
async function timeToAnswer(
  command: string,
  args: string[],
  env: Record<string, string>,
  list = false,
): Promise<number> {
  const t0 = performance.now();
  const child = new Deno.Command(command, {
    args,
    env,
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(INITIALIZE_LINE + (list ? TOOLS_LIST_LINES : "")));
  const reader = child.stdout.getReader();
  const lines = list ? 2 : 1;
  let text = "";
  while ((text.match(/\n/g) ?? []).length < lines) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  const ms = performance.now() - t0;
  if (!text.includes('"protocolVersion"')) throw new Error(`no initialize answer: ${text}`);
  if (list && !text.includes('"tools"')) throw new Error(`no tools/list answer: ${text}`);
  await writer.close();
  reader.releaseLock();
  await child.stdout.cancel();
  child.kill("SIGKILL");
  await child.status;
  return ms;
}

const home = tempDir("od-bench-home-");
const emptyState = join(home, "empty");
const fullState = join(home, "full");
for (let i = 0; i < JOBS; i++) {
  const id = crypto.randomUUID();
  mkdirSync(join(fullState, id), { recursive: true });
  writeFileSync(join(fullState, id, "job.json"), "{}");
}
const env = (stateDir: string) => ({
  PATH: process.env.PATH ?? "",
  HOME: home,
  DENO_DIR: process.env.DENO_DIR ?? join(process.env.HOME ?? "", ".cache", "deno"),
  OLLAMA_MCP_STATE_DIR: stateDir,
});
const ours = [
  "run",
  "-A",
  "--config",
  join(REPO, "deno.json"),
  join(REPO, "src", "main.ts"),
  "serve",
];
const bare = [
  "run",
  "-A",
  "--config",
  join(REPO, "deno.json"),
  join(REPO, "bench", "support", "bare_server.ts"),
];

const timeToInitialize = (args: string[], env: Record<string, string>, list = false) =>
  timeToAnswer("deno", args, env, list);
/** Each run's ratio to the bare run beside it, then their median. */
const ratio = (xs: number[], bares: number[]) => median(xs.map((x, i) => x / bares[i]!));

// Warm the module cache once so every measured run is equally cold at the process level (not in
// quick mode: its figures mean nothing, and a warm-up is a server start more).
if (!QUICK) {
  await timeToInitialize(ours, env(emptyState));
  await timeToInitialize(bare, env(emptyState));
}
const otel = (stateDir: string) => ({
  ...env(stateDir),
  // Nothing is sent before a job ends: no collector needs to listen.
  OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9",
});
const a: number[] = [], b: number[] = [], c: number[] = [], d: number[] = [];
const e: number[] = [], bl: number[] = [];
for (let i = 0; i < runs; i++) {
  b.push(await timeToInitialize(bare, env(emptyState)));
  a.push(await timeToInitialize(ours, env(emptyState)));
  c.push(await timeToInitialize(ours, env(fullState)));
  d.push(await timeToInitialize(ours, otel(emptyState)));
  bl.push(await timeToInitialize(bare, env(emptyState), true));
  e.push(await timeToInitialize(ours, env(emptyState), true));
}
const [ma, mb, mc, md] = [median(a), median(b), median(c), median(d)];

/** Loading and starting the SDK in a fresh process, as the job layer does when configured. */
async function sdkLoadMs(): Promise<number> {
  const code = `const t = performance.now();
const { startTelemetry } = await import(${
    JSON.stringify(join(REPO, "src", "telemetry", "telemetry.ts"))
  });
const tel = await startTelemetry({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9" }, () => {});
console.log(performance.now() - t);
await tel.shutdown();
Deno.exit(0);`;
  const out = await new Deno.Command("deno", {
    args: ["eval", "--config", join(REPO, "deno.json"), code],
    stdout: "piped",
    stderr: "null",
  }).output();
  return Number(new TextDecoder().decode(out.stdout).trim());
}
const loads: number[] = [];
for (let i = 0; i < Math.min(runs, 7); i++) loads.push(await sdkLoadMs());
console.log(`startup to initialize, Deno, median of ${runs} (ms):`);
console.log(`  bare SDK server, one tool     ${mb.toFixed(1)}`);
console.log(
  `  ollama-delegate, 0 jobs       ${ma.toFixed(1)}   ratio ${
    ratio(a, b).toFixed(2)
  }x (goal <= 1.25x)`,
);
console.log(
  `  ollama-delegate, ${JOBS} jobs    ${mc.toFixed(1)}   ratio ${ratio(c, b).toFixed(2)}x`,
);
console.log(`  ollama-delegate, OTel on      ${md.toFixed(1)}   ratio ${ratio(d, b).toFixed(2)}x`);
console.log(
  `  to tools/list answered: bare ${median(bl).toFixed(1)}, ollama-delegate ${
    median(e).toFixed(1)
  }   ratio ${ratio(e, bl).toFixed(2)}x`,
);
console.log(
  `OpenTelemetry SDK loaded and started with the job layer (fresh process, median of ` +
    `${loads.length}): ${median(loads).toFixed(1)} ms`,
);

/** The same under Node, from bundles built now; skipped where no `node` is on PATH. */
async function nodeFigures(): Promise<void> {
  const node = which("node", env(emptyState), process.cwd());
  if (!node) {
    console.log("Node: not measured (no node on PATH)");
    return;
  }
  const dir = tempDir("od-bench-node-");
  const split = join(dir, "split", "ollama-delegate.mjs");
  const single = join(dir, "single", "ollama-delegate.mjs");
  const bareBundle = join(dir, "bare.mjs");
  // The test suite's quick run hands it the package it packed once (scripts/test.ts): the same
  // split bundle, not built again.
  const packaged = runPackageProgram();
  if (!packaged) buildNode(split, { split: true });
  // Quick mode (tests/e2e/bench_quick_test.ts) spares itself the second build.
  if (!QUICK) buildNode(single);
  execFileSync(Deno.execPath(), [
    "bundle",
    "--quiet",
    "--config",
    join(REPO, "deno.json"),
    "--platform",
    "deno",
    "--format",
    "esm",
    "--output",
    bareBundle,
    join(REPO, "bench", "support", "bare_server.ts"),
  ]);
  const run = (file: string, list = false, args: string[] = ["serve"]) =>
    timeToAnswer(node, [file, ...args], env(emptyState), list);
  const bareRun = (list = false) => run(bareBundle, list, []);
  // Warm-ups, as above.
  if (!QUICK) {
    await bareRun();
    await run(packaged ?? split);
    await run(single);
  }
  const nb: number[] = [], ns: number[] = [], n1: number[] = [], nbl: number[] = [];
  const nsl: number[] = [];
  for (let i = 0; i < runs; i++) {
    nb.push(await bareRun());
    ns.push(await run(packaged ?? split));
    if (!QUICK) n1.push(await run(single));
    nbl.push(await bareRun(true));
    nsl.push(await run(packaged ?? split, true));
  }
  const version = execFileSync(node, ["--version"], { encoding: "utf8" }).trim();
  console.log(`startup to initialize, Node ${version}, median of ${runs} (ms):`);
  console.log(`  bare SDK server, one file     ${median(nb).toFixed(1)}`);
  console.log(
    `  npm package (split bundle)    ${median(ns).toFixed(1)}   ratio ${ratio(ns, nb).toFixed(2)}x`,
  );
  if (!QUICK) {
    console.log(
      `  release's single file         ${median(n1).toFixed(1)}   ratio ${
        ratio(n1, nb).toFixed(2)
      }x`,
    );
  }
  console.log(
    `  to tools/list answered: bare ${median(nbl).toFixed(1)}, npm package ${
      median(nsl).toFixed(1)
    }   ratio ${ratio(nsl, nbl).toFixed(2)}x`,
  );
}
await nodeFigures();
