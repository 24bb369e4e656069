/** Turn tickets: distinct numbers across processes, never half-written, never taken over. */
import { tempDir } from "../../support/temp_dir.ts";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { identityOf, selfIdentity } from "../../../src/platform/process_identity.ts";
import { type Queue, Wakeups } from "../../../src/jobs/queue/queue.ts";
import {
  takeTurn,
  type TurnJobState,
  TurnQueues,
  type TurnTicket,
} from "../../../src/jobs/queue/turn_queue.ts";
import type { ProcessIdentity } from "../../../src/platform/process_identity.ts";

const SESSION = "0b6f4a52-3d39-4f0e-9a52-5c1f7f7a1e01";
const jobId = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`;
const MODULE = fileURLToPath(new URL("../../../src/jobs/queue/turn_queue.ts", import.meta.url));

function fresh(): TurnQueues {
  return new TurnQueues(tempDir("od-turns-"));
}

/** The earliest turn before `turn` whose job has not ended: the one a take waits for. */
async function blockingTurn(
  turns: TurnQueues,
  sessionId: string,
  turn: number,
  self: ProcessIdentity,
  state: (jobId: string) => Promise<TurnJobState>,
): Promise<TurnTicket | undefined> {
  const mine = { turn, jobId: "", owner: self };
  return (await turns.queue(sessionId, { self, state }).look(mine)).holders[0];
}

/** A queue that holds `mine` back while `blocking` names a turn. */
function queueOf(blocking: () => Promise<TurnTicket | undefined>): Queue<TurnTicket, TurnTicket> {
  return {
    limit: 1,
    look: async () => {
      const holder = await blocking();
      return { holders: holder ? [holder] : [], ahead: [] };
    },
    hold: (mine) => Promise.resolve(mine),
  };
}

Deno.test("ticket: tickets taken at once get distinct numbers, from the lowest free one", async () => {
  const turns = fresh();
  const owner = await selfIdentity();
  const numbers = await Promise.all(
    Array.from(
      { length: 20 },
      (_, i) => turns.queue(SESSION).ticket(2, { jobId: jobId(i), owner }),
    ),
  );
  assert.deepEqual([...numbers].sort((a, b) => a - b), Array.from({ length: 20 }, (_, i) => i + 2));
  const listed = await turns.queue(SESSION).tickets();
  assert.deepEqual(listed.map((t) => t.turn), [...numbers].sort((a, b) => a - b));
  for (const t of listed) assert.equal(t.jobId, jobId(numbers.indexOf(t.turn)));
  // Nothing but tickets is left behind (the temporary files are gone).
  assert.equal(readdirSync(turns.dirOf(SESSION)).length, 20);
  // A later ticket comes after every existing one, whatever `from` says.
  assert.equal(await turns.queue(SESSION).ticket(1, { jobId: jobId(99), owner }), 22);
});

Deno.test("ticket: processes racing for turns of one session never share a number, and no one reads a half-written ticket", async () => {
  const turns = fresh();
  const script = `
    import { TurnQueues } from ${JSON.stringify(MODULE)};
    const turns = new TurnQueues(${JSON.stringify(turns.sessionsDir)});
    const owner = { pid: Deno.pid, startTime: "x" };
    const got = await Promise.all(Array.from({ length: 10 }, (_, i) =>
      turns.queue(${JSON.stringify(SESSION)}).ticket(2, { jobId: crypto.randomUUID(), owner })));
    console.log(JSON.stringify(got));
  `;
  const children = Array.from({ length: 4 }, () =>
    new Promise<number[]>((resolve, reject) => {
      const child = spawn("deno", ["eval", "--no-check", script], {
        stdio: ["ignore", "pipe", "inherit"],
      });
      let out = "";
      child.stdout.on("data", (d) => (out += d));
      child.on("close", (code) =>
        code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`child exited ${code}`)));
    }));
  // Meanwhile, read every ticket as it appears: each must already name its job.
  let reading = true;
  let reads = 0;
  const torn: number[] = [];
  const reader = (async () => {
    while (reading) {
      for (const t of await turns.queue(SESSION).tickets().catch(() => [])) {
        reads++;
        if (t.jobId === "") torn.push(t.turn);
      }
      await new Promise((r) => setTimeout(r, 1));
    }
  })();
  const all = (await Promise.all(children)).flat();
  reading = false;
  await reader;
  assert.equal(all.length, 40);
  assert.equal(new Set(all).size, 40, `shared numbers: ${all.sort((a, b) => a - b)}`);
  assert.deepEqual([...all].sort((a, b) => a - b), Array.from({ length: 40 }, (_, i) => i + 2));
  assert.ok(reads > 0, "the reader saw tickets");
  assert.deepEqual(torn, [], "tickets read before they were whole");
});

Deno.test("look: running and unrecorded tickets of live owners block; ended ones and those of dead owners do not, and stay", async () => {
  const turns = fresh();
  const self = await selfIdentity();
  const sleeper = spawn("sleep", ["30"], { stdio: "ignore" });
  const quick = spawn("true", [], { stdio: "ignore" });
  const quickIdentity = await identityOf(quick.pid!);
  await new Promise((r) => quick.on("close", r));
  try {
    const living = (await identityOf(sleeper.pid!))!;
    const dead = quickIdentity ?? { pid: quick.pid!, startTime: "gone" };
    await turns.queue(SESSION).ticket(1, { jobId: jobId(1), owner: living }); // 1: ended
    await turns.queue(SESSION).ticket(1, { jobId: jobId(2), owner: dead }); // 2: no record, owner dead
    await turns.queue(SESSION).ticket(1, { jobId: jobId(3), owner: self }); // 3: mine, never created
    await turns.queue(SESSION).ticket(1, { jobId: jobId(4), owner: living }); // 4: no record, owner alive
    await turns.queue(SESSION).ticket(1, { jobId: jobId(5), owner: living }); // 5: running
    const states: Record<string, TurnJobState> = {
      [jobId(1)]: "ended",
      [jobId(5)]: "running",
    };
    const state = (id: string) => Promise.resolve(states[id] ?? "missing");
    assert.equal(await blockingTurn(turns, SESSION, 1, self, state), undefined);
    assert.equal(await blockingTurn(turns, SESSION, 4, self, state), undefined);
    assert.equal((await blockingTurn(turns, SESSION, 5, self, state))?.turn, 4);
    states[jobId(4)] = "ended";
    assert.equal((await blockingTurn(turns, SESSION, 9, self, state))?.turn, 5);
    states[jobId(5)] = "ended";
    assert.equal(await blockingTurn(turns, SESSION, 9, self, state), undefined);
    // Judging a ticket stale never removes it: only its owner does.
    for (let n = 1; n <= 5; n++) assert.ok(existsSync(join(turns.dirOf(SESSION), `${n}.json`)));
    await turns.queue(SESSION).leave({ turn: 3, jobId: jobId(4) });
    assert.ok(existsSync(join(turns.dirOf(SESSION), "3.json")), "another job cannot release it");
    await turns.queue(SESSION).leave({ turn: 3, jobId: jobId(3) });
    assert.ok(!existsSync(join(turns.dirOf(SESSION), "3.json")));
  } finally {
    sleeper.kill("SIGKILL");
  }
});

Deno.test("look: a session's ended turns are not asked about again by its next turns' queues", async () => {
  const turns = fresh();
  const self = await selfIdentity();
  for (let n = 1; n <= 4; n++) {
    await turns.queue(SESSION).ticket(1, { jobId: jobId(n), owner: self });
  }
  const states: Record<string, TurnJobState> = {
    [jobId(1)]: "ended",
    [jobId(2)]: "ended",
    [jobId(3)]: "running",
  };
  const asked: string[] = [];
  const state = (id: string) => {
    asked.push(id);
    return Promise.resolve(states[id] ?? "missing");
  };
  assert.equal((await blockingTurn(turns, SESSION, 4, self, state))?.turn, 3);
  assert.deepEqual(asked, [jobId(1), jobId(2), jobId(3)]);
  // Turn 3 ends; turn 5's queue, made afresh as each turn's is, asks only about turns 3 and 4.
  states[jobId(3)] = "ended";
  states[jobId(4)] = "ended";
  asked.length = 0;
  assert.equal(await blockingTurn(turns, SESSION, 5, self, state), undefined);
  assert.deepEqual(asked, [jobId(3), jobId(4)]);
  // What one session learnt is not another's: a new session's tickets are asked about.
  const other = "0b6f4a52-3d39-4f0e-9a52-5c1f7f7a1e02";
  await turns.queue(other).ticket(1, { jobId: jobId(1), owner: self });
  asked.length = 0;
  assert.equal(await blockingTurn(turns, other, 2, self, state), undefined);
  assert.deepEqual(asked, [jobId(1)]);
});

Deno.test("takeTurn: ends when nothing blocks, wakes on a nudge, stops on abort", async () => {
  const wakeups = new Wakeups();
  let blocked = true;
  const seen: number[] = [];
  const ticket = { turn: 1, jobId: jobId(1), owner: { pid: 1, startTime: "" } };
  const mine = { turn: 2, jobId: jobId(2), owner: ticket.owner };
  const waiting = takeTurn(queueOf(() => Promise.resolve(blocked ? ticket : undefined)), mine, {
    signal: new AbortController().signal,
    waiting: (t) => seen.push(t.turn),
    wakeups,
    pollMs: 60_000,
  });
  await new Promise((r) => setTimeout(r, 20));
  blocked = false;
  const t0 = Date.now();
  wakeups.wakeAll();
  assert.equal(await waiting, true);
  assert.ok(Date.now() - t0 < 1000, "woken, not polled");
  assert.deepEqual(seen, [1], "announced once");

  const abort = new AbortController();
  const stopped = takeTurn(queueOf(() => Promise.resolve(ticket)), mine, {
    signal: abort.signal,
    wakeups,
    pollMs: 60_000,
  });
  await new Promise((r) => setTimeout(r, 20));
  abort.abort();
  assert.equal(await stopped, false);
});
