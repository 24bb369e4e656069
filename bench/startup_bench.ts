/**
 * Cold start to an answered `initialize`: ollama-delegate against a bare MCP SDK server with
 * one tool, same Deno, alternating runs. Also with 2,000 stored jobs, to show start-up does
 * not grow with the job count, and with OpenTelemetry configured (OTEL_EXPORTER_OTLP_ENDPOINT),
 * whose SDK loads with the job layer, after `initialize`: what loading it costs then is
 * measured apart, in a fresh process. Run: deno run -A bench/startup_bench.ts [runs]
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { REPO, tempDir } from "../tests/support/harness.ts";
import { benchArg, median, QUICK } from "./support/common.ts";

const runs = Number(benchArg(0, "15", "1"));
/** Stored jobs of the second measure. */
const JOBS = QUICK ? 20 : 2000;
const INIT = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "b", version: "1" },
  },
}) + "\n";

async function timeToInitialize(args: string[], env: Record<string, string>): Promise<number> {
  const t0 = performance.now();
  const child = new Deno.Command("deno", {
    args,
    env,
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(INIT));
  const reader = child.stdout.getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  const ms = performance.now() - t0;
  if (!text.includes('"protocolVersion"')) throw new Error(`no initialize answer: ${text}`);
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

// Warm the module cache once so every measured run is equally cold at the process level.
await timeToInitialize(ours, env(emptyState));
await timeToInitialize(bare, env(emptyState));
const otel = (stateDir: string) => ({
  ...env(stateDir),
  // Nothing is sent before a job ends: no collector needs to listen.
  OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9",
});
const a: number[] = [], b: number[] = [], c: number[] = [], d: number[] = [];
for (let i = 0; i < runs; i++) {
  b.push(await timeToInitialize(bare, env(emptyState)));
  a.push(await timeToInitialize(ours, env(emptyState)));
  c.push(await timeToInitialize(ours, env(fullState)));
  d.push(await timeToInitialize(ours, otel(emptyState)));
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
console.log(`startup to initialize, median of ${runs} (ms):`);
console.log(`  bare SDK server, one tool     ${mb.toFixed(1)}`);
console.log(
  `  ollama-delegate, 0 jobs       ${ma.toFixed(1)}   ratio ${
    (ma / mb).toFixed(2)
  }x (goal <= 1.25x)`,
);
console.log(`  ollama-delegate, ${JOBS} jobs    ${mc.toFixed(1)}   ratio ${(mc / mb).toFixed(2)}x`);
console.log(`  ollama-delegate, OTel on      ${md.toFixed(1)}   ratio ${(md / mb).toFixed(2)}x`);
console.log(
  `OpenTelemetry SDK loaded and started with the job layer (fresh process, median of ` +
    `${loads.length}): ${median(loads).toFixed(1)} ms`,
);
