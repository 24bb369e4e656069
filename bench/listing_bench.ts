/**
 * Listings as jobs accumulate (issue 34, item 4): `delegate_list` round trip from an MCP client
 * over stdio to the real server, and `ollama-delegate jobs` as a process from its start to its
 * exit, with 20, 600 and 10,000 job folders in the state dir (completed jobs of one turn, each
 * its own session, written as the CLI tests write them). Goals: delegate_list < 50 ms and
 * `jobs` < 200 ms at 10,000. Run: deno run -A bench/listing_bench.ts [counts]
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { startServer, tempDir } from "../tests/support/harness.ts";
import { baseRecord, cliArgv, cliEnv, writeJob } from "../tests/cli/jobs_support.ts";
import { benchArg, median, QUICK } from "./support/common.ts";

const COUNTS = benchArg(0, "20,600,10000", "20,100").split(",").map(Number);
const CALLS = QUICK ? 2 : 9;
const RUNS = QUICK ? 1 : 5;

function stateWith(count: number): string {
  const stateDir = join(tempDir("od-bench-list-"), "jobs");
  const t = Date.UTC(2026, 0, 1);
  for (let i = 0; i < count; i++) {
    writeJob(
      stateDir,
      baseRecord(crypto.randomUUID(), crypto.randomUUID(), {
        createdAt: t + i * 1000,
        startedAt: t + i * 1000,
        endedAt: t + i * 1000 + 2500,
      }),
    );
  }
  return stateDir;
}

function cliMs(stateDir: string): Promise<number> {
  const ctx = cliEnv({ stateDir });
  const { command, args } = cliArgv(["jobs"]);
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: ctx.cwd, env: ctx.env, stdio: "ignore" });
    child.on("error", reject);
    child.on("close", (code) => {
      if (code !== 0) reject(new Error(`ollama-delegate jobs exited with ${code}`));
      else resolve(performance.now() - t0);
    });
  });
}

console.log(`listings, median of ${CALLS} calls / ${RUNS} runs (ms):`);
console.log("job folders   delegate_list   ollama-delegate jobs");
for (const count of COUNTS) {
  const stateDir = stateWith(count);
  const server = await startServer({ stateDir });
  const list: number[] = [];
  try {
    await server.call("delegate_list", {});
    for (let i = 0; i < CALLS; i++) {
      const t0 = performance.now();
      const reply = await server.call("delegate_list", {});
      list.push(performance.now() - t0);
      if (reply.isError) throw new Error(reply.text);
    }
  } finally {
    await server.close();
  }
  const cli: number[] = [];
  for (let i = 0; i < RUNS; i++) cli.push(await cliMs(stateDir));
  console.log(
    `${count.toLocaleString("en-US").padStart(11)}   ${median(list).toFixed(1).padStart(13)}   ${
      median(cli).toFixed(0).padStart(20)
    }`,
  );
}
console.log("goals at 10,000: delegate_list < 50, ollama-delegate jobs < 200");
