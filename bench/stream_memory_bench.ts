/**
 * Server memory while a delegate prints 200 MB of stream-json: the transcript goes to disk
 * and only what is shown stays in memory. Run: deno run -A bench/stream_memory_bench.ts [MB]
 */
import { statSync } from "node:fs";
import { join } from "node:path";
import { field, startServer } from "../tests/support/harness.ts";
import { startOllamaEmulator } from "../tests/support/ollama_emulator.ts";
import { benchArg, fakeClaudeBin, rssMiB } from "./support/common.ts";

const megabytes = Number(benchArg(0, "200", "2"));
const emu = await startOllamaEmulator();
const server = await startServer({ baseUrl: emu.url, claudeBin: fakeClaudeBin() });
try {
  // A first small job warms every code path, so the baseline includes them.
  await server.call("delegate_start", { prompt: "flood 1", model: "qwen3:8b", wait_seconds: 60 });
  const before = rssMiB(server.pid);
  const reply = await server.call("delegate_start", {
    prompt: `flood ${megabytes}`,
    model: "qwen3:8b",
    wait_seconds: 600,
  }, { timeoutMs: 620_000 });
  const after = rssMiB(server.pid);
  const id = field(reply.text, "job_id")!;
  const size = statSync(join(server.stateDir, id, "stream.jsonl")).size / 1024 / 1024;
  console.log(
    `stream of ${size.toFixed(0)} MiB written to disk; state ${field(reply.text, "state")}, ` +
      `tool calls ${field(reply.text, "tool calls")}${
        field(reply.text, "error") ? `; error: ${field(reply.text, "error")}` : ""
      }`,
  );
  console.log(
    `server RSS before ${before.rss.toFixed(1)} MiB, after ${after.rss.toFixed(1)} MiB, ` +
      `peak ${after.peak.toFixed(1)} MiB`,
  );
  console.log(
    `  growth of peak over baseline: ${(after.peak - before.rss).toFixed(1)} MiB (goal < 30)`,
  );
} finally {
  await server.close();
  await emu.close();
}
