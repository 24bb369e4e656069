/**
 * Time from `delegate_cancel` until the whole tree is gone, with the real Claude Code CLI
 * whose Bash tool started the tree: one that honours SIGTERM, one with a TERM-deaf member
 * (goal: grace + 1 s; grace is 3 s). Run: deno run -A bench/cancel_bench.ts [runs]
 */
import "./support/help.ts";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { alive, field, startServer, tempDir, until } from "../tests/support/harness.ts";
import { startOllamaEmulator } from "../tests/support/emulator/emulator.ts";
import { benchArg, median } from "./support/common.ts";

const runs = Number(benchArg(0, "3", "1"));
const POLITE =
  "@bash sh -c 'sleep 311 & echo $! > pids.txt; setsid sleep 312 & echo $! >> pids.txt; wait'";
const DEAF = '@bash sh -c \'sleep 313 & echo $! > pids.txt; setsid sh -c "trap \\"\\" TERM; ' +
  "sleep 314\" & echo $! >> pids.txt; wait'";

const emu = await startOllamaEmulator();
// The pids followed are what `echo $!` prints: inside Claude Code's sandbox they are pids of its
// own pid namespace and name other processes here, so its sandbox is off (as in
// tests/e2e/lifecycle_test.ts); the jail around Claude Code stays.
const server = await startServer({ baseUrl: emu.url, env: { OLLAMA_MCP_SANDBOX: "off" } });
try {
  for (const [name, prompt] of [["honours SIGTERM", POLITE], ["ignores SIGTERM", DEAF]] as const) {
    const times: number[] = [];
    const replies: number[] = [];
    for (let i = 0; i < runs; i++) {
      const work = tempDir("od-bench-");
      const started = await server.call("delegate_start", {
        prompt,
        model: "qwen3:8b",
        cwd: work,
        allowed_tools: ["Bash"],
      });
      const id = field(started.text, "job_id")!;
      const pids = await until(
        () => {
          const path = join(work, "pids.txt");
          if (!existsSync(path)) return undefined;
          const list = readFileSync(path, "utf8").trim().split("\n").map(Number);
          return list.length === 2 && list.every(alive) ? list : undefined;
        },
        60_000,
        "tree",
      );
      const t0 = performance.now();
      const gone = until(() => pids.every((p) => !alive(p)) || undefined, 10_000, "tree gone")
        .then(() => performance.now() - t0);
      await server.call("delegate_cancel", { job_id: id });
      const returned = performance.now() - t0;
      times.push(await gone);
      replies.push(returned);
    }
    const list = (xs: number[]) => xs.map((t) => t.toFixed(0)).join(", ");
    console.log(`cancel, tree that ${name} (${runs} runs):`);
    console.log(
      `  Bash-started processes gone: median ${median(times).toFixed(0)} ms (${list(times)})`,
    );
    console.log(
      `  claude exited, cancel returned: median ${median(replies).toFixed(0)} ms (${
        list(replies)
      })`,
    );
  }
} finally {
  await server.close();
  await emu.close();
}
