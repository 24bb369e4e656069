/**
 * A job's start path through its queues, in one process: from `start` (or `followup`) to the
 * engine's turn starting, with the endpoint's queue shared through the state dir (`.slots`)
 * as a server keeps it, and the session's turn queue. Also the hand-over: how soon a job
 * waiting for a slot of this process starts once the holder ends. The engine is the job
 * layer's stand-in (tests/jobs/support/fake_engine.ts): what is measured is the job layer.
 * A follow-up's start grows with its session's turns (issue 34: median 14 ms over 20 turns, 40 ms
 * over 200, a new session's start 8 ms either way): to know whether an earlier turn still runs,
 * the turn queue (src/jobs/queue/turn_queue.ts, #earliestRunning) reads every ticket file of the
 * session, and the turn reads them again to find its session's turns (SessionOrder.records).
 * Reading them through Deno's asynchronous file API cost three to four times the CPU time of
 * reading them synchronously; they are now read synchronously, and the jobs a session's
 * queues found ended are remembered across its turns (TurnQueues), so ended turns are not asked
 * about again. What still grows with the turns: the tickets are read (about 4 ms of CPU for
 * 200), and the session index (store.addSessionJob) is read and rewritten whole.
 * Run: deno run -A bench/job_start_bench.ts [rounds]
 */
import "./support/help.ts";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { FakeEngine, managerWith, newTurn } from "../tests/jobs/support/fake_engine.ts";
import { benchArg, median } from "./support/common.ts";

const ROUNDS = Number(benchArg(0, "200", "5"));

/** A manager whose one endpoint (never probed) has a limit shared through `.slots`. */
function scene(limit: number) {
  const engine = new FakeEngine();
  const { manager } = managerWith(engine, {
    maxConcurrent: 8,
    slotsDir: join(mkdtempSync(join(tmpdir(), "od-bench-")), ".slots"),
    pools: { baseUrl: "http://127.0.0.1:9", defaultLimit: limit, backends: {}, env: {} },
  });
  return { engine, manager };
}

async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((r) => setTimeout(r, 0));
}

function summary(label: string, times: number[]): void {
  const sorted = [...times].sort((a, b) => a - b);
  const p95 = sorted[Math.floor(sorted.length * 0.95)]!;
  console.log(
    `${label.padEnd(44)} median ${median(times).toFixed(2)} ms   p95 ${p95.toFixed(2)} ms`,
  );
}

// New sessions: a fresh session queue, a free slot.
{
  const { engine, manager } = scene(4);
  const times: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const t0 = performance.now();
    const view = await manager.start(newTurn(`job ${i}`));
    const turn = await engine.turn(i);
    times.push(performance.now() - t0);
    turn.end();
    await until(() => manager.runningCount === 0);
    void view;
  }
  summary(`start -> turn running (${ROUNDS} new sessions)`, times);
}

// Follow-ups: the session queue holds every earlier turn, each ended.
{
  const { engine, manager } = scene(4);
  const times: number[] = [];
  let previous = (await manager.start(newTurn("turn 1"))).record;
  (await engine.turn(0)).end();
  await until(() => manager.runningCount === 0);
  for (let i = 1; i <= ROUNDS; i++) {
    const settled = (await manager.get(previous.id)).record;
    const t0 = performance.now();
    const view = await manager.followup(settled, `turn ${i + 1}`, {});
    const turn = await engine.turn(i);
    times.push(performance.now() - t0);
    turn.end();
    await until(() => manager.runningCount === 0);
    previous = view.record;
  }
  summary(`followup -> turn running (${ROUNDS} turns, 1 session)`, times);
}

// Hand-over: limit 1, the next job waits in the endpoint's queue for the holder to end.
{
  const { engine, manager } = scene(1);
  const times: number[] = [];
  await manager.start(newTurn("holder 0"));
  let holder = await engine.turn(0);
  for (let i = 1; i <= ROUNDS; i++) {
    await manager.start(newTurn(`waiter ${i}`));
    if (engine.turns.length !== i) throw new Error("the waiter did not wait for the slot");
    const t0 = performance.now();
    holder.end();
    holder = await engine.turn(i);
    times.push(performance.now() - t0);
  }
  holder.end();
  await until(() => manager.runningCount === 0);
  summary(`holder ends -> next turn running (${ROUNDS})`, times);
}
process.exit(0);
