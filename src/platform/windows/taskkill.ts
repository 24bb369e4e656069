/**
 * Process-tree termination for Windows: `taskkill /pid N /T /F`, as execa's `killDescendants`
 * does. Windows has no SIGTERM for console programs (Deno and Node map every signal to
 * TerminateProcess), so the tree is ended at once; /T walks the parent links Windows keeps,
 * /F forces it. Known limitation, as on POSIX: a descendant whose parent had already exited is
 * no longer linked to the tree and is not found.
 */

import { win32 } from "node:path";
import process from "node:process";
import { allowlistedEnv } from "../env.ts";
import type { KillReport, KillTreeOptions } from "../posix/proc_tree.ts";
import { currentEnv } from "../runtime.ts";
import type { ExitStatus, SpawnOptions } from "../spawn.ts";
import { spawnProcess } from "../spawn.ts";
import { system32 } from "./system_dir.ts";

/** taskkill's exit code when no process has that pid (it exited, or never existed). */
const NOT_FOUND = 128;

/**
 * The taskkill command for a tree, run by absolute path from `%SystemRoot%\System32` so that no
 * `taskkill` on PATH or in the working directory is run instead.
 */
export function taskkillCommand(
  pid: number,
  env: Record<string, string>,
): { command: string; args: string[] } {
  // pid 0 is the idle process and 4 the kernel; neither is ever a child of ours.
  if (!Number.isSafeInteger(pid) || pid <= 4) {
    throw new RangeError(`Cannot kill process tree: pid ${pid} is not a process we started`);
  }
  return {
    command: win32.join(system32(env), "taskkill.exe"),
    args: ["/pid", String(pid), "/T", "/F"],
  };
}

/** What a finished taskkill run means for the tree of `pid`. */
export function taskkillReport(pid: number, status: ExitStatus, elapsedMs: number): KillReport {
  const report: KillReport = { pids: [pid], terminated: [], killed: [], survivors: [], elapsedMs };
  if (status.code === 0) report.killed.push(pid);
  else if (status.code === NOT_FOUND) report.pids = [];
  else report.survivors.push(pid);
  return report;
}

/** Kills `rootPid` and its descendants with taskkill and waits for taskkill to finish. */
export async function killTreeWindows(
  rootPid: number,
  opts: Pick<KillTreeOptions, "isRootExited">,
  env: Record<string, string> = allowlistedEnv(currentEnv(), true),
): Promise<KillReport> {
  const started = Date.now();
  if (rootPid === process.pid) {
    throw new RangeError(`Cannot kill process tree: pid ${rootPid} is this server`);
  }
  const { command, args } = taskkillCommand(rootPid, env);
  // A root that has exited may have had its pid recycled: leave it alone, as on POSIX.
  if (opts.isRootExited?.()) return taskkillReport(rootPid, { code: NOT_FOUND, signal: null }, 0);
  const spawnOptions: SpawnOptions = { command, args, cwd: system32(env), env };
  const child = await spawnProcess(spawnOptions);
  // Drain both pipes so taskkill never blocks on a full one.
  const [status] = await Promise.all([
    child.status,
    new Response(child.stdout).arrayBuffer(),
    new Response(child.stderr).arrayBuffer(),
  ]);
  return taskkillReport(rootPid, status, Date.now() - started);
}
