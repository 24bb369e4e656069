/**
 * A child cgroup with a `pids.max`, for a process limit the kernel enforces on root too:
 * RLIMIT_NPROC never applies to uid 0 (kernel/fork.c skips the check for INIT_USER), so a
 * server running as root caps a sandboxed command's processes with the pids controller when
 * it can create a cgroup (cgroup v1 `pids` hierarchy, or v2 with `pids` delegated to its own
 * cgroup). Where neither is writable there is no cgroup, and the caller says so.
 */
import { readFileSync } from "node:fs";
import { mkdir, readdir, readFile, rmdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import process from "node:process";

const CGROUP_ROOT = "/sys/fs/cgroup";
const PREFIX = "ollama-delegate-";

export interface PidsCgroup {
  /** Write a pid here to move that process (and its future children) into the cgroup. */
  procsFile: string;
  /** Kills what is left inside and removes the cgroup. */
  remove(): Promise<void>;
}

let base: { dir: string } | undefined;

/** The pids-controller directory of this process's own cgroup, if one is writable. */
function pidsBase(): string | undefined {
  if (base) return base.dir || undefined;
  let dir = "";
  try {
    const lines = readFileSync("/proc/self/cgroup", "utf8").split("\n");
    const v1 = lines.map((l) => l.split(":")).find((p) => p[1]?.split(",").includes("pids"));
    if (v1 && v1[2] !== undefined) {
      dir = join(CGROUP_ROOT, "pids", v1[2]);
    } else {
      const v2 = lines.map((l) => l.split(":")).find((p) => p[0] === "0" && p[1] === "");
      const controllers = readFileSync(join(CGROUP_ROOT, "cgroup.controllers"), "utf8");
      if (v2 && v2[2] !== undefined && controllers.split(/\s+/).includes("pids")) {
        dir = join(CGROUP_ROOT, v2[2]);
      }
    }
  } catch {
    dir = "";
  }
  base = { dir };
  return dir || undefined;
}

let counter = 0;
let swept = false;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Removes empty cgroups left by servers of ours that died without cleaning up. */
async function sweepStale(dir: string): Promise<void> {
  if (swept) return;
  swept = true;
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    const m = new RegExp(`^${PREFIX}(\\d+)-\\d+$`).exec(name);
    if (m && Number(m[1]) !== process.pid && !alive(Number(m[1]))) {
      await rmdir(join(dir, name)).catch(() => {});
    }
  }
}

/** Creates a cgroup limited to `maxPids` processes, or undefined where that is impossible. */
export async function createPidsCgroup(maxPids: number): Promise<PidsCgroup | undefined> {
  const parent = pidsBase();
  if (!parent) return undefined;
  await sweepStale(parent);
  const dir = join(parent, `${PREFIX}${process.pid}-${++counter}`);
  try {
    await mkdir(dir);
  } catch {
    return undefined;
  }
  try {
    await writeFile(join(dir, "pids.max"), String(maxPids));
  } catch {
    await rmdir(dir).catch(() => {});
    return undefined;
  }
  return {
    procsFile: join(dir, "cgroup.procs"),
    async remove() {
      for (let attempt = 0; attempt < 20; attempt++) {
        try {
          await rmdir(dir);
          return;
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === "ENOENT") return;
        }
        const pids = (await readFile(join(dir, "cgroup.procs"), "utf8").catch(() => ""))
          .split("\n").filter((l) => /^\d+$/.test(l)).map(Number);
        for (const pid of pids) {
          try {
            process.kill(pid, "SIGKILL");
          } catch {
            // Already gone.
          }
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    },
  };
}

/** True when this process can create a pids cgroup, for doctor. */
export async function canLimitPidsWithCgroup(): Promise<boolean> {
  const cgroup = await createPidsCgroup(1);
  await cgroup?.remove();
  return cgroup !== undefined;
}
