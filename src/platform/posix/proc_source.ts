/**
 * Ways to read the live process table on POSIX systems: /proc on Linux, `ps` elsewhere. The kill
 * algorithm only sees the ProcSource interface, so the `ps` path (used on macOS) can also be
 * exercised on Linux, where procps understands the same options.
 */

import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import {
  parseProcStat,
  parsePsOutput,
  type ProcRecord,
  type ProcTable,
  toTable,
} from "./proc_parse.ts";

export interface ProcSource {
  readonly name: "procfs" | "ps";
  /** Every visible process. */
  snapshot(): Promise<ProcTable>;
  /** At least the given pids that still exist (may return more); cheaper than snapshot on Linux. */
  probe(pids: readonly number[]): Promise<ProcTable>;
}

function readStat(pid: number): ProcRecord | null {
  try {
    // Synchronous on purpose: a stat file is tiny and served from memory, and a quick, tight
    // pass over /proc keeps the snapshot as close to one instant as JS allows.
    return parseProcStat(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    // ENOENT/ESRCH: the process exited between readdir and read; that is just "not there".
    return null;
  }
}

export const procfsSource: ProcSource = {
  name: "procfs",
  snapshot() {
    const records: ProcRecord[] = [];
    for (const entry of readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      const rec = readStat(Number(entry));
      if (rec !== null) records.push(rec);
    }
    return Promise.resolve(toTable(records));
  },
  probe(pids) {
    const records: ProcRecord[] = [];
    for (const pid of pids) {
      const rec = readStat(pid);
      // /proc/<tid>/stat also resolves thread ids of other processes; a thread reports its own
      // tid as pid, so requiring pid equality is enough to ignore that case.
      if (rec !== null && rec.pid === pid) records.push(rec);
    }
    return Promise.resolve(toTable(records));
  },
};

/** True when /proc looks like a Linux procfs (it may be unmounted in minimal containers). */
export function hasProcfs(): boolean {
  try {
    return parseProcStat(readFileSync("/proc/self/stat", "utf8")) !== null;
  } catch {
    return false;
  }
}

const PS_ARGS = ["-A", "-o", "pid=,ppid=,stat=,lstart="];
// A fixed, minimal environment: LC_ALL=C keeps lstart in one format (a locale change between
// two ps runs would otherwise make every process look like a reused pid), and a fixed PATH
// avoids picking up some other `ps` from the server's inherited environment.
const PS_ENV = { LC_ALL: "C", TZ: "UTC", PATH: "/bin:/usr/bin:/usr/sbin:/sbin" };

function runPs(): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      "ps",
      PS_ARGS,
      { env: PS_ENV, maxBuffer: 64 * 1024 * 1024, timeout: 10_000 },
      (err, stdout) => {
        if (err !== null) reject(new Error(`ps failed: ${err.message}`, { cause: err }));
        else resolve(stdout);
      },
    );
  });
}

export const psSource: ProcSource = {
  name: "ps",
  async snapshot() {
    return toTable(parsePsOutput(await runPs()));
  },
  // `ps -p` exits non-zero when none of the pids exist and its pid-list syntax varies between
  // implementations; one full listing per poll is simpler and still cheap at 50 ms intervals.
  probe() {
    return this.snapshot();
  },
};
