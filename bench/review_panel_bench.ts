/**
 * Wall time of delegate_review with one reviewer against a panel of three on the same diff,
 * through the real server on the native engine. The emulator takes `delay` ms before each
 * reviewer's answer, standing in for a model's time to read a diff and answer; the panel's
 * reviewers run in parallel within maxConcurrent (4 by default), so a panel costs about one
 * reviewer's time while slots are free, and about three with maxConcurrent 1.
 *
 * Run: deno run -A bench/review_panel_bench.ts [runs] [delay ms]
 */
import "./support/help.ts";
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startServer, tempDir } from "../tests/support/harness.ts";
import { type ChatRequestView, startOllamaEmulator } from "../tests/support/emulator/emulator.ts";
import { benchArg, median } from "./support/common.ts";

const runs = Number(benchArg(0, "3", "1"));
const delay = Number(benchArg(1, "3000", "100"));
const MODELS = ["qwen3-coder:30b", "gpt-oss:20b", "llama3.1:8b"];

function repo(): string {
  const dir = tempDir("od-bench-review-");
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd: dir });
  git("init", "-q", "-b", "main");
  const body = Array.from({ length: 200 }, (_, i) => `export const v${i} = ${i};`).join("\n");
  writeFileSync(join(dir, "app.ts"), `${body}\n`);
  git("add", ".");
  git("commit", "-q", "-m", "one");
  writeFileSync(join(dir, "app.ts"), `${body.replaceAll("= 1", "= eval(input) + 1")}\n`);
  return dir;
}

const emu = await startOllamaEmulator({
  models: MODELS.map((name) => ({ name })),
  chatScript: (view: ChatRequestView) =>
    view.firstUserText.includes("Review these changes")
      ? {
        kind: "delay",
        ms: delay,
        then: {
          kind: "text",
          text: JSON.stringify({
            findings: [{
              file: "app.ts",
              line: 2,
              severity: "high",
              claim: "eval of input",
              evidence: "eval(input)",
            }],
          }),
        },
      }
      : undefined,
});
try {
  for (const slots of [4, 1]) {
    const server = await startServer({
      baseUrl: emu.url,
      env: { OLLAMA_MCP_MAX_CONCURRENT: String(slots) },
    });
    try {
      const dir = repo();
      const time = async (args: Record<string, unknown>) => {
        const t0 = performance.now();
        const r = await server.call("delegate_review", {
          cwd: dir,
          engine: "native",
          wait_seconds: 600,
          ...args,
        }, { timeoutMs: 700_000 });
        if (r.isError) throw new Error(r.text);
        return performance.now() - t0;
      };
      const one: number[] = [];
      const panel: number[] = [];
      for (let i = 0; i < runs; i++) {
        one.push(await time({ model: MODELS[0] }));
        panel.push(await time({ models: MODELS }));
      }
      const list = (xs: number[]) => xs.map((t) => (t / 1000).toFixed(2)).join(", ");
      console.log(`maxConcurrent ${slots}, ${delay} ms per answer, ${runs} runs:`);
      console.log(
        `  one reviewer:         median ${(median(one) / 1000).toFixed(2)} s (${list(one)})`,
      );
      console.log(
        `  panel of 3 reviewers: median ${(median(panel) / 1000).toFixed(2)} s (${list(panel)}), ` +
          `${(median(panel) / median(one)).toFixed(2)}x`,
      );
    } finally {
      await server.close();
    }
  }
} finally {
  await emu.close();
}
