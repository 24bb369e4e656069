/**
 * A child cgroup per sandboxed command, for limits only a cgroup controller can hold:
 * - memory: of all the command's processes together, with shared mappings, memfds and tmpfs
 *   pages counted (RLIMIT_DATA counts none of them), and no swap on top;
 * - processes: RLIMIT_NPROC never applies to uid 0 (kernel/fork.c skips the check for
 *   INIT_USER), so a server running as root needs the pids controller.
 * The child is made below this process's own cgroup, in each controller's hierarchy (cgroup v1)
 * or in the unified one (v2, when the controller is enabled in our cgroup's
 * `cgroup.subtree_control`). Where neither is writable, as for most servers not run as root,
 * there is no cgroup, and the caller falls back to rlimits and says so.
 */
import { readFileSync } from "node:fs";
import { access, mkdir, readdir, readFile, rmdir, writeFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { isInside } from "../path_inside.ts";
import process from "node:process";
import { setTimeout as delay } from "node:timers/promises";

const PREFIX = "ollama-delegate-";

export type Controller = "pids" | "memory";

/** What to limit; a controller is left out when its field is. */
export interface CgroupRequest {
  maxPids?: number;
  maxMemoryBytes?: number;
}

export interface LimitCgroup {
  /** Write a pid into each to move that process (and its future children) into the cgroup. */
  procsFiles: string[];
  /** The limits that hold (a controller can be missing, or not delegated to us). */
  pids: boolean;
  memory: boolean;
  /** Swap is kept at 0 on top of the memory limit (false: swap accounting is off). */
  noSwap: boolean;
  /**
   * How many forks the pids limit refused so far (the kernel's `max` count in `pids.events`);
   * 0 without a pids controller.
   */
  processLimitHits(): Promise<number>;
  /** Kills what is left inside and removes the cgroup. */
  remove(): Promise<void>;
}

/** Our own cgroup's directory in the hierarchy that holds `controller`. */
interface Hierarchy {
  version: 1 | 2;
  dir: string;
}

let hierarchies: Map<Controller, Hierarchy> | undefined;

/** Where each controller can be used below our own cgroup, read once per process. */
function findHierarchies(): Map<Controller, Hierarchy> {
  if (hierarchies) return hierarchies;
  hierarchies = new Map();
  let cgroups: string[][];
  let mounts: string[][];
  try {
    cgroups = readFileSync("/proc/self/cgroup", "utf8").split("\n").map((l) => l.split(":"));
    mounts = readFileSync("/proc/self/mountinfo", "utf8").split("\n").map((l) => l.split(" "));
  } catch {
    return hierarchies;
  }
  // mountinfo: id parent dev root mountpoint options [optional...] - fstype source superoptions
  const parsed = mounts.flatMap((f) => {
    const dash = f.indexOf("-");
    if (dash < 0 || f[3] === undefined || f[4] === undefined) return [];
    return [{ root: f[3], point: f[4], type: f[dash + 1], options: f[dash + 3] ?? "" }];
  });
  const inside = (point: string, root: string, path: string) =>
    isInside(root, path) ? join(point, relative(root, path)) : undefined;
  for (const controller of ["pids", "memory"] as const) {
    const v1 = cgroups.find((p) => p[1]?.split(",").includes(controller));
    if (v1 && v1[2] !== undefined) {
      const mount = parsed.find((m) =>
        m.type === "cgroup" && m.options.split(",").includes(controller)
      );
      const dir = mount && inside(mount.point, mount.root, v1[2]);
      if (dir) hierarchies.set(controller, { version: 1, dir });
      continue;
    }
    const v2 = cgroups.find((p) => p[0] === "0" && p[1] === "");
    const mount = parsed.find((m) => m.type === "cgroup2");
    const dir = v2?.[2] !== undefined && mount && inside(mount.point, mount.root, v2[2]);
    if (!dir) continue;
    try {
      const enabled = readFileSync(join(dir, "cgroup.subtree_control"), "utf8").split(/\s+/);
      if (enabled.includes(controller)) hierarchies.set(controller, { version: 2, dir });
    } catch {
      // No such controller here.
    }
  }
  return hierarchies;
}

/**
 * A number unique to this module instance's cgroups: a process may hold several instances
 * (Deno runs test modules side by side in one process), which share its pid.
 */
const instance = crypto.getRandomValues(new Uint32Array(1))[0]!;
let counter = 0;
const swept = new Set<string>();

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
  if (swept.has(dir)) return;
  swept.add(dir);
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    const m = new RegExp(`^${PREFIX}(\\d+)-\\d+$`).exec(name);
    if (m && Number(m[1]) !== process.pid && !alive(Number(m[1]))) {
      await rmdir(join(dir, name)).catch(() => {});
    }
  }
}

const exists = (path: string) => access(path).then(() => true, () => false);

/** Writes the limits of `controllers` into a new cgroup `dir`; which ones held. */
async function writeLimits(
  dir: string,
  version: 1 | 2,
  controllers: Controller[],
  req: CgroupRequest,
): Promise<{ pids: boolean; memory: boolean; noSwap: boolean }> {
  const held = { pids: false, memory: false, noSwap: false };
  const write = (name: string, value: number) =>
    writeFile(join(dir, name), String(value)).then(() => true, () => false);
  if (controllers.includes("pids") && req.maxPids !== undefined) {
    held.pids = await write("pids.max", req.maxPids);
  }
  const bytes = req.maxMemoryBytes;
  if (controllers.includes("memory") && bytes !== undefined) {
    if (version === 2) {
      held.memory = await write("memory.max", bytes);
      held.noSwap = held.memory && await exists(join(dir, "memory.swap.max")) &&
        await write("memory.swap.max", 0);
    } else {
      // memsw is memory plus swap, so equal to the memory limit means no swap; it exists
      // only with swap accounting on, and must be set after the memory limit.
      held.memory = await write("memory.limit_in_bytes", bytes);
      held.noSwap = held.memory && await exists(join(dir, "memory.memsw.limit_in_bytes")) &&
        await write("memory.memsw.limit_in_bytes", bytes);
    }
  }
  return held;
}

/** Kills what is left in `dir` and removes it; gives up after about a second. */
async function removeDir(dir: string): Promise<void> {
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
    await delay(50);
  }
}

/**
 * Creates a cgroup with the requested limits, as far as this machine lets us; undefined when
 * none of them can be had.
 */
export async function createLimitCgroup(req: CgroupRequest): Promise<LimitCgroup | undefined> {
  const wanted: Controller[] = [];
  if (req.maxPids !== undefined) wanted.push("pids");
  if (req.maxMemoryBytes !== undefined) wanted.push("memory");
  // One directory per hierarchy: v1 mounts each controller on its own (or a few together).
  const byDir = new Map<string, { version: 1 | 2; controllers: Controller[] }>();
  for (const controller of wanted) {
    const h = findHierarchies().get(controller);
    if (!h) continue;
    const entry = byDir.get(h.dir) ?? { version: h.version, controllers: [] };
    entry.controllers.push(controller);
    byDir.set(h.dir, entry);
  }
  const name = `${PREFIX}${process.pid}-${instance}${++counter}`;
  const made: string[] = [];
  const result = { pids: false, memory: false, noSwap: false };
  for (const [parent, { version, controllers }] of byDir) {
    await sweepStale(parent);
    const dir = join(parent, name);
    try {
      await mkdir(dir);
    } catch {
      continue;
    }
    const held = await writeLimits(dir, version, controllers, req);
    if (!held.pids && !held.memory) {
      await rmdir(dir).catch(() => {});
      continue;
    }
    made.push(dir);
    result.pids ||= held.pids;
    result.memory ||= held.memory;
    result.noSwap ||= held.noSwap;
  }
  if (made.length === 0) return undefined;
  return {
    procsFiles: made.map((dir) => join(dir, "cgroup.procs")),
    ...result,
    async processLimitHits() {
      let hits = 0;
      for (const dir of made) {
        const events = await readFile(join(dir, "pids.events"), "utf8").catch(() => "");
        hits += Number(/^max (\d+)$/m.exec(events)?.[1] ?? 0);
      }
      return hits;
    },
    async remove() {
      await Promise.all(made.map(removeDir));
    },
  };
}

/**
 * The command line that starts `command` inside `cgroup`: a shell that moves itself into each
 * of the cgroup's hierarchies, then becomes the command (so it and all it starts are inside
 * before anything runs). Exit code 125 when the move fails.
 */
export function launchInCgroup(
  cgroup: LimitCgroup,
  command: string,
  args: readonly string[],
): { command: string; args: string[] } {
  return {
    command: "/bin/sh",
    args: [
      "-c",
      'n=$0; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n-1)); done; ' +
      'exec "$@"',
      String(cgroup.procsFiles.length),
      ...cgroup.procsFiles,
      command,
      ...args,
    ],
  };
}

/** What a cgroup for a sandboxed command can limit on this machine, for doctor. */
export async function cgroupSupport(): Promise<
  { pids: boolean; memory: boolean; noSwap: boolean }
> {
  const cgroup = await createLimitCgroup({ maxPids: 64, maxMemoryBytes: 64 * 1024 * 1024 });
  await cgroup?.remove();
  return {
    pids: cgroup?.pids ?? false,
    memory: cgroup?.memory ?? false,
    noSwap: cgroup?.noSwap ?? false,
  };
}
