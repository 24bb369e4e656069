/**
 * Ends every process a job started, including the ones a tree walk cannot see: a process
 * that left the tree with `setsid -f` or a double fork (`nohup cmd &` from a shell that then
 * exits) is re-parented to init and carries no link to the job's root any more.
 *
 * Two things it still carries do link it to the job:
 * - its session, unless it called setsid: the job's root was started as the leader of a
 *   session of its own, which every descendant inherits;
 * - its environment: the root was started with a marker entry (a random value per turn) that
 *   every descendant inherits unless it rebuilds its environment from scratch.
 * A process is the job's when it is in that session, or it runs as our uid and its
 * /proc/<pid>/environ holds the marker, or it descends from such a process.
 *
 * What escapes both (a process that calls setsid AND execs with an environment of its own,
 * after its parent exited) needs a container around the job: a cgroup, or the pid namespace
 * of a sandbox.
 *
 * Races are handled as in proc_tree.ts: each process found is stopped at once (a stopped
 * process cannot fork or exit), and the scan repeats until it finds nobody new.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import process from "node:process";
import { setTimeout as delay } from "node:timers/promises";
import {
  collectDescendants,
  parseProcStat,
  type ProcRecord,
  type ProcTable,
} from "./proc_parse.ts";
import { sessionOfStat } from "./session.ts";
import type { SignalSender } from "./proc_tree.ts";

/** An environment entry `name=value` that every process of one job inherits. */
export interface JobMarker {
  name: string;
  value: string;
}

/** How to recognise a job's processes. */
export interface JobScope {
  /** The session the job's root leads (it was started detached). */
  sessionId?: number;
  marker?: JobMarker;
  /**
   * /proc start time (clock ticks since boot) of the job's root: a process that started
   * before it cannot be the job's, so its environment is not read (that read is most of the
   * cost of a scan).
   */
  notBeforeTicks?: number;
}

export interface SweepOptions {
  /** Time between SIGTERM and SIGKILL; 0 sends SIGKILL at once. */
  graceMs: number;
}

export interface SweepReport {
  /** Every process found. */
  found: number[];
  /** Still alive at the end (stuck in the kernel, or not ours to kill). */
  survivors: number[];
}

/** One look at the process table: every live process, and those that match the scope. */
export interface ScopeScan {
  table: ProcTable;
  matches: number[];
}

/** Reads the process table for a sweep. */
export interface SweepSource {
  /** Every process, and the ones that belong to the job by session or marker. */
  scan(): Promise<ScopeScan>;
  /** At least the given pids that still exist. */
  probe(pids: readonly number[]): Promise<ProcTable>;
}

const MAX_ROUNDS = 10;
const POLL_MS = 50;
const KILL_WAIT_MS = 1000;

function environHas(pid: number, entry: string): boolean {
  try {
    // latin1 keeps every byte as one character, so a value is found whatever its encoding.
    return readFileSync(`/proc/${pid}/environ`, "latin1").split("\0").includes(entry);
  } catch {
    return false;
  }
}

/** One pass over /proc: each process's stat, and its environment when it runs as our uid. */
export function scanProcfs(scope: JobScope): ScopeScan {
  const table = new Map<number, ProcRecord>();
  const matches: number[] = [];
  const uid = process.getuid?.();
  const entry = scope.marker ? `${scope.marker.name}=${scope.marker.value}` : undefined;
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    let line: string;
    try {
      line = readFileSync(`/proc/${name}/stat`, "utf8");
    } catch {
      continue;
    }
    const rec = parseProcStat(line);
    if (rec === null || rec.zombie) continue;
    table.set(rec.pid, rec);
    // The leader itself is left to whoever holds its handle: once it has exited, a process
    // with its pid as session id could only be a stranger that was given the same pid.
    const sid = sessionOfStat(line);
    if (scope.sessionId !== undefined && sid === scope.sessionId && rec.pid !== sid) {
      matches.push(rec.pid);
      continue;
    }
    if (entry === undefined) continue;
    if (scope.notBeforeTicks !== undefined && Number(rec.startTime) < scope.notBeforeTicks) {
      continue;
    }
    try {
      if (uid !== undefined && statSync(`/proc/${name}`).uid !== uid) continue;
    } catch {
      continue;
    }
    if (environHas(rec.pid, entry)) matches.push(rec.pid);
  }
  return { table, matches };
}

/**
 * Stops, then ends, every process of the job that `scan` finds, with its descendants.
 * Never signals this process or pid 1.
 */
export async function sweepJobWith(
  source: SweepSource,
  opts: SweepOptions,
  send: SignalSender,
): Promise<SweepReport> {
  const members = new Map<number, ProcRecord>();
  const spared = (pid: number) => pid <= 1 || pid === process.pid || pid === process.ppid;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const { table, matches } = await source.scan();
    // Never walk down from init or from this server: everything descends from them.
    const seeds = [
      ...matches,
      ...[...members.keys()].filter((pid) => sameLive(table, members, pid)),
    ].filter((pid) => !spared(pid));
    const found = [
      ...matches.map((pid) => table.get(pid)),
      ...collectDescendants(table.values(), seeds),
    ];
    const fresh = found.filter((p): p is ProcRecord =>
      p !== undefined && !p.zombie && !members.has(p.pid) && !spared(p.pid)
    );
    if (fresh.length === 0) break;
    for (const p of fresh) {
      members.set(p.pid, p);
      send(p.pid, "SIGSTOP");
    }
  }
  const all = [...members.keys()];
  if (all.length === 0) return { found: [], survivors: [] };
  let pending = all;
  if (opts.graceMs > 0) {
    // TERM before CONT, so that each handles it before it can do anything else.
    for (const pid of pending) send(pid, "SIGTERM");
    for (const pid of pending) send(pid, "SIGCONT");
    pending = await waitGone(source, members, pending, opts.graceMs);
  }
  const table = await source.probe(pending);
  for (const pid of pending) {
    // Re-check identity: during the grace period the pid may have been reused.
    if (sameLive(table, members, pid)) send(pid, "SIGKILL");
  }
  const survivors = await waitGone(source, members, pending, KILL_WAIT_MS);
  return { found: all, survivors };
}

function sameLive(
  table: ReadonlyMap<number, ProcRecord>,
  members: ReadonlyMap<number, ProcRecord>,
  pid: number,
): boolean {
  const now = table.get(pid);
  const then = members.get(pid);
  return now !== undefined && !now.zombie && now.startTime === then?.startTime;
}

async function waitGone(
  source: SweepSource,
  members: ReadonlyMap<number, ProcRecord>,
  pids: number[],
  waitMs: number,
): Promise<number[]> {
  const deadline = performance.now() + waitMs;
  let alive = pids;
  for (;;) {
    const table = await source.probe(alive);
    alive = alive.filter((pid) => sameLive(table, members, pid));
    const left = deadline - performance.now();
    if (alive.length === 0 || left <= 0) return alive;
    await delay(Math.min(POLL_MS, left));
  }
}
