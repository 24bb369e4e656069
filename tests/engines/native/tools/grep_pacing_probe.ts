/**
 * Runs one Grep over a file of lines that make `^(a+)+$` backtrack, while a 5 ms timer
 * measures how long the event loop goes without a turn. Run by grep_pacing_test.ts in a
 * child with the regex fallback flag, as the server runs: prints a JSON summary.
 * Usage: grep_pacing_probe.ts <dir> <kib> <budget ms> <pattern>
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { grepTool } from "../../../../src/engines/native/tools/grep.ts";

const [dir = ".", kib = "1024", budget = "20000", pattern = "^(a+)+$"] = Deno.args;
const line = `${"a".repeat(28)}!\n`;
await writeFile(join(dir, "slow.txt"), line.repeat(Math.ceil((Number(kib) * 1024) / line.length)));
await writeFile(join(dir, "fast.txt"), "aaaa\n");

let last = performance.now();
let maxGap = 0;
const timer = setInterval(() => {
  const now = performance.now();
  maxGap = Math.max(maxGap, now - last);
  last = now;
}, 5);
const started = performance.now();
const result = await grepTool.run({ pattern, output_mode: "count" }, {
  cwd: dir,
  roots: [dir],
  signal: new AbortController().signal,
  searchBudgetMs: Number(budget),
  fileChanged() {},
  commandRun() {},
});
const ms = performance.now() - started;
// One more tick, so that a stall at the very end of the search is measured too.
await new Promise((resolve) => setTimeout(resolve, 20));
clearInterval(timer);
console.log(JSON.stringify({ maxGap, ms, text: result.text }));
