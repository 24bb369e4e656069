/**
 * Process-tree termination for POSIX.
 *
 * Why not a process-group kill: `claude -p` children run Bash tools which may call setsid(),
 * putting themselves in a new session and process group. Such processes are still linked to the
 * tree through their parent pid, so the tree is found by walking ppid links instead.
 *
 * Why SIGSTOP first: walking ppid links and then signalling races with the tree itself. A
 * process may fork after the walk (the child is missed), or a parent may die before its child is
 * found (the child is reparented to init/a subreaper and becomes unreachable). Stopping every
 * member as soon as it is found, and re-walking until nothing new appears, freezes the tree: a
 * stopped process can neither fork nor exit, so its children stay linked to it.
 *
 * Known limitation: a process whose parent had ALREADY exited before killTree started (e.g. the
 * root exited right after spawning a setsid grandchild, or a daemon double-forked as with
 * `setsid -f`) has been reparented and no longer carries any link to the tree; it cannot be
 * found by ppid. Catching those needs a container for the tree (Linux cgroups, or a subreaper,
 * which Node cannot become).
 */

import process from "node:process";
import { setTimeout as delay } from "node:timers/promises";
import {
  collectDescendants,
  type ProcInfo,
  type ProcRecord,
  type ProcTable,
} from "./proc_parse.ts";
import type { ProcSource } from "./proc_source.ts";

export interface KillTreeOptions {
  /** How long to wait after the polite signal before escalating to SIGKILL. */
  graceMs: number;
  /** "SIGKILL" skips the polite phase entirely. Default "SIGTERM". */
  signal?: "SIGTERM" | "SIGKILL";
  /**
   * Lets the caller (which usually spawned the root itself) report that the root has exited.
   * Once that is true the root pid may already be recycled, so it is neither trusted as a tree
   * root nor signalled; it counts as gone.
   */
  isRootExited?: () => boolean;
  /**
   * Once every descendant is gone, the root gets only this long (if shorter than graceMs)
   * before SIGKILL. Claude Code spends about 1.5 s on its own shutdown after SIGTERM even
   * when everything it started has already exited; a cancel should not wait for that.
   */
  rootGraceMs?: number;
}

export interface KillReport {
  /** Every process found in the tree (root first), whether or not it still existed later. */
  pids: number[];
  /** Gone without needing SIGKILL: after the polite signal, or on their own before it. */
  terminated: number[];
  /** Still alive after graceMs (or all, with signal "SIGKILL") and sent SIGKILL. */
  killed: number[];
  /** Still alive at the end; should be empty (e.g. stuck in uninterruptible sleep, or EPERM). */
  survivors: number[];
  elapsedMs: number;
}

/** Rounds of stop-and-rewalk; a frozen tree converges in depth+1 rounds, so 10 is generous. */
const MAX_STOP_ROUNDS = 10;
const POLL_MS = 50;
/** How long a walk that found nobody new waits for members seen running to stop. */
const STOP_WAIT_MS = 1000;
const STOP_POLL_MS = 5;
/** SIGKILL cannot be caught, so a survivor after this long is stuck in the kernel, not stubborn. */
const KILL_WAIT_MS = 1000;

export type TreeSignal = "SIGSTOP" | "SIGCONT" | "SIGTERM" | "SIGKILL";
/** Delivers a signal; false if the process was gone or not ours. Injectable for tests. */
export type SignalSender = (pid: number, sig: TreeSignal) => boolean;

/**
 * Send a signal, treating "no such process" (already exited) and "not permitted" (belongs to
 * another user, or a pid recycled into something we must not touch) as non-fatal: the caller
 * finds out from the liveness check whether it mattered.
 */
export function sendSignal(pid: number, sig: TreeSignal): boolean {
  try {
    process.kill(pid, sig);
    return true;
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (code === "ESRCH" || code === "EPERM") return false;
    throw err;
  }
}

/** Same pid, same start time, not a zombie: the very process that was recorded. */
function isSameLive(table: ProcTable, info: ProcInfo): boolean {
  const now = table.get(info.pid);
  return now !== undefined && !now.zombie && now.startTime === info.startTime;
}

function toInfo(r: ProcRecord): ProcInfo {
  return { pid: r.pid, ppid: r.ppid, startTime: r.startTime };
}

function assertKillablePid(pid: number): void {
  // pid <= 0 would address process groups or "everyone" in kill(2); pid 1 is init.
  if (!Number.isSafeInteger(pid) || pid <= 1) throw new RangeError(`Invalid root pid: ${pid}`);
  // Stopping ourselves would hang forever with nobody left to send SIGCONT.
  if (pid === process.pid) throw new RangeError("Refusing to kill the current process tree");
}

export async function listDescendantsWith(
  source: ProcSource,
  rootPid: number,
): Promise<ProcInfo[]> {
  const table = await source.snapshot();
  const root = table.get(rootPid);
  // A zombie root's children were already reparented at its exit; nothing links them to it.
  if (root === undefined || root.zombie) return [];
  return collectDescendants(table.values(), rootPid).filter((p) => !p.zombie).map(toInfo);
}

export async function isAliveWith(
  source: ProcSource,
  pid: number,
  startTime?: string,
): Promise<boolean> {
  const rec = (await source.probe([pid])).get(pid);
  if (rec === undefined || rec.zombie) return false;
  if (startTime === undefined) return true;
  // /proc gives clock ticks since boot, ps a wall-clock date: a token recorded by a process
  // that read the other source cannot be compared, and must not make a live process look
  // dead (a Node server's record read by a compiled `jobs` CLI without /proc access).
  const recorded = tokenKind(startTime);
  const current = tokenKind(rec.startTime);
  if (recorded !== "other" && current !== "other" && recorded !== current) return true;
  return rec.startTime === startTime;
}

/** procfs: clock ticks since boot; ps: `lstart` with LC_ALL=C, e.g. "Mon Nov 30 01:02:03 2026". */
function tokenKind(token: string): "ticks" | "date" | "other" {
  if (/^\d+$/.test(token)) return "ticks";
  if (/^[A-Z][a-z]{2} [A-Z][a-z]{2} +\d{1,2} \d{2}:\d{2}:\d{2} \d{4}$/.test(token)) return "date";
  return "other";
}

/**
 * Find the tree and SIGSTOP every member, repeating until a walk finds nobody new. Returns the
 * members in discovery order (root first). Members that vanish meanwhile are kept in the list;
 * the liveness checks later classify them as gone.
 */
async function freezeTree(
  source: ProcSource,
  root: ProcRecord,
  send: SignalSender,
): Promise<ProcInfo[]> {
  const members = new Map<number, ProcInfo>([[root.pid, toInfo(root)]]);
  // When the wait for the last stops to land ends: counted from the first walk that found
  // nobody new, and again after each that did. Counted from the start, the walks of a large
  // tree on a loaded machine had used it up before the last members were found, and a member
  // still running then forked once more and its child escaped (CI, a tree of 1,200 forking).
  let settleBy: number | undefined;
  send(root.pid, "SIGSTOP");
  for (let round = 0; round < MAX_STOP_ROUNDS; round++) {
    let table: ProcTable;
    try {
      table = await source.snapshot();
    } catch (err) {
      // Never leave a frozen tree behind. The members were killed on purpose anyway, and a
      // stopped process cannot exit, so its pid cannot have been recycled in the meantime.
      for (const m of members.values()) send(m.pid, "SIGKILL");
      throw err;
    }
    // Walk from every still-live member, not just the root: a member whose parent died before
    // being stopped now has ppid 1, but its own children are still reachable through it.
    const seeds = [...members.values()].filter((m) => isSameLive(table, m)).map((m) => m.pid);
    const fresh = collectDescendants(table.values(), seeds).filter(
      (p) => !p.zombie && !members.has(p.pid) && p.pid !== process.pid,
    );
    if (fresh.length === 0) {
      // A SIGSTOP lands when its target next runs, so a member still running may fork once
      // more after this walk, and that child would escape (seen on a loaded machine). Done once
      // every live member is seen stopped, or after STOP_WAIT_MS (a process in uninterruptible
      // sleep stops only when the kernel lets it).
      const running = [...members.values()].some((m) =>
        isSameLive(table, m) && table.get(m.pid)?.stopped === false
      );
      settleBy ??= performance.now() + STOP_WAIT_MS;
      if (!running || performance.now() >= settleBy) break;
      round--;
      await delay(STOP_POLL_MS);
      continue;
    }
    settleBy = undefined;
    for (const p of fresh) {
      members.set(p.pid, toInfo(p));
      send(p.pid, "SIGSTOP");
    }
  }
  return [...members.values()];
}

/** Poll until every member is gone or the deadline passes; returns the still-alive members. */
async function waitGone(
  source: ProcSource,
  members: ProcInfo[],
  waitMs: number,
  rootGone: (info: ProcInfo) => boolean,
): Promise<ProcInfo[]> {
  const deadline = performance.now() + waitMs;
  let alive = members;
  for (;;) {
    const table = await source.probe(alive.map((m) => m.pid));
    alive = alive.filter((m) => !rootGone(m) && isSameLive(table, m));
    const left = deadline - performance.now();
    if (alive.length === 0 || left <= 0) return alive;
    await delay(Math.min(POLL_MS, left));
  }
}

export async function killTreeWith(
  source: ProcSource,
  rootPid: number,
  opts: KillTreeOptions,
  send: SignalSender = sendSignal,
): Promise<KillReport> {
  assertKillablePid(rootPid);
  const started = performance.now();
  const report = (pids: number[], terminated: number[], killed: number[], survivors: number[]) => ({
    pids,
    terminated,
    killed,
    survivors,
    elapsedMs: Math.round(performance.now() - started),
  });
  const rootExited = opts.isRootExited ?? (() => false);
  if (rootExited()) return report([], [], [], []);
  const root = (await source.probe([rootPid])).get(rootPid);
  if (root === undefined || root.zombie || rootExited()) return report([], [], [], []);
  const rootGone = (m: ProcInfo) => m.pid === rootPid && rootExited();

  const members = await freezeTree(source, root, send);
  const pids = members.map((m) => m.pid);

  let pending = members;
  const terminated: number[] = [];
  if (opts.signal !== "SIGKILL") {
    // TERM before CONT: the signal is queued while stopped, so each process handles it as the
    // very first thing on resuming instead of getting a window to fork again.
    for (const m of members) if (!rootGone(m)) send(m.pid, "SIGTERM");
    for (const m of members) if (!rootGone(m)) send(m.pid, "SIGCONT");
    const grace = Math.max(0, opts.graceMs);
    const rootGrace = Math.min(grace, Math.max(0, opts.rootGraceMs ?? grace));
    pending = await waitGone(source, members, rootGrace, rootGone);
    if (pending.some((m) => m.pid !== rootPid)) {
      pending = await waitGone(source, pending, grace - rootGrace, rootGone);
    }
    const alive = new Set(pending.map((m) => m.pid));
    terminated.push(...pids.filter((pid) => !alive.has(pid)));
  }

  // Re-verify identity right before SIGKILL: during the grace period a member may have exited
  // and its pid been handed to an unrelated process.
  const table = await source.probe(pending.map((m) => m.pid));
  const killed: number[] = [];
  for (const m of pending) {
    if (rootGone(m) || !isSameLive(table, m)) {
      terminated.push(m.pid);
      continue;
    }
    // SIGKILL works on stopped processes too, so no SIGCONT is needed on this path.
    send(m.pid, "SIGKILL");
    killed.push(m.pid);
  }
  const killedInfo = pending.filter((m) => killed.includes(m.pid));
  const survivors = await waitGone(source, killedInfo, KILL_WAIT_MS, rootGone);
  return report(pids, terminated, killed, survivors.map((m) => m.pid));
}
