/**
 * Listings as jobs accumulate (issue 34, item 4): `delegate_list` round trip from an MCP client
 * over stdio to the real server, and `ollama-delegate jobs` as a process from its start to its
 * exit, with 20, 600 and 10,000 job folders in the state dir (completed jobs of one turn, each
 * its own session, written as the CLI tests write them). Goals: delegate_list < 50 ms and
 * `jobs` < 200 ms at 10,000. Run: deno run -A bench/listing_bench.ts [counts]
 */
import "./support/help.ts";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { startServer, tempDir } from "../tests/support/harness.ts";
import { baseRecord, cliArgv, cliEnv, writeJob } from "../tests/cli/jobs_support.ts";
import { benchArg, median, QUICK } from "./support/common.ts";

const COUNTS = benchArg(0, "20,600,10000", "20,100").split(",").map(Number);
const CALLS = QUICK ? 2 : 9;
const RUNS = QUICK ? 1 : 5;

/**
 * Listings reuse the state dir's last listing while the dir is unchanged, trusted from 2 s after
 * its last change (jobs/list_index.ts); jobs are not created in the seconds before every
 * listing, so the state dir is left to settle first. `just changed` times the listing right
 * after a new job folder appears: it lists the state dir again.
 */
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

function addJob(stateDir: string, at: number): void {
  writeJob(stateDir, baseRecord(crypto.randomUUID(), crypto.randomUUID(), { createdAt: at }));
}

// Quick mode's figures mean nothing: it does not wait.
const settle = () => new Promise((resolve) => setTimeout(resolve, QUICK ? 0 : 2500));

async function timed(call: () => Promise<{ isError?: boolean; text: string }>): Promise<number> {
  const t0 = performance.now();
  const reply = await call();
  const ms = performance.now() - t0;
  if (reply.isError) throw new Error(reply.text);
  return ms;
}

console.log(`listings (ms): delegate_list's first call of a server, then the median of ${CALLS}`);
console.log(`calls, then of ${CALLS} calls each right after a new job folder appeared; the CLI's`);
console.log(`median of ${RUNS} runs`);
console.log("job folders   first call   delegate_list   just changed   ollama-delegate jobs");
for (const count of COUNTS) {
  const stateDir = stateWith(count);
  await settle();
  const server = await startServer({ stateDir });
  const list: number[] = [];
  const changed: number[] = [];
  let first: number;
  try {
    const call = () => server.call("delegate_list", {});
    first = await timed(call);
    for (let i = 0; i < CALLS; i++) list.push(await timed(call));
    for (let i = 0; i < CALLS; i++) {
      addJob(stateDir, Date.UTC(2027, 0, 1) + i);
      changed.push(await timed(call));
    }
  } finally {
    await server.close();
  }
  await settle();
  const cli: number[] = [];
  for (let i = 0; i < RUNS; i++) cli.push(await cliMs(stateDir));
  const cell = (ms: number, width: number) => ms.toFixed(1).padStart(width);
  console.log(
    `${count.toLocaleString("en-US").padStart(11)}   ${cell(first, 10)}   ${
      cell(median(list), 13)
    }   ${cell(median(changed), 12)}   ${median(cli).toFixed(0).padStart(20)}`,
  );
}
console.log("goals at 10,000: delegate_list < 50, ollama-delegate jobs < 200");
