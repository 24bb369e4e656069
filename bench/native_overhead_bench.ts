/**
 * Time the native engine spends in our own code per model turn: everything except waiting
 * for the model (the HTTP exchange with the emulator). Each turn makes one Read call of a
 * small file, so the figure includes tool dispatch, confinement, transcript and history.
 *
 *   deno run -A bench/native_overhead_bench.ts [turns=40] [runs=10]
 */
import "./support/help.ts";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { ChatClient } from "../src/backends/openai/chat.ts";
import { NativeEngine } from "../src/engines/native/run.ts";
import type { TurnSink } from "../src/engines/types.ts";
import { resolveBackend } from "../src/settings/backends.ts";
import { startOllamaEmulator } from "../tests/support/emulator/emulator.ts";
import { tempDir } from "../tests/support/harness.ts";
import { benchArg, median } from "./support/common.ts";

const turns = Number(benchArg(0, "40", "3"));
const runs = Number(benchArg(1, "10", "2"));

// Measures the model's share by timing every completion; nothing about it is changed.
let modelMs = 0;
const complete = ChatClient.prototype.complete;
ChatClient.prototype.complete = async function (...args) {
  const t0 = performance.now();
  try {
    return await complete.apply(this, args);
  } finally {
    modelMs += performance.now() - t0;
  }
};

const emu = await startOllamaEmulator({
  chatScript: (view) =>
    view.toolResults.length < turns - 1
      ? {
        kind: "tool_calls",
        calls: [{
          name: "Read",
          arguments: { file_path: "a.txt", offset: view.toolResults.length + 1 },
        }],
      }
      : { kind: "text", text: "done" },
});
const engine = new NativeEngine({ sandbox: "on", parentEnv: {} });
// The job layer hands the engine its turn's backend resolved (TurnSpec.backend).
const backend = resolveBackend({ baseUrl: emu.url, backends: {}, env: {} }, undefined)!;
const sink: TurnSink = {
  activity() {},
  toolCall() {},
  sessionStarted() {},
  childStarted() {},
};
const perTurn: number[] = [];
try {
  for (let run = 0; run < runs; run++) {
    const work = tempDir("od-bench-");
    const dir = tempDir("od-bench-job-");
    writeFileSync(
      join(work, "a.txt"),
      Array.from({ length: 200 }, (_, i) => `line ${i}`).join("\n"),
    );
    writeFileSync(join(dir, "prompt.txt"), "read a.txt line by line");
    modelMs = 0;
    const t0 = performance.now();
    const turn = await engine.start({
      jobId: crypto.randomUUID(),
      sessionId: crypto.randomUUID(),
      turn: 1,
      resume: false,
      model: "qwen3:8b",
      cwd: work,
      options: { permissionMode: "acceptEdits", addDirs: [], maxTurns: 100 },
      dir,
      promptPath: join(dir, "prompt.txt"),
      backend,
    }, sink);
    const outcome = await turn.done;
    const total = performance.now() - t0;
    if (!outcome.ok || outcome.usage?.numTurns !== turns) {
      throw new Error(`run failed: ${outcome.errorText} (${outcome.usage?.numTurns} turns)`);
    }
    if (run > 0) perTurn.push((total - modelMs) / turns); // run 0 warms the JIT
  }
  console.log(
    `native engine overhead per turn (our code, model excluded): median ${
      median(perTurn).toFixed(2)
    } ms over ${perTurn.length} runs of ${turns} turns (goal < 5 ms)`,
  );
} finally {
  await emu.close();
}
