/**
 * Runs the native engine's shell commands. On Linux every command runs in bubblewrap:
 * an empty root with the system read-only, only the job's directories writable, no
 * network, no inherited environment. When the sandbox cannot be had the command is
 * refused (fail closed); running unconfined needs `sandbox: "off"` set by the user.
 */
import { mkdirSync, mkdtempSync, statSync } from "node:fs";
import { lstat, readdir, realpath } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { type CommandResult, runCommand, shellCommand } from "../../platform/command_run.ts";
import { minimalShellEnv } from "../../platform/env.ts";
import { writeFileAtomicSync } from "../../platform/atomic_write.ts";
import { canLimitPidsWithCgroup, createPidsCgroup } from "../../platform/posix/pids_cgroup.ts";
import { HOST_RUN_PATHS } from "../protected_paths.ts";
import { type HostRunScan, scanHostRun } from "../host_run_scan.ts";
import { isLinux, isRoot } from "../../platform/runtime.ts";
import { which } from "../../platform/which.ts";
import { bwrapArgs, DEFAULT_LIMITS, type SandboxLayout, type SandboxLimits } from "./bwrap_args.ts";
import { PlaceholderRegistry } from "./placeholders.ts";
import {
  changedHostRunPaths,
  hostRunState,
  type ProtectedMounts,
  protectedMounts,
  rootOnlySystemFiles,
} from "./sandbox_mounts.ts";
import { displayPath, isInsideRoots } from "./tools/real_paths.ts";

export type SandboxMode = "on" | "off";
export { bwrapArgs, DEFAULT_LIMITS, type SandboxLimits };

export const INSTALL_BWRAP_HINT =
  "Install bubblewrap (Debian/Ubuntu: apt install bubblewrap; Fedora: dnf install bubblewrap; " +
  "Arch: pacman -S bubblewrap), or allow unconfined commands with " +
  "`ollama-delegate config --sandbox off`";

/** Paths found below the top of the writable dirs that the sandbox also protects. */
export interface NestedPaths {
  /** Made read-only: nested `.git` folders and files. */
  readOnly?: readonly string[];
  /** Hidden: credential stores inside the project. */
  hidden?: readonly string[];
}

/** bubblewrap, with what a job's commands are limited to. */
export interface BwrapRunner {
  kind: "bwrap";
  bwrap: string;
  limits?: SandboxLimits;
  /** Where users of placeholder mount points register (see placeholders.ts). */
  runDir?: string;
  /** Set by the engine once it has walked the job's directories. */
  nested?: NestedPaths;
  /**
   * The nested host-run paths found in `key` (the writable dirs) at the turn's first command,
   * and what every protected path inside them was then (`watched`): kept for the turn, never
   * scanned again. `moved` is set, for the rest of the turn, once one of them changed.
   */
  hostRun?: HostRunWatch;
}

/** What a turn's sandbox found and watches; see BwrapRunner.hostRun. */
export interface HostRunWatch {
  key: string;
  scan: HostRunScan;
  /** Protected path -> its signature when first mounted (see `signatures`). */
  watched?: Map<string, string>;
  /** The refusal for the rest of the turn once a watched path moved or was replaced. */
  moved?: string;
}

/** Where the shell runs, or why it cannot. */
export type ShellRunner =
  | BwrapRunner
  | { kind: "unconfined" }
  | { kind: "refused"; reason: string };

let found: { path: string | undefined } | undefined;

/**
 * Finds bubblewrap, system locations first and only then the server's PATH (which may
 * include a directory a delegate can write), once per process.
 */
export function findBwrap(
  env: Record<string, string | undefined> = process.env,
): string | undefined {
  found ??= {
    path: which("bwrap", { PATH: "/usr/bin:/bin:/usr/local/bin" }, "/") ??
      which("bwrap", { PATH: env.PATH ?? "" }, "/"),
  };
  return found.path;
}

/** Decides how the Bash tool runs under `mode` on this machine. */
export function shellRunner(
  mode: SandboxMode,
  bwrap: string | undefined = findBwrap(),
  options: { limits?: SandboxLimits; runDir?: string } = {},
): ShellRunner {
  if (mode === "off") return { kind: "unconfined" };
  if (!isLinux) {
    return {
      kind: "refused",
      reason: "Bash is refused: the native engine's sandbox (bubblewrap) exists only on Linux. " +
        "To let delegates run commands unconfined on this machine, the user can run " +
        "`ollama-delegate config --sandbox off`",
    };
  }
  if (!bwrap) {
    return {
      kind: "refused",
      reason: `Bash is refused: bubblewrap (bwrap) is not installed, and commands never run ` +
        `unconfined unless the user says so. ${INSTALL_BWRAP_HINT}`,
    };
  }
  return { kind: "bwrap", bwrap, ...options };
}

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

/**
 * What each path is, to notice one the sandbox could no longer find: the folder it is in
 * (inode and real path: a renamed folder is gone, a new one has another inode, one swapped for
 * a link to it has another real path) and the path itself (its type; for a folder or a link
 * also its inode, a link being replaceable inside the sandbox since only its target is
 * mounted). A regular file's own inode is left out: the sandbox keeps it from being renamed
 * or removed (EBUSY), and the user saving it on the host (write, then rename) must not stop
 * the delegate. An empty file or folder counts as absent, as in hostRunState: it may be
 * another sandbox's placeholder, which that sandbox removes when its command ends.
 */
async function signatures(paths: Iterable<string>): Promise<Map<string, string>> {
  const list = [...paths];
  // Looked up once per folder: a project's .git, .claude and CLAUDE.md share theirs.
  const folders = new Map<string, Promise<string>>();
  const folderOf = (parent: string) => {
    let found = folders.get(parent);
    if (!found) {
      found = Promise.all([lstat(parent), realpath(parent)])
        .then(([info, real]) => ` in ${info.dev}:${info.ino} ${real}`);
      folders.set(parent, found);
    }
    return found;
  };
  const identity = async (p: string) => {
    const where = await folderOf(dirname(p));
    const info = await lstat(p).catch(() => undefined);
    if (!info) return `absent${where}`;
    if (info.isFile()) return (info.size === 0 ? "absent" : "file") + where;
    if (info.isDirectory() && (await readdir(p)).length === 0) return `absent${where}`;
    const type = info.isDirectory() ? "dir" : info.isSymbolicLink() ? "link" : "other";
    return `${type} ${info.dev}:${info.ino}${where}`;
  };
  const sigs = await Promise.all(list.map((p) => identity(p).catch(() => "gone")));
  return new Map(list.map((p, i) => [p, sigs[i]!]));
}

/** The watched paths that are no longer what they were, sorted. */
async function movedPaths(watch: HostRunWatch): Promise<string[]> {
  if (!watch.watched) return [];
  const now = await signatures(watch.watched.keys());
  return [...now].filter(([p, sig]) => watch.watched!.get(p) !== sig).map(([p]) => p).sort();
}

/**
 * The host-run paths below the top of the writable dirs, found once per turn, at its first
 * command. Never scanned again within the turn: a scan leaves out `node_modules`, so a project
 * moved there (`mv proj node_modules`) would not be found, and its `.git` would be writable in
 * the next command. Instead every protected path is watched (see `watchMounts`), and Bash is
 * refused once one moved. A scan that stopped early is kept for the turn too: its commands
 * are refused.
 */
async function nestedHostRun(runner: BwrapRunner, writable: readonly string[]) {
  const key = writable.join("\0");
  if (runner.hostRun?.key !== key) runner.hostRun = { key, scan: await scanHostRun(writable) };
  return runner.hostRun;
}

/**
 * Records, at the turn's first command, what every protected path the sandbox mounts over
 * inside the writable dirs is: its nested and top-level host-run paths, their link targets,
 * and the hidden credential stores and server dirs. A read-only mount keeps a path from being
 * renamed (EBUSY) but not its folder (`mv proj x`): the mount moves along inside that command,
 * but the next command's sandbox would find nothing to mount at the old path.
 */
async function watchMounts(
  watch: HostRunWatch,
  mounts: ProtectedMounts,
  writable: readonly string[],
): Promise<void> {
  if (watch.watched) return;
  const paths = [
    ...watch.scan.paths,
    ...mounts.readOnly,
    ...mounts.masks.map((m) => m.path),
  ].filter((p) => isInsideRoots(writable, p) && !writable.includes(p));
  watch.watched = await signatures(new Set(paths));
}

/** The refusal once protected paths moved, for every later command of the turn. */
export function movedRefusal(moved: readonly string[], cwd: string): string {
  const shown = moved.slice(0, 5).map((p) => displayPath(p, cwd));
  const more = moved.length > 5 ? ` (+${moved.length - 5} more)` : "";
  return `Bash is refused for the rest of this turn: ${shown.join(", ")}${more} ` +
    `${moved.length === 1 ? "was" : "were"} moved, replaced or removed since the turn's ` +
    "first command (or a folder holding them was renamed). The sandbox keeps these paths " +
    "(git config and hooks, Claude Code settings, .envrc and other files the host runs " +
    "later, or hidden credential stores) read-only or hidden where they were, and cannot " +
    "follow them elsewhere. Read, Write and Edit still work. The user should check where " +
    "they went (and move them back) before running git or Claude Code there, then follow up " +
    "on the job or start a new one";
}

/** The refusal when the nested host-run paths could not all be found. */
export function scanRefusal(incomplete: string): string {
  return `Bash is refused for this turn: ${incomplete}, so the sandbox cannot find and make ` +
    "read-only every nested .git, .claude, .envrc or other file the host runs later. Start " +
    "the job with a narrower cwd (the project folder itself rather than a folder holding " +
    "many projects), or use Read, Write and Edit";
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
function findPrlimit(): string | undefined {
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

/** How the sandbox's limits are enforced on this machine, in words. */
async function limitsText(): Promise<string> {
  const prlimit = findPrlimit();
  const root = isRoot();
  const memory = prlimit
    ? "memory, file size: rlimits"
    : "memory, file size: not limited (prlimit from util-linux is missing)";
  const processes = !root
    ? (prlimit ? "processes: RLIMIT_NPROC" : "processes: not limited")
    : await canLimitPidsWithCgroup()
    ? "processes: a pids cgroup (running as root)"
    : "processes: not limited (as root RLIMIT_NPROC does not apply and no pids cgroup is " +
      "writable here)";
  return `${processes}; ${memory}; /tmp: a sized tmpfs`;
}

/** A trivial sandboxed command, for `doctor`: proves bubblewrap works here, not just exists. */
export async function probeSandbox(
  mode: SandboxMode,
): Promise<{ ok: boolean; detail: string }> {
  const runner = shellRunner(mode);
  if (runner.kind === "refused") return { ok: false, detail: runner.reason };
  if (runner.kind === "unconfined") {
    return { ok: true, detail: "sandbox is off: Bash runs unconfined (set by the user)" };
  }
  const result = await runShell(runner, {
    command: "echo sandbox-ok",
    cwd: "/",
    writable: [],
    timeoutMs: 10_000,
    signal: new AbortController().signal,
    keepChars: 2000,
  });
  if (result.exitCode === 0 && result.output.includes("sandbox-ok")) {
    return { ok: true, detail: `${runner.bwrap} runs commands (exit 0); ${await limitsText()}` };
  }
  return {
    ok: false,
    detail:
      `${runner.bwrap} cannot start a sandbox (exit ${result.exitCode ?? result.signal}): ${
        result.output.trim().slice(0, 300)
      }. Unprivileged user namespaces may be disabled (sysctl kernel.unprivileged_userns_clone ` +
      `or an AppArmor restriction)`,
  };
}
