/**
 * The whole test suite of two revisions, side by side on this machine (issue 33, item 6: the
 * suite must not get slower than main before that issue's work, fce917c, with the new tests
 * included). Each revision is cloned into a temporary folder, with this checkout's test tools
 * (.tools: the pinned Claude Code) linked in, so that nothing is downloaded and both run the
 * same CLI. A warm-up run of one small file in each clone fills Deno's caches; then the pairs
 * run one after the other, base first in odd pairs and head first in even ones (ABBA), since the
 * machine's speed drifts over minutes (the same code took 528 s and 613 s on different days).
 * The first run on each side type-checks the whole suite from nothing, as on a clean clone
 * (12 s here: the clone's files are new to Deno's check cache); later runs find it cached.
 * Each run is `deno run -A scripts/test.ts` in its clone, as `deno task test` runs it after
 * installing the tools.
 *
 * For each run it prints the wall time, the machine's busy CPU time over the run (Linux
 * /proc/stat: every process, the kernel's own work included, so run it on an otherwise idle
 * machine), the cores that kept busy on average, the runner's pool time and the tests that
 * passed and failed in each pass; then each side's mean and head's time over base's per pair.
 * A side whose tests failed is named: a failing test can end early or hang to its timeout, so
 * its time is not the suite's.
 *
 * Run: deno run -A bench/suite_bench.ts [--base REV] [--head REV] [--pairs N] [-- runner args]
 *   --base REV   the revision to compare against (default fce917c, main before issue 33)
 *   --head REV   the revision measured (default HEAD: what is committed, not the work tree)
 *   --pairs N    pairs of runs (default 3)
 *   runner args  passed to both runners, e.g. `-- --pass deno` or `-- tests/e2e/`
 * Quick mode (OD_BENCH_QUICK=1) compares HEAD with itself on one small unit file.
 */
import "./support/help.ts";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { parseArgs } from "node:util";
import { REPO, tempDir } from "../tests/support/harness.ts";
import { PACKED_VAR } from "../tests/support/npm_package.ts";
import { QUICK } from "./support/common.ts";

/** main before issue 33's work: the baseline its item 6 names. */
const BASELINE = "fce917c";
/** The small file quick mode runs: a unit test with few imports, in every revision since. */
const QUICK_FILE = "tests/platform/sleep_test.ts";

function parsed() {
  try {
    return parseArgs({
      options: {
        base: { type: "string", default: QUICK ? "HEAD" : BASELINE },
        head: { type: "string", default: "HEAD" },
        pairs: { type: "string", default: QUICK ? "1" : "3" },
      },
      allowPositionals: true,
    });
  } catch (e) {
    console.error(`suite_bench: ${(e as Error).message} (see --help)`);
    process.exit(2);
  }
}
const { values, positionals } = parsed();
const pairs = Number(values.pairs);
if (!Number.isInteger(pairs) || pairs < 1) {
  console.error(`suite_bench: --pairs must be a whole number of at least 1, not "${values.pairs}"`);
  process.exit(2);
}
const runnerArgs = positionals.length > 0
  ? positionals
  : QUICK
  ? ["--pass", "deno", "--", QUICK_FILE]
  : [];

/** The commit `rev` names in this checkout, or an exit with what went wrong. */
function commitOf(rev: string): string {
  try {
    return execFileSync("git", ["rev-parse", "--verify", "--quiet", `${rev}^{commit}`], {
      cwd: REPO,
      encoding: "utf8",
    }).trim();
  } catch {
    console.error(`suite_bench: "${rev}" is not a commit of ${REPO}`);
    process.exit(2);
  }
}

/** This checkout's test tools (the pinned Claude Code), which both clones use. */
const TOOLS = join(REPO, ".tools");
if (!existsSync(TOOLS)) {
  console.error(
    "suite_bench: this checkout has no test tools yet: run `deno run -A " +
      "scripts/ensure_test_tools.ts` (or `deno task test` once) first",
  );
  process.exit(2);
}

/** A clone of this checkout at `commit`, with this checkout's test tools linked in. */
function cloneAt(commit: string, name: string): string {
  const dir = join(tempDir("od-bench-suite-"), name);
  execFileSync("git", ["clone", "--quiet", "--no-checkout", REPO, dir]);
  execFileSync("git", ["checkout", "--quiet", "--detach", commit], { cwd: dir });
  symlinkSync(TOOLS, join(dir, ".tools"));
  return dir;
}

/** Busy CPU seconds of the whole machine since boot (Linux), else undefined. */
function machineCpu(): number | undefined {
  if (process.platform !== "linux") return undefined;
  // cpu  user nice system idle iowait irq softirq steal ... (in USER_HZ, 100 a second)
  const fields = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/)
    .slice(1).map(Number);
  const [user, nice, system, _idle, _iowait, irq, softirq] = fields;
  return (user! + nice! + system! + irq! + softirq!) / 100;
}

interface PassCounts {
  pass: string;
  ok: boolean;
  files: number;
  passed: number;
  failed: number;
}

interface Run {
  side: "base" | "head";
  pair: number;
  seconds: number;
  cpu?: number;
  cores?: number;
  poolSeconds?: number;
  passes: PassCounts[];
  exitCode: number;
  log: string;
}

/** The runner's summary lines: `test: deno pass: ok: 290 files, 1718 passed, 0 failed, ...`. */
function summaryOf(output: string): { passes: PassCounts[]; poolSeconds?: number } {
  const passes = [
    ...output.matchAll(
      /^test: (\w+) pass: (ok|FAILED): (\d+) files, (\d+) passed, (\d+) failed/gm,
    ),
  ].map((m) => ({
    pass: m[1]!,
    ok: m[2] === "ok",
    files: Number(m[3]),
    passed: Number(m[4]),
    failed: Number(m[5]),
  }));
  const pool = /^test: all done in ([\d.]+) s/m.exec(output);
  return { passes, poolSeconds: pool ? Number(pool[1]) : undefined };
}

/** The environment of a run: this one's, without what would point it at this checkout. */
function runEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined) env[key] = value;
  }
  // Set by an outer test run for its own jobs: the server under test and its npm package.
  delete env.OLLAMA_DELEGATE_TEST_SERVER;
  delete env[PACKED_VAR];
  return env;
}

/** The runner in `dir` with `args`: its exit code and everything it printed. */
function runner(dir: string, args: string[]): { output: string; exitCode: number } {
  const child = spawnSync(Deno.execPath(), ["run", "-A", "scripts/test.ts", ...args], {
    cwd: dir,
    env: runEnv(),
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    maxBuffer: 256 * 1024 * 1024,
  });
  return { output: `${child.stdout ?? ""}${child.stderr ?? ""}`, exitCode: child.status ?? 1 };
}

function runSuite(side: "base" | "head", pair: number, logDir: string): Run {
  const before = machineCpu();
  const t0 = performance.now();
  const { output, exitCode } = runner(dirs[side], runnerArgs);
  const seconds = (performance.now() - t0) / 1000;
  const after = machineCpu();
  const log = join(logDir, `pair${pair}-${side}.log`);
  writeFileSync(log, output);
  const cpu = before !== undefined && after !== undefined ? after - before : undefined;
  return {
    side,
    pair,
    seconds,
    cpu,
    cores: cpu === undefined ? undefined : cpu / seconds,
    ...summaryOf(output),
    exitCode,
    log,
  };
}

const base = commitOf(values.base!);
const head = commitOf(values.head!);
const short = (c: string) => c.slice(0, 9);
console.log(
  `suite: base ${values.base} (${short(base)}) against head ${values.head} (${short(head)}), ` +
    `${pairs} pair(s)${runnerArgs.length ? `, runner args: ${runnerArgs.join(" ")}` : ""}`,
);
// The same commit on both sides (an A/A run, which shows the machine's own spread) shares a clone.
const baseDir = cloneAt(base, "base");
const dirs = { base: baseDir, head: head === base ? baseDir : cloneAt(head, "head") };
// Kept when a run failed, for a look; removed otherwise.
const logDir = mkdtempSync(join(tmpdir(), "od-suite-bench-logs-"));

// Warm-up: Deno's module cache and the runner's own type check, for both.
// Quick mode checks only that the bench runs: its first run warms what the second uses.
for (const side of QUICK ? [] : (["base", "head"] as const)) {
  const warm = runner(dirs[side], ["--pass", "deno", "--", QUICK_FILE]).output;
  if (!/^test: deno pass: ok/m.test(warm)) {
    console.error(`suite_bench: the warm-up run of ${side} did not pass:\n${warm}`);
    process.exit(1);
  }
}

const runs: Run[] = [];
const fmt = (n: number | undefined, digits = 1) => n === undefined ? "n/a" : n.toFixed(digits);
console.log("pair side   wall s    CPU-s  cores  pool s  tests (passed/failed per pass)");
for (let pair = 1; pair <= pairs; pair++) {
  const order = pair % 2 === 1 ? (["base", "head"] as const) : (["head", "base"] as const);
  for (const side of order) {
    const run = runSuite(side, pair, logDir);
    runs.push(run);
    const tests = run.passes.map((p) => `${p.pass} ${p.passed}/${p.failed}`).join(", ") ||
      `no summary (exit ${run.exitCode}; log ${run.log})`;
    console.log(
      `${String(pair).padStart(4)} ${side.padEnd(4)} ${fmt(run.seconds).padStart(8)} ` +
        `${fmt(run.cpu).padStart(8)} ${fmt(run.cores, 2).padStart(6)} ` +
        `${fmt(run.poolSeconds).padStart(7)}  ${tests}`,
    );
  }
}

/** A run that did not pass: the runner's exit code, or a pass it reported as failed. */
const failedRun = (r: Run) => r.exitCode !== 0 || r.passes.some((p) => !p.ok);
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
for (const side of ["base", "head"] as const) {
  const mine = runs.filter((r) => r.side === side);
  const cpus = mine.flatMap((r) => r.cpu === undefined ? [] : [r.cpu]);
  const failed = mine.filter(failedRun);
  console.log(
    `${side}: mean ${fmt(mean(mine.map((r) => r.seconds)))} s, ` +
      `${cpus.length ? `${fmt(mean(cpus))} CPU-s` : "CPU n/a"}` +
      (failed.length
        ? `; ${failed.length} of ${mine.length} run(s) failed (logs: ${
          failed.map((r) => r.log).join(", ")
        })`
        : ""),
  );
}
if (!runs.some(failedRun)) rmSync(logDir, { recursive: true, force: true });
const ratios = Array.from({ length: pairs }, (_, i) => {
  const [b, h] = (["base", "head"] as const).map((s) =>
    runs.find((r) => r.pair === i + 1 && r.side === s)!
  );
  return h!.seconds / b!.seconds;
});
console.log(
  `head over base, wall time per pair: ${ratios.map((r) => r.toFixed(3)).join(", ")}; ` +
    `mean ${mean(ratios).toFixed(3)}`,
);
