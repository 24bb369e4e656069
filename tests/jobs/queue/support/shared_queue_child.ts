/**
 * A second server process as far as an endpoint's shared queue goes: it drives the real
 * SharedEndpointQueues on a folder given on the command line (`<dir> <limit> [leaseMs]`), following commands on stdin,
 * and reports on stdout.
 *   enter <id> [at]      queue job <id> (at time `at`, to start two processes together); prints
 *                        "waiting <id>", then "held <id> <t>" or "left <id>", and "lost <id> <t>"
 *                        if the slot goes to another job later
 *   exit <id>            gives the slot back; prints "released <id> <t>" first
 *   leave <id>           takes a waiting job out of the queue
 *   cycle <n> <hold ms>  n jobs in a row, each holding its slot that long; prints
 *                        "cycles <json [held, released][]>"
 *   work <id> <n> <ms>   n steps of work with the slot <id> holds, each begun only after asking
 *                        whether it still holds it; prints "worked <id> <json step starts>"
 *                        and, when it was told no, "stopped <id> <t>" first
 * Times are milliseconds since the epoch with sub-millisecond precision, so that the test can
 * compare the holding intervals of two processes.
 */
import { createInterface } from "node:readline";
import process from "node:process";
import { sharedQueue } from "./shared_queue_driver.ts";

const [dir, limit, leaseMs] = process.argv.slice(2);
const shared = sharedQueue(
  dir!,
  Number(limit),
  leaseMs !== undefined ? Number(leaseMs) : undefined,
);
const now = () => performance.timeOrigin + performance.now();
const say = (line: string) => process.stdout.write(`${line}\n`);

async function cycle(n: number, holdMs: number): Promise<void> {
  const spans: Array<[number, number]> = [];
  for (let i = 0; i < n; i++) {
    const id = crypto.randomUUID();
    await shared.take(id, () => {});
    const held = now();
    await new Promise((r) => setTimeout(r, holdMs));
    spans.push([held, now()]);
    shared.giveBack(id);
  }
  say(`cycles ${JSON.stringify(spans)}`);
}

async function work(id: string, n: number, stepMs: number): Promise<void> {
  const starts: number[] = [];
  for (let i = 0; i < n; i++) {
    if (!(await shared.stillHolds(id))) {
      say(`stopped ${id} ${now()}`);
      break;
    }
    starts.push(now());
    await new Promise((r) => setTimeout(r, stepMs));
  }
  say(`worked ${id} ${JSON.stringify(starts)}`);
}

say("ready");
for await (const line of createInterface({ input: process.stdin })) {
  const [command, a, b, c] = line.trim().split(/\s+/);
  if (command === "enter") {
    if (b !== undefined) await new Promise((r) => setTimeout(r, Number(b) - Date.now()));
    shared.take(a!, () => say(`waiting ${a}`), () => say(`lost ${a} ${now()}`)).then(
      (ok) => say(ok ? `held ${a} ${now()}` : `left ${a}`),
    );
  } else if (command === "exit") {
    say(`released ${a} ${now()}`);
    shared.giveBack(a!);
  } else if (command === "leave") {
    shared.leave(a!);
  } else if (command === "cycle") {
    void cycle(Number(a), Number(b));
  } else if (command === "work") {
    void work(a!, Number(b), Number(c));
  }
}
