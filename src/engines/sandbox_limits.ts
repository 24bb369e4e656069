/**
 * What one bubblewrap-sandboxed command may use, turned into what enforces it: bubblewrap
 * mounts (every writable tmpfs sized, the root and /dev read-only), a cgroup plan (memory for
 * the command's processes together, and processes), and the rlimits prlimit sets inside. Both
 * engines' commands are held to these settings (the claude engine's jail adds Claude Code's
 * own room: claude/jail_limits.ts). Pure: whoever runs bubblewrap creates the cgroup
 * (limit_launch.ts) and then asks for the rlimits that fit what it got.
 */
import { fieldOf } from "../settings/fields.ts";
import type { Settings } from "../settings/types.ts";

/** Resource limits of one sandboxed command (settings `sandboxMax*`, `sandboxTmpMb`). */
export interface SandboxLimits {
  /** Processes at once: a pids cgroup where one can be made, and RLIMIT_NPROC. */
  maxProcesses: number;
  /**
   * Memory, MiB: of the command's processes together (memory cgroup, no swap) where one can be
   * made; each process's heap (RLIMIT_DATA) in any case.
   */
  maxMemoryMb: number;
  /** Largest file a process may write, MiB (RLIMIT_FSIZE; the writer gets SIGXFSZ). */
  maxFileMb: number;
  /** Size of the private /tmp, MiB. */
  tmpMb: number;
}

export const DEFAULT_LIMITS: SandboxLimits = {
  maxProcesses: fieldOf("sandboxMaxProcesses").default,
  maxMemoryMb: fieldOf("sandboxMaxMemoryMb").default,
  maxFileMb: fieldOf("sandboxMaxFileMb").default,
  tmpMb: fieldOf("sandboxTmpMb").default,
};

/** The limits the user's settings give. */
export function limitsOf(s: Settings): SandboxLimits {
  return {
    maxProcesses: s.sandboxMaxProcesses,
    maxMemoryMb: s.sandboxMaxMemoryMb,
    maxFileMb: s.sandboxMaxFileMb,
    tmpMb: s.sandboxTmpMb,
  };
}

const MIB = 1024 * 1024;

/** /dev/shm's size: Docker's default, or /tmp's when that is smaller. */
const SHM_MB = 64;

/**
 * Address space a process may reserve beyond the memory limit, when no memory cgroup can be
 * made and RLIMIT_AS is the only cap on shared mappings. Runtimes reserve address space they
 * never use: Deno 2.9 reserves 32 GiB for its garbage-collected heap, aligned to its size, and
 * when the kernel's first placement is not aligned it reserves twice that and trims; under a
 * cap of 42 GiB about 1 start in 9 aborted ("Oilpan: CagedHeap reservation"), at 72 GiB none
 * in 100. Node 20's WebAssembly.Memory fails under 4 GiB. A cap at the memory limit itself
 * would break both, so the fallback keeps them working and bounds one process's mappings at
 * this much more than the limit.
 */
export const ADDRESS_SPACE_RESERVE_MB = 70 * 1024;

export function shmMb(limits: SandboxLimits): number {
  return Math.min(SHM_MB, limits.tmpMb);
}

/**
 * bubblewrap's arguments for the writable tmpfs: /dev/shm and /tmp, each sized (a tmpfs
 * without `--size` may fill half the host's memory). They follow `--dev /dev`, and come before
 * anything mounted under /tmp.
 */
export function tmpfsArgs(limits: SandboxLimits): string[] {
  return [
    "--size",
    String(shmMb(limits) * MIB),
    "--tmpfs",
    "/dev/shm",
    "--size",
    String(limits.tmpMb * MIB),
    "--tmpfs",
    "/tmp",
  ];
}

/**
 * bubblewrap's last mount arguments: bubblewrap's own tmpfs, the root and /dev, become
 * read-only (bubblewrap cannot size them), so that /tmp, /dev/shm and the job's directories are
 * all a command can write. Non-recursive: the mounts below keep their own flags.
 */
export const SEAL_ARGS: readonly string[] = ["--remount-ro", "/dev", "--remount-ro", "/"];

/** What to ask of a cgroup for one command. */
export interface CgroupPlan {
  maxPids: number;
  /** memory.max (v2) or memory.limit_in_bytes (v1), with no swap on top. */
  maxMemoryBytes: number;
}

export function cgroupPlan(limits: SandboxLimits): CgroupPlan {
  return { maxPids: limits.maxProcesses, maxMemoryBytes: limits.maxMemoryMb * MIB };
}

/**
 * prlimit's options for the command. RLIMIT_DATA turns a runaway heap into a failed allocation
 * rather than a cgroup kill. RLIMIT_DATA does not count shared mappings (a MAP_SHARED region,
 * a memfd, SysV shm), which a memory cgroup does; without one, RLIMIT_AS is their only cap.
 */
export function rlimitOptions(limits: SandboxLimits, memoryCgroup: boolean): string[] {
  const options = [
    `--nproc=${limits.maxProcesses}`,
    `--data=${limits.maxMemoryMb * MIB}`,
    `--fsize=${limits.maxFileMb * MIB}`,
  ];
  if (!memoryCgroup) options.push(`--as=${addressSpaceMb(limits) * MIB}`);
  return options;
}

/** RLIMIT_AS in force when no memory cgroup could be made, MiB. */
export function addressSpaceMb(limits: SandboxLimits): number {
  return limits.maxMemoryMb + ADDRESS_SPACE_RESERVE_MB;
}

/** Everything `limits` asks of one bubblewrap sandbox (see limitPlan). */
export interface LimitPlan {
  /** After `--dev /dev`, before anything mounted under /tmp. */
  tmpfs: string[];
  /** After every other mount. */
  seal: readonly string[];
  /** For createLimitCgroup. */
  cgroup: CgroupPlan;
  /** prlimit's options, once it is known whether a memory cgroup holds the command. */
  rlimits(memoryCgroup: boolean): string[];
}

/** How one sandbox enforces `limits`: its mounts, its cgroup and its rlimits. */
export function limitPlan(limits: SandboxLimits): LimitPlan {
  return {
    tmpfs: tmpfsArgs(limits),
    seal: SEAL_ARGS,
    cgroup: cgroupPlan(limits),
    rlimits: (memoryCgroup) => rlimitOptions(limits, memoryCgroup),
  };
}
