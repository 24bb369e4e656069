/**
 * A second server process as far as the shared line goes: it drives the real Admission on
 * a folder given on the command line, following commands on stdin, and reports on stdout.
 *   enter <id> [at]      queue job <id> (at time `at`, to start two processes together); prints
 *                        "waiting <id>", then "held <id> <t>" or "left <id>"
 *   exit <id>            gives the slot back; prints "released <id> <t>" first
 *   leave <id>           takes a waiting job out of the line
 *   cycle <n> <hold ms>  n jobs in a row, each holding its slot that long; prints
 *                        "cycles <json [held, released][]>"
 * Times are milliseconds since the epoch with sub-millisecond precision, so that the test can
 * compare the holding intervals of two processes.
 */
import { createInterface } from "node:readline";
import process from "node:process";
import { Admission } from "../../../src/jobs/admission.ts";

const [dir, limit] = process.argv.slice(2);
const gate = new Admission(dir!, { defaultLimit: Number(limit), backendLimits: {} }, {
  pollMs: 40,
});
const now = () => performance.timeOrigin + performance.now();
const say = (line: string) => process.stdout.write(`${line}\n`);

async function cycle(n: number, holdMs: number): Promise<void> {
  const spans: Array<[number, number]> = [];
  for (let i = 0; i < n; i++) {
    const id = crypto.randomUUID();
    await gate.enter(id, undefined, () => {});
    const held = now();
    await new Promise((r) => setTimeout(r, holdMs));
    spans.push([held, now()]);
    gate.exit(id, undefined);
  }
  say(`cycles ${JSON.stringify(spans)}`);
}

say("ready");
for await (const line of createInterface({ input: process.stdin })) {
  const [command, a, b] = line.trim().split(/\s+/);
  if (command === "enter") {
    if (b !== undefined) await new Promise((r) => setTimeout(r, Number(b) - Date.now()));
    gate.enter(a!, undefined, () => say(`waiting ${a}`)).then((ok) =>
      say(ok ? `held ${a} ${now()}` : `left ${a}`)
    );
  } else if (command === "exit") {
    say(`released ${a} ${now()}`);
    gate.exit(a!, undefined);
  } else if (command === "leave") {
    gate.leave(a!);
  } else if (command === "cycle") {
    void cycle(Number(a), Number(b));
  }
}
