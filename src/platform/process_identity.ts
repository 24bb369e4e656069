/**
 * Who a process is, in a way that survives pid reuse: its pid plus the OS's start-time token.
 * Job records name their owning server and their delegate this way, so another process can
 * tell whether the one recorded still runs. The process table readers load at first use:
 * the server answers `initialize` without them.
 */
import process from "node:process";
import { isWindows, osPlatform } from "./runtime.ts";

/** A process identity that survives pid reuse: pid plus the OS's start-time token. */
export interface ProcessIdentity {
  pid: number;
  startTime: string;
}

/** The identity of `pid`, or undefined when it is gone. Windows gives an empty token. */
export async function identityOf(pid: number): Promise<ProcessIdentity | undefined> {
  if (isWindows) return { pid, startTime: "" };
  const { procSourceFor } = await import("./tree_kill.ts");
  const table = await procSourceFor(osPlatform, "read process table").probe([pid]);
  const info = table.get(pid);
  return info ? { pid, startTime: info.startTime } : undefined;
}

let self: Promise<ProcessIdentity> | undefined;

/** This process, as recorded in the jobs it owns. */
export function selfIdentity(): Promise<ProcessIdentity> {
  self ??= identityOf(process.pid).then((id) => id ?? { pid: process.pid, startTime: "" });
  return self;
}

/** Whether the recorded process still runs (same pid and same start time). */
export async function isRunning(identity: ProcessIdentity): Promise<boolean> {
  if (isWindows) return processExists(identity.pid);
  const { isAlive } = await import("./tree_kill.ts");
  return await isAlive(identity.pid, identity.startTime || undefined);
}

/**
 * Whether a process with this pid exists (signal 0). A process of another user that we may
 * not signal still exists when `permissionMeansAlive` says so.
 */
export function processExists(pid: number, permissionMeansAlive = false): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return permissionMeansAlive && (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Whether two identities name one process (a reused pid has another start time). */
export function sameProcess(a: ProcessIdentity, b: ProcessIdentity): boolean {
  return a.pid === b.pid && a.startTime === b.startTime;
}
