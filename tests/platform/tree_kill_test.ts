import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import process from "node:process";
import { setTimeout as delay } from "node:timers/promises";
import {
  collectDescendants,
  parseProcStat,
  parsePsOutput,
} from "../../src/platform/posix/proc_parse.ts";
import { procfsSource, type ProcSource, psSource } from "../../src/platform/posix/proc_source.ts";
import {
  killTreeWith,
  type SignalSender,
  type TreeSignal,
} from "../../src/platform/posix/proc_tree.ts";
import type { ProcRecord } from "../../src/platform/posix/proc_parse.ts";
import { isAlive, killTree, listDescendants, procSourceFor } from "../../src/platform/tree_kill.ts";

const linuxOnly = process.platform !== "linux";

// ---------------------------------------------------------------------------------------------
// Pure parsers
// ---------------------------------------------------------------------------------------------

/** A /proc/<pid>/stat line with the given comm; starttime (field 22) is 987654. */
function statLine(pid: number, comm: string, state: string, ppid: number): string {
  // Fields 5..21 are filler, field 22 is starttime, then more filler.
  const filler = Array.from({ length: 17 }, (_, i) => String(i + 10)).join(" ");
  return `${pid} (${comm}) ${state} ${ppid} ${filler} 987654 2990080 392 0 0\n`;
}

Deno.test("parseProcStat: comm with spaces and parentheses is skipped via the last ')'", () => {
  const rec = parseProcStat(statLine(4242, "a) (b", "S", 77));
  assert.deepEqual(rec, {
    pid: 4242,
    ppid: 77,
    startTime: "987654",
    zombie: false,
    stopped: false,
  });
  // Nasty comm that imitates the fields which follow it.
  const tricky = parseProcStat(statLine(5, ") R 1 2 3 (", "Z", 3));
  assert.deepEqual(tricky, { pid: 5, ppid: 3, startTime: "987654", zombie: true, stopped: false });
  // Stopped by a signal (T) or by a tracer (t).
  assert.equal(parseProcStat(statLine(6, "T (x)", "T", 3))?.stopped, true);
  assert.equal(parseProcStat(statLine(7, "sh", "t", 3))?.stopped, true);
});

Deno.test("parseProcStat: rejects malformed or truncated lines", () => {
  assert.equal(parseProcStat(""), null);
  assert.equal(parseProcStat("12 (x) S 1 2 3"), null); // no field 22
  assert.equal(parseProcStat("x (y) S 1" + " 0".repeat(30)), null); // non-numeric pid
  assert.equal(parseProcStat("12 no-parens S 1" + " 0".repeat(30)), null);
});

Deno.test({
  name: "parseProcStat: parses this process's real /proc/self/stat",
  ignore: linuxOnly,
  fn() {
    const rec = parseProcStat(readFileSync("/proc/self/stat", "utf8"));
    assert.ok(rec);
    assert.equal(rec.pid, process.pid);
    assert.equal(rec.ppid, process.ppid);
    assert.match(rec.startTime, /^\d+$/);
  },
});

Deno.test("parsePsOutput: odd spacing, padded days, zombies, junk lines", () => {
  const text = [
    "    1     0 Ss   Mon Nov  3 09:05:01 2025",
    "12345 1 Z+ Tue Nov 30 00:00:00 2026   ",
    "",
    "  PID  PPID STAT STARTED",
    "\t77\t12345   S<Ll   Wed   Dec 10 11:12:13 2025",
    "garbage",
    "   88    77 T    Wed Dec 10 11:12:14 2025",
  ].join("\n");
  assert.deepEqual(parsePsOutput(text), [
    { pid: 1, ppid: 0, startTime: "Mon Nov 3 09:05:01 2025", zombie: false, stopped: false },
    { pid: 12345, ppid: 1, startTime: "Tue Nov 30 00:00:00 2026", zombie: true, stopped: false },
    { pid: 77, ppid: 12345, startTime: "Wed Dec 10 11:12:13 2025", zombie: false, stopped: false },
    { pid: 88, ppid: 77, startTime: "Wed Dec 10 11:12:14 2025", zombie: false, stopped: true },
  ]);
});

Deno.test("collectDescendants: whole subtree, breadth-first, excluding root and strangers", () => {
  const table = [
    { pid: 1, ppid: 0 },
    { pid: 10, ppid: 1 }, // root
    { pid: 11, ppid: 10 },
    { pid: 12, ppid: 10 },
    { pid: 13, ppid: 11 },
    { pid: 14, ppid: 13 },
    { pid: 20, ppid: 1 }, // unrelated
    { pid: 21, ppid: 20 },
    { pid: 30, ppid: 31 }, // bogus cycle must not loop forever
    { pid: 31, ppid: 30 },
  ];
  assert.deepEqual(collectDescendants(table, 10).map((p) => p.pid), [11, 12, 13, 14]);
  assert.deepEqual(collectDescendants(table, 14), []);
  assert.deepEqual(collectDescendants(table, 999), []);
  assert.deepEqual(collectDescendants(table, [13, 20]).map((p) => p.pid), [14, 21]);
  assert.deepEqual(collectDescendants(table, 30).map((p) => p.pid), [31]);
});

Deno.test("procSourceFor: Windows is refused with a clear message; OS picks the source", () => {
  assert.throws(() => procSourceFor("win32"), {
    message:
      "Cannot kill process tree: there is no process table reader for Windows (killTree uses taskkill)",
  });
  assert.equal(procSourceFor("darwin").name, "ps");
  assert.equal(procSourceFor("freebsd").name, "ps");
  if (!linuxOnly) assert.equal(procSourceFor("linux").name, "procfs");
});

Deno.test("killTree: refuses pids that would address groups, init or ourselves", async () => {
  for (const pid of [0, 1, -5, 1.5, process.pid]) {
    await assert.rejects(killTree(pid, { graceMs: 10 }), RangeError, `pid ${pid}`);
  }
});

// ---------------------------------------------------------------------------------------------
// The algorithm against a simulated process table (deterministic, any OS, no real signals)
// ---------------------------------------------------------------------------------------------

interface FakeProc {
  ppid: number;
  startTime: string;
  stopped: boolean;
  /** A SIGSTOP sent but not landed: it lands after the next snapshot (see `lagging`). */
  stopPending?: boolean;
  ignoresTerm: boolean;
  termPending: boolean;
}

/**
 * A tiny model of POSIX semantics: SIGSTOP freezes, SIGTERM is queued while stopped and acts on
 * SIGCONT (unless ignored), SIGKILL always works, and orphans are reparented to pid 1. Hooks let
 * a test make the world change at exactly the racy moments.
 */
class FakeWorld {
  readonly procs = new Map<number, FakeProc>();
  readonly log: string[] = [];
  snapshots = 0;
  onSignal: (pid: number, sig: TreeSignal) => boolean | void = () => {};
  failSnapshot = (_n: number) => false;
  /** Pids whose SIGSTOP lands only after the next snapshot; `onStopLands` runs just before. */
  lagging = new Set<number>();
  onStopLands: (pid: number) => void = () => {};
  /** How long each snapshot takes, as reading a large /proc does on a loaded machine. */
  snapshotMs = 0;

  add(pid: number, ppid: number, ignoresTerm = false): this {
    this.procs.set(pid, {
      ppid,
      startTime: `t${pid}`,
      stopped: false,
      ignoresTerm,
      termPending: false,
    });
    return this;
  }

  exit(pid: number): void {
    this.procs.delete(pid);
    for (const p of this.procs.values()) if (p.ppid === pid) p.ppid = 1;
  }

  private table(): Map<number, ProcRecord> {
    const t = new Map<number, ProcRecord>();
    for (const [pid, p] of this.procs) {
      t.set(pid, { pid, ppid: p.ppid, startTime: p.startTime, zombie: false, stopped: p.stopped });
    }
    return t;
  }

  readonly source: ProcSource = {
    name: "ps",
    snapshot: async () => {
      this.snapshots++;
      if (this.failSnapshot(this.snapshots)) throw new Error("ps exploded");
      if (this.snapshotMs > 0) await delay(this.snapshotMs);
      const table = this.table();
      for (const [pid, p] of this.procs) {
        if (!p.stopPending) continue;
        this.onStopLands(pid);
        p.stopPending = false;
        p.stopped = true;
      }
      return table;
    },
    probe: () => Promise.resolve(this.table()),
  };

  readonly send: SignalSender = (pid, sig) => {
    this.log.push(`${sig} ${pid}`);
    if (this.onSignal(pid, sig) === false) return false;
    const p = this.procs.get(pid);
    if (p === undefined) return false;
    if (sig === "SIGKILL") this.exit(pid);
    else if (sig === "SIGSTOP") {
      if (this.lagging.has(pid)) p.stopPending = true;
      else p.stopped = true;
    } else if (sig === "SIGTERM" && !p.ignoresTerm) {
      if (p.stopped) p.termPending = true;
      else this.exit(pid);
    } else if (sig === "SIGCONT") {
      p.stopped = false;
      if (p.termPending) this.exit(pid);
    }
    return true;
  };

  signalsTo(pid: number): string[] {
    return this.log.filter((l) => l.endsWith(` ${pid}`)).map((l) => l.split(" ")[0] ?? "");
  }
}

Deno.test("killTreeWith (simulated): re-walks until children forked during the stop are found", async () => {
  const w = new FakeWorld().add(100, 1).add(101, 100).add(200, 1);
  // Each process forks once more in the instant between the walk and its SIGSTOP landing.
  w.onSignal = (pid, sig) => {
    if (sig === "SIGSTOP" && pid === 101) w.add(102, 101);
    if (sig === "SIGSTOP" && pid === 102) w.add(103, 102);
  };
  const r = await killTreeWith(w.source, 100, { graceMs: 200 }, w.send);
  assert.deepEqual(r.pids, [100, 101, 102, 103]);
  assert.deepEqual(sorted(r.terminated), [100, 101, 102, 103]);
  assert.deepEqual(r.killed, []);
  assert.deepEqual([...w.procs.keys()], [200], "only the stranger is left");
  assert.deepEqual(w.signalsTo(200), [], "stranger never signalled");
  const firstTerm = w.log.findIndex((l) => l.startsWith("SIGTERM"));
  const lastStop = w.log.findLastIndex((l) => l.startsWith("SIGSTOP"));
  assert.ok(lastStop < firstTerm, "whole tree frozen before any SIGTERM");
  assert.deepEqual(w.signalsTo(103), ["SIGSTOP", "SIGTERM", "SIGCONT"]);
  assert.ok(r.elapsedMs < 200, "no grace wait once everything is gone");
});

Deno.test("killTreeWith (simulated): a member still running after its SIGSTOP is walked again once stopped", async () => {
  // The stop lands only when the root next runs, after the first walk: it forks once more in
  // between. A walk that found nobody new while a member still ran missed that child, which
  // the root's death then orphaned (seen once with a root forking without end on a loaded
  // machine).
  const w = new FakeWorld().add(100, 1).add(200, 1);
  w.lagging.add(100);
  w.onStopLands = (pid) => {
    if (pid === 100) w.add(101, 100);
  };
  const r = await killTreeWith(w.source, 100, { graceMs: 200 }, w.send);
  assert.deepEqual(r.pids, [100, 101]);
  assert.deepEqual([...w.procs.keys()], [200], "the late child is killed with the tree");
  assert.deepEqual(w.signalsTo(200), [], "stranger never signalled");
});

Deno.test("killTreeWith (simulated): the walks of a large tree do not use up the wait for a late stop", async () => {
  // Each walk takes 300 ms, and each member's stop lands late, after it forked once more: the
  // tree is found one member every two walks. When the walk after 102 finds nobody new, more
  // than STOP_WAIT_MS (1 s) has gone since the start. A wait counted from the start had ended
  // then: 102's child was never walked and outlived the kill (CI, 1,200 processes forking at
  // two levels on a loaded machine).
  const w = new FakeWorld().add(100, 1);
  w.snapshotMs = 300;
  for (const pid of [100, 101, 102]) w.lagging.add(pid);
  w.onStopLands = (pid) => {
    if (pid < 103) w.add(pid + 1, pid);
  };
  const r = await killTreeWith(w.source, 100, { graceMs: 200 }, w.send);
  assert.deepEqual(r.pids, [100, 101, 102, 103]);
  assert.deepEqual([...w.procs.keys()], [], "the late child is killed with the tree");
});

Deno.test("killTreeWith (simulated): walks on from members whose parent died mid-freeze", async () => {
  const w = new FakeWorld().add(100, 1).add(101, 100).add(102, 101);
  w.onSignal = (pid, sig) => {
    // 101 exits just before its SIGSTOP arrives: 102 (already known) is reparented to init...
    if (sig === "SIGSTOP" && pid === 101) {
      w.exit(101);
      return false;
    }
    // ...and 102 had forked 103 before being stopped; 103 is reachable only through 102.
    if (sig === "SIGSTOP" && pid === 102) w.add(103, 102);
  };
  const r = await killTreeWith(w.source, 100, { graceMs: 200 }, w.send);
  assert.deepEqual(r.pids, [100, 101, 102, 103]);
  assert.deepEqual(w.procs.size, 0);
  assert.deepEqual(r.survivors, []);
});

Deno.test("killTreeWith (simulated): escalates to SIGKILL, but never on a recycled pid", async () => {
  const w = new FakeWorld().add(100, 1).add(101, 100, true).add(102, 100, true);
  w.onSignal = (pid, sig) => {
    // During the grace period 102 exits and its pid goes to an unrelated process.
    if (sig === "SIGCONT" && pid === 102) {
      w.exit(102);
      w.add(102, 1, true);
      const p = w.procs.get(102);
      if (p) p.startTime = "recycled";
      return false;
    }
  };
  const r = await killTreeWith(w.source, 100, { graceMs: 150 }, w.send);
  assert.deepEqual(r.pids, [100, 101, 102]);
  assert.deepEqual(r.killed, [101]);
  assert.deepEqual(sorted(r.terminated), [100, 102]);
  assert.deepEqual(r.survivors, []);
  assert.ok(!w.signalsTo(102).includes("SIGKILL"), "recycled pid must not be killed");
  assert.equal(w.procs.get(102)?.startTime, "recycled");
  assert.ok(r.elapsedMs >= 150, `waited the grace period (${r.elapsedMs})`);
});

Deno.test("killTreeWith (simulated): signal SIGKILL sends neither TERM nor CONT", async () => {
  const w = new FakeWorld().add(100, 1).add(101, 100, true);
  const r = await killTreeWith(w.source, 100, { graceMs: 5000, signal: "SIGKILL" }, w.send);
  assert.deepEqual(w.log, ["SIGSTOP 100", "SIGSTOP 101", "SIGKILL 100", "SIGKILL 101"]);
  assert.deepEqual(r.killed, [100, 101]);
  assert.ok(r.elapsedMs < 1000);
});

Deno.test("killTreeWith (simulated): a failing walk does not leave a frozen tree behind", async () => {
  const w = new FakeWorld().add(100, 1).add(101, 100);
  w.failSnapshot = (n) => n === 2;
  await assert.rejects(killTreeWith(w.source, 100, { graceMs: 100 }, w.send), /ps exploded/);
  assert.deepEqual(w.procs.size, 0, "frozen members were killed");
});

Deno.test("killTreeWith (simulated): unkillable members are reported as survivors", async () => {
  const w = new FakeWorld().add(100, 1).add(101, 100);
  w.onSignal = (pid) => pid === 101 ? false : undefined; // e.g. EPERM: another user's process
  const r = await killTreeWith(w.source, 100, { graceMs: 50 }, w.send);
  assert.deepEqual(r.survivors, [101]);
  assert.deepEqual(r.terminated, [100]);
});

Deno.test("killTreeWith (simulated): isRootExited turning true mid-way stops signalling the root", async () => {
  const w = new FakeWorld().add(100, 1, true).add(101, 100);
  let exited = false;
  w.onSignal = (pid, sig) => {
    if (sig === "SIGTERM" && pid === 101) exited = true;
  };
  const r = await killTreeWith(w.source, 100, { graceMs: 100, isRootExited: () => exited }, w.send);
  assert.deepEqual(w.signalsTo(100), ["SIGSTOP", "SIGTERM"], "no CONT/KILL once reported exited");
  assert.deepEqual(sorted(r.terminated), [100, 101]);
  assert.deepEqual(r.killed, []);
});

// ---------------------------------------------------------------------------------------------
// Real processes (Linux: uses setsid(1) and /proc for independent verification)
// ---------------------------------------------------------------------------------------------

interface Tree {
  child: ChildProcess;
  /** Lines the script printed, one per `echo`. */
  lines: (n: number) => Promise<string[]>;
  /** Resolves once bash exited and its stdout closed (needed by Deno's sanitizers). */
  closed: Promise<void>;
}

function spawnTree(script: string): Tree {
  const child = spawn("bash", ["-c", script], { stdio: ["ignore", "pipe", "inherit"] });
  let buf = "";
  child.stdout?.setEncoding("utf8");
  child.stdout?.on("data", (d: string) => buf += d);
  const closed = new Promise<void>((resolve) => child.on("close", () => resolve()));
  const lines = async (n: number) => {
    await waitFor(() => buf.split("\n").length > n, 5000, `${n} lines from script`);
    return buf.split("\n").slice(0, n);
  };
  return { child, lines, closed };
}

async function waitFor(cond: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await delay(10);
  }
}

/** Raw fields of /proc/<pid>/stat after the comm (index 0 = field 3), or null if gone. */
function statFields(pid: number): string[] | null {
  try {
    const line = readFileSync(`/proc/${pid}/stat`, "utf8");
    return line.slice(line.lastIndexOf(")") + 2).split(" ");
  } catch {
    return null;
  }
}

/** Independent of the code under test: present in /proc and not a zombie. */
function existsLive(pid: number, startTime: string): boolean {
  const f = statFields(pid);
  return f !== null && f[0] !== "Z" && f[0] !== "X" && f[19] === startTime;
}

function startTimeOf(pid: number): string {
  const f = statFields(pid);
  assert.ok(f, `pid ${pid} should exist`);
  return f[19] ?? "";
}

function sessionOf(pid: number): number {
  return Number(statFields(pid)?.[3]);
}

function ignoresTerm(pid: number): boolean {
  try {
    const m = /^SigIgn:\s*([0-9a-f]+)$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m !== null && (BigInt(`0x${m[1]}`) & (1n << 14n)) !== 0n; // SIGTERM = 15
  } catch {
    return false;
  }
}

/** Live pids whose command line starts with `command` and contains `marker`, found in all of /proc. */
function pidsWithMarker(marker: string, command = ""): number[] {
  const found: number[] = [];
  for (const e of readdirSync("/proc")) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const cmd = readFileSync(`/proc/${e}/cmdline`, "utf8");
      const f = statFields(Number(e));
      const ours = cmd.startsWith(command) && cmd.includes(marker);
      if (ours && f !== null && f[0] !== "Z") found.push(Number(e));
    } catch {
      // exited while scanning
    }
  }
  return found;
}

/**
 * The forked `sleep`s among the processes with `marker`: the root shell's command line (and a
 * subshell's, which keeps it) holds the marker too. Counted with them, 20 could be the root and
 * 19 sleeps, and a walk that stopped the root there found 20, not more (CI, on a loaded machine).
 */
const sleepersWithMarker = (marker: string) => pidsWithMarker(marker, "sleep\0");

/** Unique sleep duration (GNU sleep accepts decimals) so leftovers can be found by cmdline. */
function marker(base: number): string {
  return `${base}.${Math.floor(Math.random() * 1e9).toString().padStart(9, "0")}`;
}

/** Test cleanup: SIGKILL whatever is still the very process we recorded. */
function reap(pids: Map<number, string>): void {
  for (const [pid, start] of pids) {
    if (!existsLive(pid, start)) continue;
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone meanwhile
    }
  }
}

const sorted = (a: number[]) => [...a].sort((x, y) => x - y);

/**
 * root bash
 *  ├─ sleep 300.x                       plain child, same session
 *  ├─ setsid sleep 301.x                own session (process-group kill would miss it)
 *  └─ setsid bash -c 'trap "" TERM; …'  own session and ignores SIGTERM
 */
async function treeScenario(source: ProcSource, signal: "SIGTERM" | "SIGKILL") {
  const [m300, m301, m302] = [marker(300), marker(301), marker(302)];
  const tree = spawnTree(`
    sleep ${m300} >/dev/null 2>&1 & echo $!
    setsid sleep ${m301} >/dev/null 2>&1 & echo $!
    setsid bash -c 'trap "" TERM; sleep ${m302}' >/dev/null 2>&1 & echo $!
    wait
  `);
  const recorded = new Map<number, string>();
  try {
    const root = tree.child.pid;
    assert.ok(root);
    recorded.set(root, startTimeOf(root));
    const [plain, own, stubborn] = (await tree.lines(3)).map(Number) as [number, number, number];
    for (const pid of [plain, own, stubborn]) recorded.set(pid, startTimeOf(pid));
    // Make sure the scenario really is what it claims before killing it.
    await waitFor(
      () => sessionOf(own) === own && sessionOf(stubborn) === stubborn && ignoresTerm(stubborn),
      5000,
      "setsid children to be session leaders and the trap to be installed",
    );
    await waitFor(() => pidsWithMarker(m302).length > 0, 5000, "sleep 302 to start");
    assert.notEqual(sessionOf(own), sessionOf(root));
    const seen = (await listDescendants(root)).map((p) => p.pid);
    for (const pid of [plain, own, stubborn]) assert.ok(seen.includes(pid), `${pid} listed`);
    for (const pid of pidsWithMarker(m302)) recorded.set(pid, startTimeOf(pid));

    const graceMs = 500;
    const report = await killTreeWith(source, root, { graceMs, signal });

    for (const [pid, start] of recorded) assert.ok(!existsLive(pid, start), `${pid} still alive`);
    for (const m of [m300, m301, m302]) assert.deepEqual(pidsWithMarker(m), [], `leftover ${m}`);
    for (const pid of recorded.keys()) assert.ok(report.pids.includes(pid), `${pid} in pids`);
    assert.equal(report.pids[0], root);
    assert.deepEqual(report.survivors, []);
    assert.deepEqual(
      sorted([...report.terminated, ...report.killed]),
      sorted(report.pids),
      "every pid is classified exactly once",
    );
    if (signal === "SIGTERM") {
      assert.ok(report.killed.includes(stubborn), "TERM-ignoring process needed SIGKILL");
      for (const pid of [root, plain, own]) assert.ok(report.terminated.includes(pid), `${pid}`);
      assert.ok(report.elapsedMs >= graceMs, `waited the grace period (${report.elapsedMs})`);
    } else {
      assert.deepEqual(report.terminated, []);
      assert.deepEqual(sorted(report.killed), sorted(report.pids));
    }
    assert.ok(report.elapsedMs < graceMs + 1000, `elapsedMs ${report.elapsedMs}`);
    console.log(`  [${source.name} ${signal}] elapsedMs=${report.elapsedMs}`, report);
  } finally {
    reap(recorded);
    for (const m of [m300, m301, m302]) {
      for (const pid of pidsWithMarker(m)) reap(new Map([[pid, startTimeOf(pid)]]));
    }
    await tree.closed;
  }
}

Deno.test({
  name: "killTree: setsid grandchildren and a SIGTERM-ignoring process (procfs)",
  ignore: linuxOnly,
  fn: () => treeScenario(procfsSource, "SIGTERM"),
});

Deno.test({
  name: "killTree: same tree via the ps source used on macOS",
  ignore: linuxOnly,
  fn: () => treeScenario(psSource, "SIGTERM"),
});

Deno.test({
  name: "killTree: signal SIGKILL skips the grace period",
  ignore: linuxOnly,
  fn: () => treeScenario(procfsSource, "SIGKILL"),
});

Deno.test({
  name: "killTree: a root that forks without end loses no child to reparenting",
  ignore: linuxOnly,
  async fn() {
    const m = marker(303);
    // The walk can never catch up with a root that forks forever unless the root is stopped;
    // children forked between the last walk and the root's death would be orphaned and survive.
    const tree = spawnTree(`
      echo go
      while :; do setsid sleep ${m} >/dev/null 2>&1 & done
    `);
    try {
      const root = tree.child.pid;
      assert.ok(root);
      await tree.lines(1);
      await waitFor(() => sleepersWithMarker(m).length >= 20, 5000, "some children");
      const report = await killTree(root, { graceMs: 500 });
      // A child killed a moment ago can still be in /proc while the kernel tears it down (seen
      // once in CI on a loaded machine); one that escaped stays, its sleep lasts minutes.
      await waitFor(() => pidsWithMarker(m).length === 0, 2000, "killed children to go")
        .catch(() => {});
      assert.deepEqual(pidsWithMarker(m), [], "no forked child escaped");
      assert.deepEqual(report.survivors, []);
      assert.ok(report.pids.length > 20, `found ${report.pids.length}`);
    } finally {
      tree.child.kill("SIGKILL");
      for (const pid of pidsWithMarker(m)) reap(new Map([[pid, startTimeOf(pid)]]));
      await tree.closed;
    }
  },
});

Deno.test({
  name: "killTree: a tree that keeps forking at two levels loses no child to reparenting",
  ignore: linuxOnly,
  async fn() {
    const m = marker(305);
    // Workers below the root fork setsid'd children in a tight loop. A single walk misses the
    // children forked after it; when their worker then dies they are orphaned and survive. Only
    // stop-and-rewalk until nothing new appears catches all of them.
    const tree = spawnTree(`
      echo go
      for w in 1 2 3 4; do
        ( for i in $(seq 300); do setsid sleep ${m} >/dev/null 2>&1 & done; wait ) &
      done
      wait
    `);
    try {
      const root = tree.child.pid;
      assert.ok(root);
      await tree.lines(1);
      await waitFor(() => sleepersWithMarker(m).length >= 20, 5000, "some children");
      const report = await killTree(root, { graceMs: 500 });
      // A child killed a moment ago can still be in /proc while the kernel tears it down (seen
      // once in CI on a loaded machine); one that escaped stays, its sleep lasts minutes.
      await waitFor(() => pidsWithMarker(m).length === 0, 2000, "killed children to go")
        .catch(() => {});
      assert.deepEqual(pidsWithMarker(m), [], "no forked child escaped");
      assert.deepEqual(report.survivors, []);
      assert.ok(report.pids.length > 20, `found ${report.pids.length}`);
    } finally {
      tree.child.kill("SIGKILL");
      for (const pid of pidsWithMarker(m)) reap(new Map([[pid, startTimeOf(pid)]]));
      await tree.closed;
    }
  },
});

Deno.test({
  name: "killTree: already exited pid returns quickly with empty pids",
  ignore: linuxOnly,
  async fn() {
    const tree = spawnTree("exit 0");
    const pid = tree.child.pid;
    assert.ok(pid);
    await tree.closed;
    const report = await killTree(pid, { graceMs: 5000 });
    assert.deepEqual(report.pids, []);
    assert.ok(report.elapsedMs < 100, `elapsedMs ${report.elapsedMs}`);
    assert.equal(await isAlive(pid), false);
  },
});

Deno.test({
  name: "killTree: isRootExited() === true trusts the caller and touches nothing",
  ignore: linuxOnly,
  async fn() {
    const tree = spawnTree("sleep 30");
    const pid = tree.child.pid;
    assert.ok(pid);
    const start = startTimeOf(pid);
    try {
      const report = await killTree(pid, { graceMs: 100, isRootExited: () => true });
      assert.deepEqual(report.pids, []);
      assert.ok(existsLive(pid, start), "a possibly recycled pid must not be signalled");
      assert.equal(await isAlive(pid, start), true);
      assert.equal(await isAlive(pid, start + "1"), false, "start time mismatch = other process");
    } finally {
      tree.child.kill("SIGKILL");
      await tree.closed;
    }
  },
});

Deno.test({
  // Documents the known limitation rather than hiding it: once the root has exited, a setsid
  // grandchild has been reparented (ppid = init or a subreaper) and nothing links it to the tree
  // any more. If this test starts failing because the orphan IS killed, update the docs in
  // src/platform/posix/proc_tree.ts.
  name: "killTree: limitation - orphans of an already-exited root cannot be found",
  ignore: linuxOnly,
  async fn() {
    const m = marker(304);
    const tree = spawnTree(`setsid sleep ${m} >/dev/null 2>&1 & echo $!`);
    const recorded = new Map<number, string>();
    try {
      const root = tree.child.pid;
      assert.ok(root);
      const [orphan] = (await tree.lines(1)).map(Number) as [number];
      recorded.set(orphan, startTimeOf(orphan));
      await tree.closed;
      await waitFor(() => sessionOf(orphan) === orphan, 5000, "orphan to call setsid");
      assert.notEqual(Number(statFields(orphan)?.[1]), root, "orphan was reparented");
      const report = await killTree(root, { graceMs: 100 });
      assert.deepEqual(report.pids, []);
      assert.ok(existsLive(orphan, recorded.get(orphan) ?? ""), "orphan is out of reach");
    } finally {
      reap(recorded);
      await tree.closed;
    }
  },
});

Deno.test("killTreeWith (simulated): rootGraceMs cuts the wait once only the root is left", async () => {
  const w = new FakeWorld().add(100, 1, true).add(101, 100);
  const r = await killTreeWith(w.source, 100, { graceMs: 3000, rootGraceMs: 100 }, w.send);
  assert.deepEqual(r.killed, [100]);
  assert.deepEqual(r.terminated, [101]);
  assert.ok(r.elapsedMs < 1000, `root held for ${r.elapsedMs} ms`);
});

Deno.test("killTreeWith (simulated): rootGraceMs never shortens the grace of descendants", async () => {
  const w = new FakeWorld().add(100, 1, true).add(101, 100, true);
  const r = await killTreeWith(w.source, 100, { graceMs: 400, rootGraceMs: 50 }, w.send);
  assert.deepEqual(sorted(r.killed), [100, 101]);
  assert.ok(r.elapsedMs >= 400, `descendant got only ${r.elapsedMs} ms`);
});
