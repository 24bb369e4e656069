import { copyFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { REPO, tempDir } from "../../tests/support/harness.ts";

/**
 * Quick mode (OD_BENCH_QUICK=1): each bench runs its smallest case, once, so that the test
 * suite can run every bench as checked in (tests/e2e/bench_quick_test.ts) and none rots
 * unnoticed. Its figures mean nothing; a bench's goal is not checked in quick mode.
 */
export const QUICK = process.env.OD_BENCH_QUICK === "1";

/** The bench's positional argument `index` (0 is the first), else `full`, or `quick` in quick mode. */
export function benchArg(index: number, full: string, quick: string): string {
  return process.argv[2 + index] ?? (QUICK ? quick : full);
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * An executable `claudeBin` that runs the benchmark stand-in. On Linux the delegate runs in a
 * jail that holds the folder of its CLI's real file and not the repository, so the stand-in's
 * source is copied into that folder beside the script.
 */
export function fakeClaudeBin(): string {
  const dir = tempDir("od-bench-");
  copyFileSync(join(REPO, "bench", "support", "fake_claude.ts"), join(dir, "fake_claude.ts"));
  const path = join(dir, "claude");
  writeFileSync(
    path,
    `#!/bin/sh\nexec deno run -A --quiet "$(dirname "$0")/fake_claude.ts" "$@"\n`,
    { mode: 0o755 },
  );
  return path;
}

/** Resident memory of a process in MiB (Linux /proc). */
export function rssMiB(pid: number): { rss: number; peak: number } {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  const kb = (key: string) =>
    Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? 0);
  return { rss: kb("VmRSS") / 1024, peak: kb("VmHWM") / 1024 };
}
