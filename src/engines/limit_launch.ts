/**
 * Starting a confined program under the sandbox limits (sandbox_limits.ts), the same way for
 * the native sandbox's commands, the claude engine's jail and its verify commands: a cgroup
 * made for it where this machine allows one (platform/posix/limit_cgroup.ts), which the
 * launching shell joins before bubblewrap starts, and the rlimits that fit what the cgroup
 * holds, set by prlimit from util-linux inside the sandbox.
 */
import { statSync } from "node:fs";
import {
  createLimitCgroup,
  launchInCgroup,
  type LimitCgroup,
} from "../platform/posix/limit_cgroup.ts";
import type { CgroupPlan } from "./sandbox_limits.ts";

/** prlimit on the host's /usr or /bin, which every sandbox mounts at the same place. */
export function findPrlimit(): string | undefined {
  return ["/usr/bin/prlimit", "/bin/prlimit"].find((p) => {
    try {
      return statSync(p).isFile();
    } catch {
      return false;
    }
  });
}

/** What holds one confined program's limits, once its cgroup is made (or could not be). */
export interface LimitedLaunch {
  /** A memory cgroup holds the program's processes together (no RLIMIT_AS needed). */
  memoryCgroup: boolean;
  /** A pids cgroup holds their number (RLIMIT_NPROC does not bind uid 0). */
  pidsCgroup: boolean;
  /**
   * The argv prefix that sets the rlimits for what follows it (`prlimit --nproc=... --`),
   * run inside the sandbox; empty when the host has no prlimit.
   */
  rlimitPrefix: string[];
  /** The command line that starts `command args` (bubblewrap) inside the cgroup, if any. */
  launch(command: string, args: readonly string[]): { command: string; args: string[] };
  /** Forks the pids cgroup refused so far (0 without one): said in the reply when not 0. */
  processLimitHits(): Promise<number>;
  /** Kills what is left in the cgroup and removes it. */
  release(): Promise<void>;
}

/**
 * Makes the cgroup of `plan` where one can be made, and says how the rest is held:
 * `rlimits(memoryCgroup)` gives prlimit's options (sandbox_limits.ts `rlimitOptions`).
 */
export async function limitedLaunch(
  plan: CgroupPlan,
  rlimits: (memoryCgroup: boolean) => string[],
): Promise<LimitedLaunch> {
  const cgroup: LimitCgroup | undefined = await createLimitCgroup(plan);
  const memoryCgroup = cgroup?.memory ?? false;
  const prlimit = findPrlimit();
  return {
    memoryCgroup,
    pidsCgroup: cgroup?.pids ?? false,
    rlimitPrefix: prlimit ? [prlimit, ...rlimits(memoryCgroup), "--"] : [],
    launch: (command, args) =>
      cgroup ? launchInCgroup(cgroup, command, args) : { command, args: [...args] },
    processLimitHits: async () => await cgroup?.processLimitHits() ?? 0,
    release: async () => {
      await cgroup?.remove();
    },
  };
}
