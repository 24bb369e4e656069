/**
 * Seconds from the backend's death to the job's end, per engine, with the same setup: the real
 * server (default state-dir layout, ~/.ollama-mcp/jobs), the real Claude Code CLI, and the
 * emulator closed while a reply hangs, or while the delegate's 3 s command runs (then the
 * figure includes the rest of that command), or, with the default Ollama a pool of two
 * emulators, the endpoint serving the turn closed while its reply hangs (a native turn then
 * goes on at the other endpoint; a claude turn is pinned to its endpoint and fails).
 *
 * The docs' figures for how soon a job notices a dead backend come from here (README
 * Troubleshooting, docs/engines.md, docs/scale.md).
 * Run: deno run -A --unstable-no-legacy-abort bench/backend_death_bench.ts [runs]
 */
import "./support/help.ts";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { field, tempDir, until } from "../tests/support/harness.ts";
import type { OllamaEmulator } from "../tests/support/emulator/emulator.ts";
import { startScene } from "../tests/support/scene.ts";
import { benchArg, median, QUICK } from "./support/common.ts";

const runs = Number(benchArg(0, "3", "1"));
const ENGINES = ["claude", "native"] as const;
const CASES = {
  "backend killed while the reply hangs": { prompt: "@hang", ready: "request", pool: false },
  "backend killed while the 3 s command runs": {
    prompt: "@bash touch started && sleep 3\n@reply never",
    ready: "file",
    pool: false,
  },
  "one endpoint of a pool of two killed while the reply hangs": {
    prompt: "@hang",
    ready: "request",
    pool: true,
  },
} as const;

async function once(engine: (typeof ENGINES)[number], which: keyof typeof CASES) {
  const { prompt, ready, pool } = CASES[which];
  const home = tempDir("od-bench-home-");
  await using scene = await startScene({
    home,
    stateDir: join(home, ".ollama-mcp", "jobs"),
    ...(pool ? { server: false as const } : {}),
  });
  const endpoints: OllamaEmulator[] = [scene.emulator];
  if (pool) {
    endpoints.push(await scene.startEmulator());
    await scene.startServer({
      env: { OLLAMA_MCP_BASE_URLS: endpoints.map((e) => e.url).join(",") },
    });
  }
  const work = tempDir("od-bench-work-");
  const started = await scene.call("delegate_start", {
    prompt,
    engine,
    model: "qwen3:8b",
    cwd: work,
    allowed_tools: ["Bash"],
  });
  const id = field(started.text, "job_id")!;
  const requests = (e: OllamaEmulator) =>
    engine === "claude" ? e.messageRequests() : e.nativeChatRequests();
  const serving = await until(
    () =>
      ready === "file"
        ? (existsSync(join(work, "started")) ? scene.emulator : undefined)
        : endpoints.find((e) => requests(e).length > 0),
    90_000,
    "the turn under way",
  );
  // The other endpoint answers what moves to it (the emulator reads "@hang" from the task).
  for (const e of endpoints) {
    if (e !== serving) e.setChatScript(() => ({ kind: "text", text: "resumed elsewhere" }));
  }
  const t0 = performance.now();
  await serving.close();
  const status = await scene.call("delegate_status", { job_id: id, wait_seconds: 300 });
  const seconds = (performance.now() - t0) / 1000;
  const state = field(status.text, "state");
  const error = field(status.text, "error");
  return { seconds, outcome: error ? `${state}, ${error.split(":")[0]}` : `${state}` };
}

for (const which of (Object.keys(CASES) as (keyof typeof CASES)[]).slice(0, QUICK ? 1 : 3)) {
  console.log(`${which} (${runs} runs):`);
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
