/**
 * Seconds from the backend's death to a failed job, per engine, with the same setup: the real
 * server (default state-dir layout, ~/.ollama-mcp/jobs), the real Claude Code CLI, and the
 * emulator closed while a reply hangs, or while the delegate's 3 s command runs (then the
 * figure includes the rest of that command). Goal: under 15 s on both engines.
 * Run: deno run -A --unstable-no-legacy-abort bench/backend_death_bench.ts [runs]
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { field, tempDir, until } from "../tests/support/harness.ts";
import { startScene } from "../tests/support/scene.ts";
import { median } from "./support/common.ts";

const runs = Number(process.argv[2] ?? 3);
const ENGINES = ["claude", "native"] as const;
const CASES = {
  "reply hangs": { prompt: "@hang", ready: "request" },
  "3 s command runs": { prompt: "@bash touch started && sleep 3\n@reply never", ready: "file" },
} as const;

async function once(engine: (typeof ENGINES)[number], which: keyof typeof CASES) {
  const home = tempDir("od-bench-home-");
  await using scene = await startScene({ home, stateDir: join(home, ".ollama-mcp", "jobs") });
  const work = tempDir("od-bench-work-");
  const { prompt, ready } = CASES[which];
  const started = await scene.call("delegate_start", {
    prompt,
    engine,
    model: "qwen3:8b",
    cwd: work,
    allowed_tools: ["Bash"],
  });
  const id = field(started.text, "job_id")!;
  const requests = () =>
    engine === "claude" ? scene.emulator.messageRequests() : scene.emulator.nativeChatRequests();
  await until(
    () =>
      (ready === "file" ? existsSync(join(work, "started")) : requests().length > 0) || undefined,
    90_000,
    "the turn under way",
  );
  const t0 = performance.now();
  await scene.emulator.close();
  const status = await scene.call("delegate_status", { job_id: id, wait_seconds: 300 });
  const seconds = (performance.now() - t0) / 1000;
  const state = field(status.text, "state");
  const error = field(status.text, "error") ?? "";
  return { seconds, outcome: `${state}, ${error.split(":")[0]}` };
}

for (const which of Object.keys(CASES) as (keyof typeof CASES)[]) {
  console.log(`backend killed while the ${which} (${runs} runs):`);
  for (const engine of ENGINES) {
    const times: number[] = [];
    const outcomes = new Set<string>();
    for (let i = 0; i < runs; i++) {
      const { seconds, outcome } = await once(engine, which);
      times.push(seconds);
      outcomes.add(outcome);
    }
    const list = times.map((t) => t.toFixed(1)).join(", ");
    console.log(
      `  ${engine.padEnd(6)} median ${median(times).toFixed(1)} s (${list}); ended ${
        [...outcomes].join(" / ")
      }`,
    );
  }
}
