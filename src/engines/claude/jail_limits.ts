/**
 * The sandbox limits (settings `sandboxMaxProcesses`, `sandboxMaxMemoryMb`, `sandboxMaxFileMb`,
 * the native sandbox's: ../sandbox_limits.ts) for a claude delegate in its jail (jail.ts).
 *
 * Claude Code itself runs in the jail, and the delegate's commands below it, in Claude Code's
 * own sandbox, which the server does not start. Claude Code needs room the limits would not
 * leave it (the native build of 2.1.332, a Bun program, in bench/claude_process_bench.ts:
 * 220-225 MiB resident at the 25th command of a turn whose commands printed 480 KB; 5.3 GiB of
 * writable private mappings, which RLIMIT_DATA counts; 9 threads; and its helpers for a
 * sandboxed command, `apply-seccomp` with 1.3 GB of them, start before the command does). So
 * the limits go in two places:
 * - the whole jail gets one cgroup where one can be made: memory at the limit plus
 *   CLAUDE_MEMORY_RESERVE_MB for Claude Code, processes at the limit plus its threads and its
 *   sandbox's helpers (claudeProcessReserve);
 * - every command gets a native command's rlimits at the user's values: Claude Code runs
 *   commands with the shell `CLAUDE_CODE_SHELL` names (a documented setting), here a two-line
 *   script mounted read-only in the jail that becomes the real shell through prlimit. It runs
 *   inside Claude Code's sandbox, after its helpers, so everything a command starts has the
 *   limits, and no process can raise them again (they are hard limits, and the jail has no
 *   capabilities).
 */
import { createHash } from "node:crypto";
import { accessSync, constants, mkdtempSync, readFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { basename, join } from "node:path";
import { writeFileAtomicSync } from "../../platform/atomic_write.ts";
import { cgroupSupport } from "../../platform/posix/limit_cgroup.ts";
import { isRoot } from "../../platform/runtime.ts";
import { findPrlimit, type LimitedLaunch, limitedLaunch } from "../limit_launch.ts";
import {
  addressSpaceMb,
  type CgroupPlan,
  limitPlan,
  type SandboxLimits,
} from "../sandbox_limits.ts";
import { isSystem } from "./jail.ts";

const MIB = 1024 * 1024;

/**
 * Memory the jail's cgroup holds for Claude Code on top of `sandboxMaxMemoryMb`: about four
 * times what it was measured to use, since its heap grows with the conversation.
 */
export const CLAUDE_MEMORY_RESERVE_MB = 1024;

/**
 * Processes (a pids cgroup counts threads) the jail's cgroup holds for Claude Code on top of
 * `sandboxMaxProcesses`: its own threads (8 on 2 cores: a pool and a GC helper per core), the
 * helpers its sandbox starts for each command (two bubblewrap, three shells, two socat and
 * `apply-seccomp`: 12), the bridge to its endpoint. Room for several commands at once.
 */
export function claudeProcessReserve(cores: number = availableParallelism()): number {
  return 64 + 2 * cores;
}

/** The cgroup of a whole jail: the user's limits plus Claude Code's own room. */
export function jailCgroupPlan(limits: SandboxLimits, cores?: number): CgroupPlan {
  return {
    maxPids: limits.maxProcesses + claudeProcessReserve(cores),
    maxMemoryBytes: (limits.maxMemoryMb + CLAUDE_MEMORY_RESERVE_MB) * MIB,
  };
}

/** Where the limited shell is inside the jail; its name must hold "bash" or "zsh". */
const SHELL_DIR_INSIDE = "/run/ollama-delegate";

/**
 * A folder at the head of Claude Code's own PATH in the jail, which the limited shell takes off
 * again, so that no command of the delegate's finds it. It holds `npm` (npmScript).
 */
export const CLAUDE_ONLY_BIN = `${SHELL_DIR_INSIDE}/bin`;

/**
 * Claude Code's `npm` (CLAUDE_ONLY_BIN). At every start, Claude Code 2.1.332's sandbox runs
 * `npm root -g` (through /bin/sh, its own PATH) to look for the Java proxy agent of
 * `@anthropic-ai/sandbox-runtime` (a `-javaagent` that points JVMs in the sandbox at its
 * network proxy), which its native build does not ship: Node and npm starting, 0.2 CPU-s and
 * about 0.2 s before its sandbox, and so the first command, is ready. Here that question gets
 * "no global folder" at once: Claude Code then looks in its fixed places only
 * (/usr/lib/node_modules, /usr/local/lib/node_modules, ~/.npm/lib), and the delegate's network
 * allows no domain the agent could reach anyway. Anything else goes to the user's npm.
 */
export function npmScript(): string {
  return "#!/bin/sh\n" +
    'if [ "$#" -eq 2 ] && [ "$1" = root ] && [ "$2" = -g ]; then exit 1; fi\n' +
    `PATH=\${PATH#${CLAUDE_ONLY_BIN}:}\n` +
    'exec npm "$@"\n';
}

/**
 * The shell Claude Code would pick in the jail, as it picks one: `SHELL` when it is bash or
 * zsh, else bash, else zsh, from /bin and /usr/bin. Only the system's are in the jail.
 */
export function jailShell(env: Record<string, string | undefined>): string | undefined {
  const candidates = [env.SHELL, "/bin/bash", "/usr/bin/bash", "/bin/zsh", "/usr/bin/zsh"];
  return candidates.find((path) => {
    if (!path || !/^(bash|zsh)$/.test(basename(path)) || !isSystem(path)) return false;
    try {
      accessSync(path, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** `word` quoted for sh: inside single quotes, where nothing is special but the quote. */
function quoted(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * The script that becomes `shell` with the rlimits `prefix` sets (`prlimit ... --`). It first
 * makes itself, and so every command, the OOM killer's first choice (raising one's own
 * `oom_score_adj` needs no privilege): when the commands together fill the jail's memory
 * cgroup, the kernel kills one of them, not Claude Code, which may be the largest process.
 */
export function limitedShellScript(prefix: readonly string[], shell: string): string {
  return "#!/bin/sh\n{ echo 1000 > /proc/self/oom_score_adj; } 2>/dev/null\n" +
    // Claude Code's own folder off the PATH: commands find the user's tools, as on the host.
    `PATH=\${PATH#${CLAUDE_ONLY_BIN}:}\n` +
    `exec ${[...prefix, shell].map(quoted).join(" ")} "$@"\n`;
}

let privateDir: string | undefined;

/**
 * Writes the limited shell, and beside it Claude Code's own `bin` folder (npmScript), under
 * `dir` (the state dir's `.sandbox/`, which no delegate sees), in a folder named after their
 * content, unless they are there already; gives their paths. Checked at every turn: a
 * long-running server's files may have been cleaned away.
 */
function writeShell(
  script: string,
  shell: string,
  dir: string | undefined,
): { shell: string; bin: string } {
  const npm = npmScript();
  const hash = createHash("sha256").update(script).update(npm).digest("hex").slice(0, 16);
  const base = dir ?? (privateDir ??= mkdtempSync(join(tmpdir(), "ollama-delegate-shell-")));
  const path = join(base, "shell", hash, basename(shell));
  const bin = join(base, "shell", hash, "bin");
  writeIfChanged(path, script);
  writeIfChanged(join(bin, "npm"), npm);
  return { shell: path, bin };
}

function writeIfChanged(path: string, script: string): void {
  let current: string | undefined;
  try {
    current = readFileSync(path, "utf8");
  } catch {
    // Not written yet.
  }
  if (current !== script) writeFileAtomicSync(path, script, 0o755);
}

/** How one turn's jail holds the limits. */
export interface JailLimits {
  /**
   * The jail's `shell` (jail.ts): absent when the host has no prlimit or no bash or zsh. With
   * it, `bin`: the folder mounted at CLAUDE_ONLY_BIN, which the shell takes off the PATH.
   */
  shell?: { source: string; path: string; bin: { source: string; path: string } };
  /** A memory cgroup holds the jail (else each command's RLIMIT_AS does). */
  memoryCgroup: boolean;
  /** A pids cgroup holds the jail. */
  pidsCgroup: boolean;
  /** The command line that starts bubblewrap inside the jail's cgroup, if one was made. */
  launch: LimitedLaunch["launch"];
  /** Forks the jail's pids cgroup refused during the turn (0 without one). */
  processLimitHits: LimitedLaunch["processLimitHits"];
  /** Kills what is left in the cgroup and removes it: after the turn's processes are gone. */
  release(): Promise<void>;
}

/**
 * Makes the jail's cgroup and its commands' shell for one turn. Throws (with the cgroup
 * removed) when the shell cannot be written: the turn must not run without its limits.
 */
export async function jailLimits(
  limits: SandboxLimits,
  env: Record<string, string | undefined>,
  /** Where the shell is written (the state dir's `.sandbox/`); else a private temporary folder. */
  dir?: string,
): Promise<JailLimits> {
  const limited = await limitedLaunch(jailCgroupPlan(limits), limitPlan(limits).rlimits);
  const shell = jailShell(env);
  let source: { shell: string; bin: string } | undefined;
  if (shell && limited.rlimitPrefix.length > 0) {
    try {
      source = writeShell(limitedShellScript(limited.rlimitPrefix, shell), shell, dir);
    } catch (e) {
      await limited.release();
      throw new Error(
        `Cannot start Claude Code: the shell that holds its commands to the sandbox limits ` +
          `could not be written (${(e as Error).message}). Check that the state dir is ` +
          "writable",
        { cause: e },
      );
    }
  }
  return {
    ...(source && shell
      ? {
        shell: {
          source: source.shell,
          path: `${SHELL_DIR_INSIDE}/${basename(shell)}`,
          bin: { source: source.bin, path: CLAUDE_ONLY_BIN },
        },
      }
      : {}),
    memoryCgroup: limited.memoryCgroup,
    pidsCgroup: limited.pidsCgroup,
    launch: limited.launch,
    processLimitHits: limited.processLimitHits,
    release: limited.release,
  };
}

/**
 * The turn's warning when forks met the jail's pids cgroup: which limit, that Claude Code shares
 * it (and so may have stopped: a thread it could not start ends it with SIGABRT, exit 134), and
 * how to raise it. A user whose tests fork a lot learns the sandbox stopped them, not a bug.
 */
export function processLimitWarning(
  limits: SandboxLimits,
  hits: number,
  exitCode?: number | null,
): string {
  const plan = jailCgroupPlan(limits);
  const stopped = exitCode === 134
    ? "; Claude Code, which shares it, could not start a thread then and stopped (exit 134)"
    : "";
  return `processes: the turn's commands reached the jail's process limit ` +
    `${hits === 1 ? "once" : `${hits} times`} (${plan.maxPids}: sandboxMaxProcesses ` +
    `${limits.maxProcesses} + ${plan.maxPids - limits.maxProcesses} for Claude Code), so some ` +
    `of their forks failed${stopped}; ollama-delegate config --sandbox-max-processes <n> ` +
    "raises it";
}

/** How a claude delegate is held to `limits` on this machine, in words (for `doctor`). */
export async function jailLimitsText(limits: SandboxLimits): Promise<string> {
  const cgroup = await cgroupSupport();
  const prlimit = findPrlimit() !== undefined;
  const plan = jailCgroupPlan(limits);
  const mb = `${limits.maxMemoryMb} MiB`;
  const memory = cgroup.memory
    ? `memory: a cgroup of ${plan.maxMemoryBytes / MIB} MiB for Claude Code and its commands ` +
      `together (${mb} + ${CLAUDE_MEMORY_RESERVE_MB} for Claude Code` +
      (cgroup.noSwap ? ", no swap)" : "; swap not limited: swap accounting is off)") +
      (prlimit ? `, and each command's heap ${mb} (RLIMIT_DATA)` : "")
    : prlimit
    ? `memory: per command process only, no memory cgroup can be made here (heap ${mb} by ` +
      `RLIMIT_DATA, address space ${addressSpaceMb(limits)} MiB by RLIMIT_AS)`
    : "memory: not limited (no memory cgroup can be made here, and prlimit from util-linux " +
      "is missing)";
  const processes = cgroup.pids
    ? `processes: a pids cgroup of ${plan.maxPids} for Claude Code and its commands together ` +
      `(${limits.maxProcesses} + ${plan.maxPids - limits.maxProcesses} for Claude Code)` +
      (prlimit && !isRoot() ? `, and ${limits.maxProcesses} per command (RLIMIT_NPROC)` : "")
    : !isRoot() && prlimit
    ? `processes: ${limits.maxProcesses} per command (RLIMIT_NPROC)`
    : isRoot()
    ? "processes: not limited (as root RLIMIT_NPROC does not apply and no pids cgroup is " +
      "writable here)"
    : "processes: not limited (no pids cgroup, no prlimit)";
  const file = prlimit
    ? `file size: ${limits.maxFileMb} MiB per file (RLIMIT_FSIZE)`
    : "file size: not limited (no prlimit)";
  return `${processes}; ${memory}; ${file}; /tmp and $HOME ${limits.tmpMb} MiB each`;
}
