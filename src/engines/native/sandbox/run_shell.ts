/**
 * Runs one shell command of the native engine: unconfined when the user turned the sandbox
 * off, else in bubblewrap with the job's writable dirs, the protected paths read-only or
 * hidden (mounts.ts), placeholders for missing ones, and the limits on processes,
 * memory and file size. Refused, with nothing run, while the turn's protected paths cannot be
 * kept in place (watch.ts).
 */
import { lstatSync, mkdirSync, mkdtempSync, opendirSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type CommandResult, runCommand, shellCommand } from "../../../platform/command_run.ts";
import { minimalShellEnv } from "../../../platform/env.ts";
import { writeFileAtomicSync } from "../../../platform/atomic_write.ts";
import { HOST_RUN_PATHS } from "../../../guard/protected_paths.ts";
import { hiddenByReal, hiddenThroughTurn } from "../../../guard/hidden_list.ts";
import { type Quarantined, quarantinePlanted } from "../../../guard/planted.ts";
import { isRoot } from "../../../platform/runtime.ts";
import { bwrapCommand } from "../../bwrap_base.ts";
import { mountHelperFor } from "../../mount_helper.ts";
import {
  bwrapArgs,
  sandboxHelperShare,
  type SandboxLayout,
  type SandboxToolchains,
} from "./bwrap_args.ts";
import { type Placeholder, PlaceholderRegistry } from "../../mount_placeholders.ts";
import { DEFAULT_LIMITS, limitPlan } from "../../sandbox_limits.ts";
import { findPrlimit, type LimitedLaunch, limitedLaunch } from "../../limit_launch.ts";
import type { ShellRunner } from "./shell_runner.ts";
import {
  changedHostRunPaths,
  hostRunState,
  protectedMounts,
  rootOnlySystemFiles,
} from "./mounts.ts";
import { movedPaths, movedRefusal, nestedHostRun, scanRefusal, watchMounts } from "./watch.ts";

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
  /** The command's output as it arrives (platform/command_run.ts). */
  onOutput?: (text: string) => void;
}

export interface ShellResult extends CommandResult {
  /** Protected paths that were created or replaced during the command (should be none). */
  protectedChanged: string[];
  /** Host-run paths the command created where no placeholder held them, moved out. */
  quarantined?: Quarantined[];
  /** Why the command was not started (nothing ran), for the model and the job's record. */
  refused?: string;
  /** Forks the command's pids cgroup refused (absent when none was, or without one). */
  processLimitHits?: number;
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

/** `path` as a placeholder when it is an empty file or folder (maybe another sandbox's). */
function emptyEntry(path: string): Placeholder | undefined {
  try {
    const info = lstatSync(path);
    if (info.isFile() && info.size === 0) return { path, kind: "file" };
    if (info.isDirectory()) {
      const dir = opendirSync(path);
      try {
        if (dir.readSync() === null) return { path, kind: "dir" };
      } finally {
        dir.closeSync();
      }
    }
  } catch {
    // Gone: left to bubblewrap, which reports a missing source.
  }
  return undefined;
}

/**
 * The toolchains as mounted: the job's cache folder made (private to the server's user) when
 * it is missing; left out when it cannot be, so that caches go to the command's own `$HOME`.
 */
function withCacheDir(tools: SandboxToolchains): SandboxToolchains {
  if (!tools.cacheDir) return tools;
  try {
    mkdirSync(tools.cacheDir, { recursive: true, mode: 0o700 });
    return tools;
  } catch {
    return { view: tools.view };
  }
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
    ...(req.onOutput ? { onOutput: req.onOutput } : {}),
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
  const notRun = {
    exitCode: null,
    signal: null,
    durationMs: 0,
    output: "",
    droppedChars: 0,
    timedOut: false,
    aborted: false,
    protectedChanged: [],
  };
  if (refusal) return { ...notRun, refused: refusal };
  const readOnly = [...(runner.nested?.readOnly ?? []), ...nested.paths];
  const mounts = protectedMounts(
    req.writable,
    { ...runner.nested, readOnly },
    req.hide ?? [],
  );
  // Registered before bubblewrap makes them, so that a server killed meanwhile leaves them
  // known to the next one (placeholder_sweep.ts).
  let claim;
  try {
    claim = await new PlaceholderRegistry(runDir).claim(
      mounts.placeholders,
      mounts.readOnly.flatMap((path) => emptyEntry(path) ?? []),
    );
  } catch (e) {
    return { ...notRun, refused: `Bash is refused: ${(e as Error).message}` };
  }
  // What this command is kept from, for the reply (the stores at the top are looked for again
  // before each command: one that an earlier command made is hidden from this one).
  runner.hiddenSeen = hiddenThroughTurn(
    runner.hiddenSeen ?? new Map(),
    hiddenByReal(req.writable, runner.nested?.hidden ?? [], []),
  );
  let limited: LimitedLaunch | undefined;
  let result: CommandResult;
  let hits = 0;
  let before: Map<string, string>;
  try {
    // Another sandbox's placeholders: mounted as placeholders too, so that bubblewrap makes
    // them again if that sandbox's server removes them before this one starts.
    const adopted = new Set(claim.adopted.map((p) => p.path));
    mounts.readOnly = mounts.readOnly.filter((path) => !adopted.has(path));
    mounts.placeholders.push(...claim.adopted);
    // A placeholder is a fresh mount, not the path bound: nothing to compare inside.
    if (mounts.identities) {
      mounts.identities = mounts.identities.filter((i) => !adopted.has(i.path));
    }
    await watchMounts(watch, mounts, req.writable);
    // A cgroup the launching shell joins before it becomes bubblewrap: the command's memory
    // as a whole, and its processes (RLIMIT_NPROC does not bind uid 0).
    const plan = limitPlan(limits);
    limited = !req.signal.aborted && isExecutable(runner.bwrap)
      ? await limitedLaunch(plan.cgroup, plan.rlimits)
      : undefined;
    const layout: SandboxLayout = {
      cwd: req.cwd,
      writable: req.writable,
      root,
      mounts,
      ...(root ? { systemMasks: rootOnlySystemFiles() } : {}),
      limits,
      memoryCgroup: limited?.memoryCgroup ?? false,
      ...(findPrlimit() ? { prlimit: findPrlimit()! } : {}),
      ...(mounts.placeholders.length > 0 ? { gitExcludes: gitExcludes(runDir) } : {}),
      ...(runner.toolchains ? { toolchains: withCacheDir(runner.toolchains) } : {}),
    };
    const helper = mountHelperFor(runner.bwrap, sandboxHelperShare(layout).helper);
    let bwrap;
    try {
      bwrap = bwrapCommand(
        runner.bwrap,
        bwrapArgs(helper ? { ...layout, mountHelper: helper } : layout, req.command),
      );
    } catch (e) {
      return { ...notRun, refused: `Bash is refused: ${(e as Error).message}` };
    }
    const launch = limited ? limited.launch(bwrap.command, bwrap.args) : bwrap;
    before = hostRunState(req.writable);
    result = await runCommand({ ...spec, ...launch, env: { PATH: "/usr/bin:/bin" } });
    hits = await limited?.processLimitHits() ?? 0;
  } finally {
    await claim.release();
    await limited?.release();
  }
  // Checked here too, so that the command that moved them is the one the reply names.
  const moved = await movedPaths(watch);
  if (moved.length > 0) watch.moved ??= movedRefusal(moved, req.cwd);
  // Created where no placeholder held them: moved out of the project before anything on the
  // host acts on them (the command has ended; nothing of it runs any more).
  const quarantined = quarantinePlanted(mounts.unheld, join(runDir, "planted"));
  const gone = new Set(quarantined.filter((q) => q.movedTo).map((q) => q.path));
  const changed = changedHostRunPaths(before, hostRunState(req.writable))
    .filter((p) => !gone.has(p));
  return {
    ...result,
    protectedChanged: [...new Set([...changed, ...moved])],
    ...(quarantined.length > 0 ? { quarantined } : {}),
    ...(hits > 0 ? { processLimitHits: hits } : {}),
  };
}
