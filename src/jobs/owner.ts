import process from "node:process";
import { isAlive, procSourceFor } from "../platform/tree_kill.ts";

/** A process identity that survives pid reuse: pid plus the OS's start-time token. */
export interface ProcessIdentity {
  pid: number;
  startTime: string;
}

/** The identity of `pid`, or undefined when it is gone. Windows gives an empty token. */
export async function identityOf(pid: number): Promise<ProcessIdentity | undefined> {
  if (process.platform === "win32") return { pid, startTime: "" };
  const table = await procSourceFor(process.platform, "read process table").probe([pid]);
  const info = table.get(pid);
  return info ? { pid, startTime: info.startTime } : undefined;
}

let self: Promise<ProcessIdentity> | undefined;

/** This server process, as recorded in the jobs it owns. */
export function selfIdentity(): Promise<ProcessIdentity> {
  self ??= identityOf(process.pid).then((id) => id ?? { pid: process.pid, startTime: "" });
  return self;
}

/** Whether the recorded process still runs (same pid and same start time). */
export async function isRunning(identity: ProcessIdentity): Promise<boolean> {
  if (process.platform === "win32") {
    try {
      process.kill(identity.pid, 0);
      return true;
    } catch {
      return false;
    }
  }
  return await isAlive(identity.pid, identity.startTime || undefined);
}
