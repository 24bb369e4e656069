/**
 * A pool of endpoints under load: 8 delegate sessions of 3 turns each, run at once by two real
 * servers on one state dir (two Claude Code sessions of one user), against a default Ollama
 * that is a pool of 1, 2 and then 4 emulated endpoints. Each endpoint serves one request at a
 * time (maxConcurrent 1, a GPU's worth) and takes LATENCY_MS per request, so the figures show
 * what pooling buys: turns per second, how long turns waited for a slot, how the turns spread,
 * and the share of follow-up turns that stayed on their session's endpoint (whose prefix cache
 * a real server would reuse). Native engine, one chat request per turn.
 *
 * Run: deno run -A bench/pool_bench.ts
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { endpointFigures, stayedShare } from "../src/jobs/endpoint_figures.ts";
import type { JobRecord } from "../src/jobs/record.ts";
import { field, startServer, tempDir, type TestServer } from "../tests/support/harness.ts";
import { type OllamaEmulator, startOllamaEmulator } from "../tests/support/ollama_emulator.ts";
import { median } from "./support/common.ts";

const SESSIONS = 8;
const TURNS = 3;
const LATENCY_MS = 400;
const SERVERS = 2;

/** Every request waits LATENCY_MS, then answers: a GPU busy with one prompt. */
function slowEndpoint(): Promise<OllamaEmulator> {
  return startOllamaEmulator({
    chatScript: () => ({ kind: "delay", ms: LATENCY_MS, then: { kind: "text", text: "ok" } }),
  });
}

async function session(server: TestServer, n: number, cwd: string): Promise<void> {
  let reply = await server.call("delegate_start", {
    engine: "native",
    model: "qwen3:8b",
    prompt: `session ${n} ${crypto.randomUUID()}`,
    cwd,
    wait_seconds: 600,
  }, { timeoutMs: 700_000 });
  for (let turn = 2; turn <= TURNS; turn++) {
    if (field(reply.text, "state") !== "completed") throw new Error(reply.text);
    reply = await server.call("delegate_followup", {
      job_id: field(reply.text, "job_id"),
      prompt: `turn ${turn}`,
      wait_seconds: 600,
    }, { timeoutMs: 700_000 });
  }
  if (field(reply.text, "state") !== "completed") throw new Error(reply.text);
}

function records(stateDir: string): JobRecord[] {
  return readdirSync(stateDir).filter((d) => /^[0-9a-f-]{36}$/.test(d)).map((d) =>
    JSON.parse(readFileSync(join(stateDir, d, "job.json"), "utf8")) as JobRecord
  );
}

async function run(endpoints: OllamaEmulator[]) {
  const home = tempDir("od-bench-pool-");
  const env = {
    OLLAMA_MCP_BASE_URLS: JSON.stringify(endpoints.map((e) => ({ url: e.url, maxConcurrent: 1 }))),
    OLLAMA_MCP_MAX_CONCURRENT: String(SESSIONS),
  };
  const servers: TestServer[] = [];
  try {
    for (let i = 0; i < SERVERS; i++) {
      servers.push(await startServer({ home, baseUrl: endpoints[0]!.url, env }));
    }
    const cwd = tempDir("od-bench-work-");
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: SESSIONS }, (_, n) => session(servers[n % SERVERS]!, n, cwd)),
    );
    const wallMs = performance.now() - t0;
    const jobs = records(join(home, ".ollama-mcp", "jobs"));
    const waits = jobs.map((r) => (r.startedAt ?? r.createdAt) - r.createdAt);
    const figures = endpointFigures(jobs);
    return {
      wallMs,
      turns: jobs.length,
      waitMedian: median(waits),
      waitMax: Math.max(...waits),
      spread: figures.map((f) => f.jobs).join("/"),
      stayed: stayedShare(figures),
    };
  } finally {
    for (const s of servers) await s.close();
  }
}

const pool = await Promise.all([1, 2, 3, 4].map(() => slowEndpoint()));
try {
  console.log(
    `${SESSIONS} sessions x ${TURNS} turns from ${SERVERS} servers on one state dir; each ` +
      `endpoint serves 1 request at a time, ${LATENCY_MS} ms each`,
  );
  console.log("endpoints  wall    turns/s  queue wait median  max      turns per endpoint  stayed");
  for (const n of [1, 2, 4]) {
    const r = await run(pool.slice(0, n));
    console.log(
      `${String(n).padEnd(9)}  ${(r.wallMs / 1000).toFixed(1).padStart(5)}s  ` +
        `${(r.turns / (r.wallMs / 1000)).toFixed(2).padStart(7)}  ` +
        `${(r.waitMedian / 1000).toFixed(2).padStart(16)}s  ${(r.waitMax / 1000).toFixed(2)}s  ` +
        `${r.spread.padEnd(18)}  ${
          r.stayed === undefined ? "-" : `${Math.round(r.stayed * 100)}%`
        }`,
    );
  }
} finally {
  for (const e of pool) await e.close();
}
