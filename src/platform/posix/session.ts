/**
 * Members of a POSIX session. A child we start detached leads its own session, and whatever
 * it forks stays in that session until it calls setsid itself. That finds a process the
 * ppid walk cannot: one forked by a parent that was killed a moment later (it is then
 * re-parented to init), which happens when a sandbox is stopped while it is still setting up.
 */
import { readdirSync, readFileSync } from "node:fs";
import { spawnSyncExact } from "./spawn_sync.ts";

/** Field 6 of /proc/<pid>/stat, after the parenthesised command name. */
export function sessionOfStat(line: string): number | null {
  const close = line.lastIndexOf(")");
  if (close === -1) return null;
  const sid = line.slice(close + 1).trim().split(/\s+/)[3];
  return sid !== undefined && /^\d+$/.test(sid) ? Number(sid) : null;
}

export function sessionMembers(sid: number): number[] {
  const out: number[] = [];
  let names: string[] | undefined;
  try {
    names = readdirSync("/proc");
  } catch {
    names = undefined;
  }
  if (names && names.includes("self")) {
    for (const name of names) {
      if (!/^\d+$/.test(name)) continue;
      try {
        if (sessionOfStat(readFileSync(`/proc/${name}/stat`, "utf8")) === sid) {
          out.push(Number(name));
        }
      } catch {
        // Gone meanwhile.
      }
    }
    return out;
  }
  const ps = spawnSyncExact("ps", ["-A", "-o", "pid=,sess="], {
    env: { LC_ALL: "C", PATH: "/bin:/usr/bin" },
    encoding: "utf8",
  });
  for (const line of String(ps.stdout ?? "").split("\n")) {
    const m = /^\s*(\d+)\s+(\d+)\s*$/.exec(line);
    if (m && Number(m[2]) === sid) out.push(Number(m[1]));
  }
  return out;
}
