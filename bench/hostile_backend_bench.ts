/**
 * Server memory and delegate_status latency while a native backend misbehaves: for each mode
 * of tests/support/hostile_backend.ts, a fresh server runs one job against it and we print
 * the server's peak RSS (VmHWM), the slowest status reply, what the backend managed to send
 * and how the job ended.
 * Run: deno run -A bench/hostile_backend_bench.ts [MiB per flood, default 400] [modes...]
 */
import process from "node:process";
import { field, startServer, tempDir } from "../tests/support/harness.ts";
import {
  HOSTILE_MODES,
  type HostileMode,
  startHostileBackend,
  watchJob,
} from "../tests/support/hostile_backend.ts";
import { median, rssMiB } from "./support/common.ts";

const MiB = 1024 * 1024;
const floodMiB = Number(process.argv[2] ?? 400);
const modes = (process.argv.length > 3 ? process.argv.slice(3) : HOSTILE_MODES)
  .filter((m) => m !== "ok" && m !== "empty-deltas") as HostileMode[];
/** A job still running after this is cancelled and reported as such. */
const JOB_LIMIT_MS = 180_000;

console.log(`hostile backend floods of ${floodMiB} MiB; one fresh server per mode`);
console.log("mode          peak RSS  baseline  status max/median  backend sent  job");
for (const mode of modes) {
  const hostile = await startHostileBackend({ mode, floodBytes: floodMiB * MiB });
  const server = await startServer({
    baseUrl: hostile.url,
    userConfig: { backends: { hostile: { url: hostile.url, kind: "openai" } } },
  });
  try {
    const baseline = rssMiB(server.pid).rss;
    const started = performance.now();
    const reply = await server.call("delegate_start", {
      engine: "native",
      backend: "hostile",
      model: "qwen3:8b",
      prompt: mode,
      cwd: tempDir("od-bench-"),
      wait_seconds: 0,
    });
    const id = field(reply.text, "job_id");
    if (!id) throw new Error(reply.text);
    const watch = await watchJob(server, id, JOB_LIMIT_MS);
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    if (watch.state.startsWith("still running")) {
      await server.call("delegate_cancel", { job_id: id }, { timeoutMs: 30_000 }).catch(() => {});
    }
    const crash = watch.state.startsWith("delegate_status failed")
      ? server.stderr().trim().split("\n").filter((l) => /error|memory|fatal/i.test(l)).at(-1)
      : undefined;
    const status = watch.statusMs.length > 0
      ? `${Math.max(...watch.statusMs).toFixed(0)}/${median(watch.statusMs).toFixed(0)} ms`
      : "(ended first)";
    console.log(
      `${mode.padEnd(13)} ${watch.peakMiB.toFixed(0).padStart(5)} MiB ${
        baseline.toFixed(0).padStart(5)
      } MiB  ${status.padStart(17)}  ${
        (hostile.sentBytes() / MiB).toFixed(1).padStart(8)
      } MiB  ${watch.state} in ${seconds} s`,
    );
    console.log(`  error: ${watch.error.slice(0, 300) || "(none)"}`);
    if (crash) console.log(`  server stderr: ${crash.slice(0, 300)}`);
  } catch (e) {
    console.log(`${mode.padEnd(13)} bench failed: ${(e as Error).message}`);
  } finally {
    await server.close();
    await hostile.close();
  }
}
