/**
 * `delegate_status` latency on a running job while 50 jobs run, measured round trip from an
 * MCP client over stdio. Delegates are a stand-in that prints an init event and sleeps:
 * what is measured is our server. Run: deno run -A bench/status_bench.ts
 */
import "./support/help.ts";
import { field, startServer } from "../tests/support/harness.ts";
import { startOllamaEmulator } from "../tests/support/emulator/emulator.ts";
import { fakeClaudeBin, median, QUICK } from "./support/common.ts";

const JOBS = QUICK ? 2 : 50;
const CALLS = QUICK ? 10 : 300;
const emu = await startOllamaEmulator();
const server = await startServer({
  baseUrl: emu.url,
  claudeBin: fakeClaudeBin(),
  env: { OLLAMA_MCP_MAX_CONCURRENT: "64" },
});
try {
  const ids: string[] = [];
  for (let i = 0; i < JOBS; i++) {
    const reply = await server.call("delegate_start", { prompt: `sleep ${i}`, model: "qwen3:8b" });
    ids.push(field(reply.text, "job_id")!);
  }
  // A job is queued for a moment before it runs; a busy machine makes that moment longer.
  let count = 0;
  for (const until = Date.now() + 60_000; count < JOBS && Date.now() < until;) {
    const running = await server.call("delegate_list", { state: "running", limit: 100 });
    count = (running.text.match(/^ {2}running /gm) ?? []).length;
    if (count < JOBS) await new Promise((r) => setTimeout(r, 100));
  }
  const times: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    const t0 = performance.now();
    const reply = await server.call("delegate_status", { job_id: ids[i % JOBS]! });
    times.push(performance.now() - t0);
    if (field(reply.text, "state") !== "running") throw new Error(reply.text);
  }
  console.log(`delegate_status with ${count} jobs running, ${CALLS} calls (ms):`);
  console.log(
    `  median ${median(times).toFixed(2)}   p95 ${
      [...times].sort((a, b) => a - b)[Math.floor(CALLS * 0.95)]!.toFixed(2)
    }   (goal: median < 5)`,
  );
  for (const id of ids) await server.call("delegate_cancel", { job_id: id });
} finally {
  await server.close();
  await emu.close();
}
