/**
 * Server memory and delegate_status latency while a native backend misbehaves: for each mode
 * of tests/support/hostile_backend.ts, a fresh server runs one job against it and we print
 * the server's peak RSS (VmHWM), the slowest status reply, what the backend managed to send
 * and how the job ended. Mode "replies" is a conversation instead: a start and 13 follow-ups,
 * each answered with just under the turn's cap of text while the backend claims a context of
 * 10^9 tokens, and we print the peak RSS after each turn.
 * Run: deno run -A bench/hostile_backend_bench.ts [MiB per flood, default 400] [modes...]
 */
import "./support/help.ts";
import process from "node:process";
import { field, startServer, tempDir } from "../tests/support/harness.ts";
import {
  HOSTILE_MODES,
  type HostileMode,
  peakMiB,
  startHostileBackend,
  watchJob,
} from "../tests/support/hostile_backend.ts";
import { benchArg, median, QUICK, rssMiB } from "./support/common.ts";

const MiB = 1024 * 1024;
const floodMiB = Number(benchArg(0, "400", "4"));
const modes =
  (process.argv.length > 3 ? process.argv.slice(3) : QUICK ? ["content", "replies"] : HOSTILE_MODES)
    .filter((m) => m !== "ok" && m !== "empty-deltas") as HostileMode[];
/** A job still running after this is cancelled and reported as such. */
const JOB_LIMIT_MS = 180_000;
/** Follow-ups of the "replies" conversation, and the turns whose peaks the summary names. */
const FOLLOWUPS = QUICK ? 1 : 13;
const NAMED_TURNS = [5, 12];

console.log(`hostile backend floods of ${floodMiB} MiB; one fresh server per mode`);
console.log("mode          peak RSS  baseline  status max/median  backend sent  job");
for (const mode of modes) {
  if (mode === "replies") {
    await conversation();
    continue;
  }
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

/** The "replies" conversation: the server's peak RSS after each of its turns. */
async function conversation(): Promise<void> {
  const hostile = await startHostileBackend({
    mode: "replies",
    floodBytes: 3_990_000,
    claimedContext: 1_000_000_000,
  });
  const server = await startServer({
    baseUrl: hostile.url,
    userConfig: { backends: { hostile: { url: hostile.url, kind: "openai" } } },
  });
  const peaks: number[] = [];
  const started = performance.now();
  try {
    let id = "";
    for (let turn = 1; turn <= FOLLOWUPS + 1; turn++) {
      const reply = turn === 1
        ? await server.call("delegate_start", {
          engine: "native",
          backend: "hostile",
          model: "qwen3:8b",
          prompt: "write at length",
          cwd: tempDir("od-bench-"),
          wait_seconds: 0,
        })
        : await server.call("delegate_followup", {
          job_id: id,
          prompt: "more",
          wait_seconds: 0,
        });
      id = field(reply.text, "job_id") ?? "";
      if (!id) throw new Error(reply.text);
      const watch = await watchJob(server, id, JOB_LIMIT_MS);
      peaks.push(Math.max(watch.peakMiB, peakMiB(server.pid)));
      if (watch.state !== "completed") {
        console.log(`replies       turn ${turn} ${watch.state}: ${watch.error.slice(0, 300)}`);
        break;
      }
    }
    const sent = hostile.requests.filter((r) => r.path === "/v1/chat/completions");
    const largest = Math.max(...sent.map((r) => r.receivedBytes)) / MiB;
    const named = NAMED_TURNS.map((t) => `turn ${t} ${peaks[t - 1]?.toFixed(0) ?? "-"} MiB`);
    console.log(
      `replies       peak RSS ${named.join(", ")}; largest request ${largest.toFixed(1)} MiB; ` +
        `${peaks.length} turns in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    console.log(`  peak RSS by turn (MiB): ${peaks.map((p) => p.toFixed(0)).join(", ")}`);
  } catch (e) {
    console.log(`replies       bench failed: ${(e as Error).message}`);
  } finally {
    await server.close();
    await hostile.close();
  }
}
