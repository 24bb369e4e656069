/**
 * What hiding secret files costs a sandboxed command: bubblewrap with the native engine's own
 * argv (src/engines/native/sandbox/bwrap_args.ts) and 0 to 2,000 secret files masked (each a
 * mount of an empty file over it), running `true`. The figure behind MAX_SECRET_MASKS
 * (src/engines/bwrap_base.ts) and docs/security.md's "bubblewrap took ...".
 * Run: deno run -A bench/sandbox_masks_bench.ts [runs]
 */
import "./support/help.ts";
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { bwrapArgs } from "../src/engines/native/sandbox/bwrap_args.ts";
import { findBwrap } from "../src/engines/native/sandbox/shell_runner.ts";
import { tempDir } from "../tests/support/harness.ts";
import { benchArg, median, QUICK } from "./support/common.ts";

const runs = Number(benchArg(0, "5", "1"));
const COUNTS = QUICK ? [0, 10] : [0, 100, 500, 1000, 2000];
const bwrap = findBwrap();
if (!bwrap) throw new Error("bubblewrap is not installed");

const project = tempDir("od-bench-masks-");
mkdirSync(join(project, "env"));
for (let i = 0; i < Math.max(...COUNTS); i++) {
  writeFileSync(join(project, "env", `s${i}.env`), "TOKEN=x\n");
}

console.log(`bubblewrap running \`true\` with secret files masked (median of ${runs}):`);
for (const count of COUNTS) {
  const masks = Array.from({ length: count }, (_, i) => ({
    path: join(project, "env", `s${i}.env`),
    kind: "file" as const,
  }));
  const args = bwrapArgs({
    cwd: project,
    writable: [project],
    root: process.getuid?.() === 0,
    mounts: { readOnly: [], placeholders: [], masks, unheld: [] },
  }, "true");
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const run = spawnSync(bwrap, args, { stdio: ["ignore", "ignore", "pipe"] });
    times.push((performance.now() - t0) / 1000);
    if (run.status !== 0) throw new Error(`bwrap failed: ${run.stderr?.toString()}`);
  }
  console.log(`  ${String(count).padStart(5)} masks: ${median(times).toFixed(2)} s`);
}
