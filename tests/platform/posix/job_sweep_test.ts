/**
 * The job sweep against real processes: what leaves a job's process tree with `setsid -f` or
 * a double fork is still found by its session or by the job's environment marker.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import process from "node:process";
import { setTimeout as delay } from "node:timers/promises";
import { type ProcRecord, type ProcTable } from "../../../src/platform/posix/proc_parse.ts";
import { sweepJobWith, type SweepSource } from "../../../src/platform/posix/job_sweep.ts";
import type { TreeSignal } from "../../../src/platform/posix/proc_tree.ts";
import { killTree, startTicks, sweepJob } from "../../../src/platform/tree_kill.ts";
import { settleWithin } from "../../../src/platform/sleep.ts";

const linuxOnly = process.platform !== "linux";

function live(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) [ZX] /.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

async function until(cond: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await delay(20);
  }
}

/**
 * Starts `script` under bash as the leader of a new session with `env`, and resolves with
 * the pids it prints (one per line) once bash has exited: whatever it started is orphaned.
 * Every long-lived process of a script must let go of stdout once it has printed its pid.
 */
async function orphans(script: string, env: Record<string, string>, n: number) {
  const child = spawn("bash", ["-c", script], {
    detached: true,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (d: string) => out += d);
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  const closed = new Promise<void>((resolve) => child.stdout.on("close", () => resolve()));
  await exited;
  // Its deadline's timer goes with the answer: a 5 s one left running outlived this file's tests
  // in the chunk that runs it with others, and ended in the middle of sleep_test's count of the
  // process's timers.
  await settleWithin(closed, 5000, undefined);
  // Lines are `<pid>` or `<order> <pid>`: processes started in the background print when they
  // get to it, so a script with several labels its lines to keep their order.
  const pids = out.trim().split("\n").filter(Boolean).map((l) => l.trim().split(/\s+/))
    .sort((a, b) => (a.length > 1 ? Number(a[0]) : 0) - (b.length > 1 ? Number(b[0]) : 0))
    .map((parts) => Number(parts.at(-1)));
  assert.equal(pids.length, n, `the script printed ${n} pids: ${out}`);
  await until(() => pids.every(live), 5000, "the orphans to start");
  return { root: child.pid!, pids };
}

/** Kills every process carrying `marker`, by a plain /proc scan of its own (clean-up). */
function killMarked(marker: { name: string; value: string }) {
  const entry = `${marker.name}=${marker.value}`;
  for (let round = 0; round < 5; round++) {
    for (const name of readdirSync("/proc")) {
      if (!/^\d+$/.test(name)) continue;
      try {
        if (readFileSync(`/proc/${name}/environ`, "latin1").split("\0").includes(entry)) {
          process.kill(Number(name), "SIGKILL");
        }
      } catch {
        // Gone, or not ours.
      }
    }
  }
}

function kill(pids: number[]) {
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Gone.
    }
  }
}

function newMarker() {
  return { name: "OD_TEST_JOB", value: randomBytes(8).toString("hex") };
}

Deno.test({
  name: "sweepJob: setsid -f and nohup ... & orphans are found by marker and session",
  ignore: linuxOnly,
  async fn() {
    const marker = newMarker();
    // 1: setsid -f leaves the session but keeps the environment.
    // 2: a double fork (nohup from a subshell that exits) stays in the session.
    // 3: setsid -f with a fresh environment escapes both: the documented limit.
    // 4: a double fork with a fresh environment is still in the session.
    // 5: a same-uid process outside the job, started by this test, must be left alone.
    const script = [
      "setsid -f sh -c 'echo 1 $$; exec sleep 61 >/dev/null 2>&1'",
      "(nohup sh -c 'sleep 62' >/dev/null 2>&1 & echo 2 $!)",
      "setsid -f env -i sh -c 'echo 3 $$; exec sleep 63 >/dev/null 2>&1'",
      "(env -i nohup sleep 65 >/dev/null 2>&1 & echo 4 $!)",
    ].join("; ");
    const stranger = spawn("sleep", ["64"], { detached: true, stdio: "ignore" });
    let pids: number[] = [];
    try {
      const started = await orphans(script, { [marker.name]: marker.value }, 4);
      pids = started.pids;
      const [escaped, doubleForked, clean, unmarked] = pids as [number, number, number, number];
      // The tree walk has nothing to start from: the root is gone.
      const tree = await killTree(started.root, { graceMs: 100 }).catch(() => ({ pids: [] }));
      assert.deepEqual(tree.pids, []);
      const report = await sweepJob({ sessionId: started.root, marker }, { graceMs: 200 });
      assert.deepEqual(report.survivors, []);
      assert.ok(report.found.includes(escaped), `setsid -f: ${report.found}`);
      assert.ok(report.found.includes(doubleForked), `double fork: ${report.found}`);
      assert.ok(report.found.includes(unmarked), `by session alone: ${report.found}`);
      await until(
        () => !live(escaped) && !live(doubleForked) && !live(unmarked),
        3000,
        "the orphans to die",
      );
      assert.equal(live(clean), true, "a process with neither session nor marker is out of reach");
      assert.equal(live(stranger.pid!), true, "an unrelated process survives");
      assert.ok(!report.found.includes(stranger.pid!));
    } finally {
      kill([...pids, stranger.pid!]);
      killMarked(marker);
    }
  },
});

Deno.test({
  name: "sweepJob: processes that keep forking are stopped and all of them end",
  ignore: linuxOnly,
  async fn() {
    const marker = newMarker();
    // A setsid'd loop that forks a sleeper every 10 ms, for at most 20 s whatever happens.
    const loop = "i=0; while [ $i -lt 2000 ]; do sleep 30 & sleep 0.01; i=$((i+1)); done";
    try {
      const { root } = await orphans(
        `setsid -f sh -c 'echo $$; exec >/dev/null 2>&1; ${loop}'`,
        { [marker.name]: marker.value },
        1,
      );
      await delay(100);
      const report = await sweepJob({ sessionId: root, marker }, { graceMs: 0 });
      assert.deepEqual(report.survivors, []);
      assert.ok(report.found.length >= 2, `the loop and its children: ${report.found}`);
      await delay(100);
      for (const pid of report.found) assert.equal(live(pid), false, `pid ${pid} survived`);
    } finally {
      killMarked(marker);
    }
  },
});

Deno.test({
  name: "sweepJob: a marked process older than the job's root is not read as the job's",
  ignore: linuxOnly,
  async fn() {
    const marker = newMarker();
    const older = spawn("sleep", ["66"], {
      detached: true,
      stdio: "ignore",
      env: { [marker.name]: marker.value },
    });
    try {
      await until(() => live(older.pid!), 5000, "the process to start");
      const started = (await startTicks(older.pid!))!;
      const later = await sweepJob({ marker, notBeforeTicks: started + 1 }, { graceMs: 0 });
      assert.deepEqual(later.found, []);
      assert.equal(live(older.pid!), true);
      const same = await sweepJob({ marker, notBeforeTicks: started }, { graceMs: 0 });
      assert.deepEqual(same.found, [older.pid]);
    } finally {
      kill([older.pid!]);
    }
  },
});

/** A process table in memory; signals are recorded, SIGKILL removes, SIGTERM too unless deaf. */
class FakeWorld {
  procs = new Map<number, ProcRecord>();
  deaf = new Set<number>();
  matches: number[] = [];
  signals: Array<[number, TreeSignal]> = [];
  add(pid: number, ppid: number, deaf = false): this {
    this.procs.set(pid, { pid, ppid, startTime: String(pid), zombie: false });
    if (deaf) this.deaf.add(pid);
    return this;
  }
  table(): ProcTable {
    return new Map(this.procs);
  }
  source: SweepSource = {
    scan: () => Promise.resolve({ table: this.table(), matches: [...this.matches] }),
    probe: () => Promise.resolve(this.table()),
  };
  send = (pid: number, sig: TreeSignal): boolean => {
    if (!this.procs.has(pid)) return false;
    this.signals.push([pid, sig]);
    if (sig === "SIGKILL" || (sig === "SIGTERM" && !this.deaf.has(pid))) this.procs.delete(pid);
    return true;
  };
}

Deno.test("sweepJobWith (simulated): matches and their descendants; TERM, then KILL the deaf", async () => {
  const w = new FakeWorld().add(50, 1).add(51, 50, true).add(52, 51).add(60, 1);
  w.matches = [50];
  const r = await sweepJobWith(w.source, { graceMs: 100 }, w.send);
  assert.deepEqual(r.found.sort(), [50, 51, 52]);
  assert.deepEqual(r.survivors, []);
  assert.ok(w.procs.has(60), "a stranger is untouched");
  assert.deepEqual(w.signals.filter(([pid]) => pid === 51).map(([, s]) => s), [
    "SIGSTOP",
    "SIGTERM",
    "SIGCONT",
    "SIGKILL",
  ]);
});

Deno.test("sweepJobWith (simulated): never signals pid 1 or this process", async () => {
  const w = new FakeWorld().add(1, 0).add(process.pid, 1).add(70, 1);
  w.matches = [1, process.pid, 70];
  const r = await sweepJobWith(w.source, { graceMs: 0 }, w.send);
  assert.deepEqual(r.found, [70]);
  assert.deepEqual(w.signals.map(([pid]) => pid).filter((pid) => pid !== 70), []);
});
