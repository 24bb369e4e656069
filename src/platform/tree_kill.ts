/**
 * Kill a process together with all of its descendants, including ones that moved to their own
 * session/process group via setsid. The POSIX algorithm and its limitations are described in
 * ./posix/proc_tree.ts, the Windows one (taskkill /T /F) in ./windows/taskkill.ts; this module
 * only picks the implementation for the running OS.
 */

import { isLinux, isWindows, osPlatform } from "./runtime.ts";
import type { ProcInfo } from "./posix/proc_parse.ts";
import { sessionMembers } from "./posix/session.ts";
import { hasProcfs, procfsSource, type ProcSource, psSource } from "./posix/proc_source.ts";
import { killTreeWindows } from "./windows/taskkill.ts";
import {
  isAliveWith,
  type KillReport,
  type KillTreeOptions,
  killTreeWith,
  listDescendantsWith,
  sendSignal,
} from "./posix/proc_tree.ts";
import {
  type JobMarker,
  type JobScope,
  scanProcfs,
  sweepJobWith,
  type SweepOptions,
  type SweepReport,
  type SweepSource,
} from "./posix/job_sweep.ts";

export type { JobMarker, JobScope, KillReport, KillTreeOptions, ProcInfo, SweepReport };

/**
 * The process-table reader for a POSIX OS. Windows has no ppid-based tree walk with
 * stop/continue semantics (killTree uses taskkill there), so fail loudly instead of
 * half-working. `action` only shapes the error message.
 */
export function procSourceFor(platform: string, action = "kill process tree"): ProcSource {
  if (platform === "win32") {
    throw new Error(
      `Cannot ${action}: there is no process table reader for Windows (killTree uses taskkill)`,
    );
  }
  // Linux (and Android) expose /proc/<pid>/stat, which is faster and has a precise start time;
  // fall back to ps if /proc is not mounted. macOS and the BSDs always use ps.
  if ((platform === "linux" || platform === "android") && hasProcfs()) return procfsSource;
  return psSource;
}

// async so that the Windows error surfaces as a rejection, like every other failure here.

/** Live (non-zombie) descendants of rootPid, excluding rootPid itself. */
export async function listDescendants(rootPid: number): Promise<ProcInfo[]> {
  return await listDescendantsWith(procSourceFor(osPlatform, "list process tree"), rootPid);
}

/** Whether pid exists and is not a zombie; with startTime, also that it is the same process. */
export async function isAlive(pid: number, startTime?: string): Promise<boolean> {
  return await isAliveWith(procSourceFor(osPlatform, "check process"), pid, startTime);
}

/**
 * Stop, terminate and if needed SIGKILL rootPid and every descendant. On Windows, taskkill
 * /T /F ends the tree at once (there is no SIGTERM to wait on) and is awaited.
 */
export async function killTree(rootPid: number, opts: KillTreeOptions): Promise<KillReport> {
  if (isWindows) return await killTreeWindows(rootPid, opts);
  return await killTreeWith(procSourceFor(osPlatform), rootPid, opts);
}

/**
 * SIGKILLs every process left in the session `sid` (a detached child's own session): the
 * stragglers a tree walk cannot reach. POSIX only; a no-op on Windows.
 */
export function killSession(sid: number): number[] {
  if (isWindows || sid <= 1) return [];
  const killed: number[] = [];
  for (const pid of sessionMembers(sid)) {
    try {
      if (sendSignal(pid, "SIGKILL")) killed.push(pid);
    } catch {
      // Already gone.
    }
  }
  return killed;
}

/**
 * Ends every process of a job that is still alive, wherever it went: members of the job's
 * session and, on Linux, every process of our uid whose environment carries the job's
 * marker, with their descendants (see ./posix/job_sweep.ts). Without /proc only the session
 * is known. A no-op on Windows, where the tree kill (taskkill /T) is all there is.
 */
export async function sweepJob(scope: JobScope, opts: SweepOptions): Promise<SweepReport> {
  if (isWindows) return { found: [], survivors: [] };
  const procfs = (osPlatform === "linux" || osPlatform === "android") && hasProcfs();
  const source: SweepSource = procfs
    ? { scan: () => Promise.resolve(scanProcfs(scope)), probe: (pids) => procfsSource.probe(pids) }
    : {
      scan: async () => ({
        table: await psSource.snapshot(),
        matches: scope.sessionId === undefined
          ? []
          : sessionMembers(scope.sessionId).filter((pid) => pid !== scope.sessionId),
      }),
      probe: (pids) => psSource.probe(pids),
    };
  return await sweepJobWith(source, opts, sendSignal);
}

/** /proc start time of `pid` in clock ticks (Linux), for JobScope.notBeforeTicks. */
export async function startTicks(pid: number): Promise<number | undefined> {
  if (!isLinux || !hasProcfs()) return undefined;
  const rec = (await procfsSource.probe([pid])).get(pid);
  return rec === undefined ? undefined : Number(rec.startTime);
}
