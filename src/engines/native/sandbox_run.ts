/**
 * Runs one shell command of the native engine: unconfined when the user turned the sandbox
 * off, else in bubblewrap with the job's writable dirs, the protected paths read-only or
 * hidden (sandbox_mounts.ts), placeholders for missing ones, and the limits on processes,
 * memory and file size. Refused, with nothing run, while the turn's protected paths cannot be
 * kept in place (sandbox_watch.ts).
 */
import { mkdirSync, mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type CommandResult, runCommand, shellCommand } from "../../platform/command_run.ts";
import { minimalShellEnv } from "../../platform/env.ts";
import { writeFileAtomicSync } from "../../platform/atomic_write.ts";
import { createPidsCgroup } from "../../platform/posix/pids_cgroup.ts";
import { HOST_RUN_PATHS } from "../protected_paths.ts";
import { isRoot } from "../../platform/runtime.ts";
import { bwrapArgs, DEFAULT_LIMITS, type SandboxLayout } from "./bwrap_args.ts";
import { PlaceholderRegistry } from "./placeholders.ts";
import type { ShellRunner } from "./sandbox.ts";
import {
  changedHostRunPaths,
  hostRunState,
  protectedMounts,
  rootOnlySystemFiles,
} from "./sandbox_mounts.ts";
import {
  movedPaths,
  movedRefusal,
  nestedHostRun,
  scanRefusal,
  watchMounts,
} from "./sandbox_watch.ts";

export interface CommandRequest {
  command: string;
  cwd: string;
  writable: readonly string[];
  timeoutMs: number;
  signal: AbortSignal;
  /** Output kept: the last this many characters. */
  keepChars: number;
  /** The server's own settings and records: hidden where a writable dir holds them. */
  hide?: readonly string[];
  onSpawn?: (pid: number) => void;
}

export interface ShellResult extends CommandResult {
  /** Protected paths that were created or replaced during the command (should be none). */
  protectedChanged: string[];
  /** Why the command was not started (nothing ran), for the model and the job's record. */
  refused?: string;
}

let privateRunDir: string | undefined;

/** Where placeholder users register when the server gave no directory: private to us. */
function defaultRunDir(): string {
  privateRunDir ??= mkdtempSync(join(tmpdir(), "ollama-delegate-run-"));
  return privateRunDir;
}

const excludesWritten = new Set<string>();

/** The exclude file for placeholders in `runDir`, written once per process. */
function gitExcludes(runDir: string): string {
  const path = join(runDir, "git-excludes");
  if (!excludesWritten.has(path)) {
    mkdirSync(runDir, { recursive: true, mode: 0o700 });
    writeFileAtomicSync(path, HOST_RUN_PATHS.map((name) => `/${name}\n`).join(""));
    excludesWritten.add(path);
  }
  return path;
}

function isExecutable(path: string): boolean {
  try {
    return statSync(path).isFile() && (statSync(path).mode & 0o111) !== 0;
  } catch {
    return false;
  }
}

/** prlimit on the host's /usr or /bin, which the sandbox mounts at the same place. */
export function findPrlimit(): string | undefined {
  return ["/usr/bin/prlimit", "/bin/prlimit"].find((p) => {
    try {
      return statSync(p).isFile();
    } catch {
      return false;
    }
  });
}

/** Runs one command with `runner`; never throws for the command's own failure. */
export async function runShell(
  runner: Exclude<ShellRunner, { kind: "refused" }>,
  req: CommandRequest,
): Promise<ShellResult> {
  const base = { command: "", args: [] as string[], cwd: req.cwd, env: {} };
  const spec = {
    ...base,
    timeoutMs: req.timeoutMs,
    signal: req.signal,
    keepChars: req.keepChars,
    ...(req.onSpawn ? { onSpawn: req.onSpawn } : {}),
  };
  if (runner.kind !== "bwrap") {
    const shell = shellCommand(req.command);
    const result = await runCommand({ ...spec, ...shell, env: minimalShellEnv() });
    return { ...result, protectedChanged: [] };
  }
  const root = isRoot();
  const runDir = runner.runDir ?? defaultRunDir();
  const limits = runner.limits ?? DEFAULT_LIMITS;
  const watch = await nestedHostRun(runner, req.writable);
  const nested = watch.scan;
  if (!watch.moved) {
    const moved = await movedPaths(watch);
    if (moved.length > 0) watch.moved = movedRefusal(moved, req.cwd);
  }
  const refusal = nested.incomplete ? scanRefusal(nested.incomplete) : watch.moved;
  if (refusal) {
    return {
      exitCode: null,
      signal: null,
      durationMs: 0,
      output: "",
      droppedChars: 0,
      timedOut: false,
      aborted: false,
      refused: refusal,
      protectedChanged: [],
    };
  }
  const readOnly = [...(runner.nested?.readOnly ?? []), ...nested.paths];
  const mounts = protectedMounts(
    req.writable,
    { ...runner.nested, readOnly },
    req.hide ?? [],
  );
  await watchMounts(watch, mounts, req.writable);
  const layout: SandboxLayout = {
    cwd: req.cwd,
    writable: req.writable,
    root,
    mounts,
    ...(root ? { systemMasks: rootOnlySystemFiles() } : {}),
    limits,
    ...(findPrlimit() ? { prlimit: findPrlimit()! } : {}),
    ...(mounts.placeholders.length > 0 ? { gitExcludes: gitExcludes(runDir) } : {}),
  };
  let command = runner.bwrap;
  let args = bwrapArgs(layout, req.command);
  // RLIMIT_NPROC does not bind uid 0: as root the process count comes from a pids cgroup,
  // which the launching shell joins before it becomes bubblewrap.
  const cgroup = root && !req.signal.aborted && isExecutable(command)
    ? await createPidsCgroup(limits.maxProcesses)
    : undefined;
  if (cgroup) {
    args = ["-c", 'echo $$ > "$0" || exit 125; exec "$@"', cgroup.procsFile, command, ...args];
    command = "/bin/sh";
  }
  const before = hostRunState(req.writable);
  const release = await new PlaceholderRegistry(runDir)
    .claim(mounts.placeholders);
  let result: CommandResult;
  try {
    result = await runCommand({ ...spec, command, args, env: { PATH: "/usr/bin:/bin" } });
  } finally {
    await release();
    await cgroup?.remove();
  }
  // Checked here too, so that the command that moved them is the one the reply names.
  const moved = await movedPaths(watch);
  if (moved.length > 0) watch.moved ??= movedRefusal(moved, req.cwd);
  const changed = changedHostRunPaths(before, hostRunState(req.writable));
  return { ...result, protectedChanged: [...new Set([...changed, ...moved])] };
}
