import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { REPO, tempDir } from "../../tests/support/harness.ts";

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** An executable `claudeBin` that runs the benchmark stand-in. */
export function fakeClaudeBin(): string {
  const path = join(tempDir("od-bench-"), "claude");
  writeFileSync(
    path,
    `#!/bin/sh\nexec deno run -A --quiet '${
      join(REPO, "bench", "support", "fake_claude.ts")
    }' "$@"\n`,
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
