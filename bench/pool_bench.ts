/**
 * A pool of endpoints under load: 8 delegate sessions of 3 turns each, run at once by two real
 * servers on one state dir (two Claude Code sessions of one user), against a default Ollama
 * that is a pool of 1, 2 and then 4 emulated endpoints. Each endpoint serves one request at a
 * time (maxConcurrent 1, a GPU's worth) and takes LATENCY_MS per request, so the figures show
 * what pooling buys: turns per second, how long turns waited for a slot, how the turns spread,
 * and the share of follow-up turns that stayed on their session's endpoint (whose prefix cache
 * a real server would reuse). Native engine, one chat request per turn.
 *
 * Then affinity through a gateway: the same sessions from one server against two replicas
 * behind a gateway (tests/support/session_proxy.ts) that routes by the session header our
 * requests carry (as Dynamo, LiteLLM and SGLang's gateway do), by the token it hands back (as
 * llm-d does), or by neither (round robin). A replica answers a request whose conversation it
 * served before in WARM_MS (its prefix cached) and any other in COLD_MS (the prefix computed
 * again), so the figures show what affinity through a gateway buys: the share of requests that
 * found their prefix warm, and the wall time.
 *
 * Run: deno run -A bench/pool_bench.ts
 */
import "./support/help.ts";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { endpointFigures, stayedShare } from "../src/jobs/endpoints/endpoint_figures.ts";
import type { JobRecord } from "../src/jobs/record.ts";
import { field, startServer, tempDir, type TestServer } from "../tests/support/harness.ts";
import { type OllamaEmulator, startOllamaEmulator } from "../tests/support/emulator/emulator.ts";
import { median, QUICK } from "./support/common.ts";
import { type ProxyMode, startSessionProxy } from "../tests/support/session_proxy.ts";

const SESSIONS = QUICK ? 2 : 8;
const TURNS = QUICK ? 2 : 3;
const LATENCY_MS = QUICK ? 20 : 400;
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

const WARM_MS = QUICK ? 5 : 100;
const COLD_MS = QUICK ? 30 : 600;

/** A replica with a prefix cache: a conversation it served before is answered faster. */
function cachingReplica(): Promise<
  { emu: OllamaEmulator; counts: { warm: number; cold: number } }
> {
  const seen = new Set<string>();
  const counts = { warm: 0, cold: 0 };
  return startOllamaEmulator({
    chatScript: (view) => {
      const warm = seen.has(view.firstUserText);
      seen.add(view.firstUserText);
      counts[warm ? "warm" : "cold"]++;
      const ms = warm ? WARM_MS : COLD_MS;
      return { kind: "delay", ms, then: { kind: "text", text: "ok" } };
    },
  }).then((emu) => ({ emu, counts }));
}

async function throughGateway(mode: ProxyMode) {
  const replicas = await Promise.all([cachingReplica(), cachingReplica()]);
  const gateway = startSessionProxy(replicas.map((r) => r.emu.url), mode);
  const home = tempDir("od-bench-gw-");
  const server = await startServer({
    home,
    baseUrl: replicas[0]!.emu.url,
    userConfig: { backends: { gw: { url: gateway.url, kind: "openai" } } },
    env: { OLLAMA_MCP_MAX_CONCURRENT: String(SESSIONS) },
  });
  try {
    const cwd = tempDir("od-bench-work-");
    const t0 = performance.now();
    await Promise.all(Array.from({ length: SESSIONS }, async (_, n) => {
      let reply = await server.call("delegate_start", {
        engine: "native",
        backend: "gw",
        model: "qwen3:8b",
        prompt: `session ${n} ${crypto.randomUUID()}`,
        cwd,
        wait_seconds: 600,
      }, { timeoutMs: 700_000 });
      for (let turn = 2; turn <= TURNS; turn++) {
        reply = await server.call("delegate_followup", {
          job_id: field(reply.text, "job_id"),
          prompt: `turn ${turn}`,
          wait_seconds: 600,
        }, { timeoutMs: 700_000 });
      }
      if (field(reply.text, "state") !== "completed") throw new Error(reply.text);
    }));
    const wallMs = performance.now() - t0;
    const warm = replicas.reduce((n, r) => n + r.counts.warm, 0);
    const all = warm + replicas.reduce((n, r) => n + r.counts.cold, 0);
    const spread = replicas.map((r) => r.counts.warm + r.counts.cold).join("/");
    return { wallMs, warm, all, spread };
  } finally {
    await server.close();
    await gateway.close();
    for (const r of replicas) await r.emu.close();
  }
}

const pool = await Promise.all([1, 2, 3, 4].map(() => slowEndpoint()));
try {
  console.log(
    `${SESSIONS} sessions x ${TURNS} turns from ${SERVERS} servers on one state dir; each ` +
      `endpoint serves 1 request at a time, ${LATENCY_MS} ms each`,
  );
  console.log("endpoints  wall    turns/s  queue wait median  max      turns per endpoint  stayed");
  for (const n of QUICK ? [2] : [1, 2, 4]) {
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

console.log(
  `\nAffinity through a gateway: ${SESSIONS} sessions x ${TURNS} turns, 2 replicas behind it; ` +
    `a request is ${WARM_MS} ms on the replica that served its conversation, ${COLD_MS} ms elsewhere`,
);
console.log(
  `gateway routes by                 wall    follow-up requests on a warm prefix (of ${
    SESSIONS * (TURNS - 1)
  })  requests per replica`,
);
for (
  const [label, mode] of [
    ["nothing (round robin)", {}],
    ["header x-dynamo-session-id", { header: "x-dynamo-session-id" }],
    ["llm-d's echoed token", { echo: true }],
  ] as const
) {
  if (QUICK && mode.header === undefined) continue;
  const r = await throughGateway(mode);
  console.log(
    `${label.padEnd(32)}  ${(r.wallMs / 1000).toFixed(1).padStart(5)}s  ` +
      `${
        `${r.warm} (${Math.round((r.warm / (r.all - SESSIONS)) * 100)}%)`.padEnd(44)
      }  ${r.spread}`,
  );
}
