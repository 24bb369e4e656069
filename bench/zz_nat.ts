import { join } from "node:path";
import { writeFileSync } from "node:fs";
import { NativeEngine } from "../src/engines/native/run.ts";
import { startOllamaEmulator } from "../tests/support/ollama_emulator.ts";
import { tempDir } from "../tests/support/harness.ts";
const emu = await startOllamaEmulator();
const engine = new NativeEngine({ baseUrl: emu.url, backends: {}, sandbox: "on", parentEnv: {} });
const work = Deno.args[0];
for (let i = 0; i < 4; i++) {
  const dir = tempDir("od-job-");
  writeFileSync(join(dir, "prompt.txt"), `@bash echo hi ${i}\n@reply ok`);
  const t0 = performance.now();
  const files: string[] = []; const partial: string[] = [];
  const turn = await engine.start({ jobId: crypto.randomUUID(), sessionId: crypto.randomUUID(), turn: 1, resume: false, model: "qwen3:8b", cwd: work, options: { permissionMode: "acceptEdits", addDirs: [] }, dir, promptPath: join(dir, "prompt.txt") },
    { activity() {}, toolCall() {}, sessionStarted() {}, childStarted() {}, fileChanged: (f) => files.push(f), changesPartial: (p) => partial.push(p), warning: (w) => console.log("warn", w) });
  const out = await turn.done;
  console.log(i, out.ok, (performance.now() - t0).toFixed(0), "ms", files.length, partial);
}
await emu.close();
