/**
 * The whole test suite, in two passes, run as one pool of jobs (scripts/test_pool.ts):
 *   1. deno: every test under tests/ on Deno, in three tiers: unit tests (tests/<layer>/), the
 *      in-process tier (tests/in_process/: our server built by the same wiring in this process,
 *      its delegates still real) and the end-to-end tier (tests/e2e/, tests/cli/: the real
 *      program as a process, started as `deno run` with exactly the permissions baked into the
 *      release binaries, scripts/compile.ts).
 *   2. node: installs the npm package (scripts/build_npm.ts: the Node bundle, packed; built
 *      once for the run by a job of its own, which the Deno pass's files that install the
 *      package wait for too: NEEDS_PACKAGE) into a temporary prefix as a user would
 *      (`npm install -g --prefix`), checks `ollama-delegate --version`, smoke-tests the
 *      installed command, then runs the NODE_SMOKE files below against it, with no Deno global
 *      in the program under test.
 * Each file of the process-heavy tiers is a job of its own; small unit files share one, as one
 * module (chunkModule). The jobs of both passes run in one pool, the longest first by
 * tests/durations.json, so the Node pass runs beside the Deno pass instead of after it: twice as
 * many at once as there are cores, or as DENO_JOBS says (SLOTS). The type check `deno test` would
 * do first is one more job; the test jobs run with --no-check.
 *
 * The Node pass is a smoke subset, not the e2e tier again: what differs under Node is the
 * runtime under our code (child processes, stdio, signals, fetch, the regex engine, memory),
 * not the code, which the Deno pass covers whole. The subset still runs each engine, the
 * sandbox, the plugin and the installed command:
 *   - tests/e2e/basic_test.ts: the claude engine, the real Claude Code CLI in its bubblewrap jail,
 *     and the files its command changed as Node's journal finds them (credential-named folders,
 *     names that are not UTF-8);
 *   - tests/e2e/native_test.ts: the native engine, its bubblewrap sandbox, the files a command
 *     changed as Node's journal (through the Python helper) finds them (what a journal on Node's
 *     own watcher would miss too),
 *     backend retries, errors, keys and a cancel mid-stream,
 *     and a pathological Grep pattern (those tests only: NODE_SMOKE_ONLY);
 *   - tests/e2e/hostile_backend_test.ts: Node's fetch against a flooding backend (memory bounded,
 *     status prompt), an endless error body hung up on at each retry, broken replies and a
 *     cancel mid-flood (NODE_SMOKE_ONLY);
 *   - tests/e2e/lifecycle_test.ts: the stdio wiring: cancel, a killed server, stdin closed;
 *   - tests/e2e/plugin_test.ts: the plugin installed, its server started through npx;
 *   - tests/cli/cli_wiring_test.ts, tests/cli/serve_terminal_test.ts: the installed command's
 *     jobs, stats and serve, through a pipe and on a terminal.
 * The in-process tier never runs in the Node pass: it has no program under test to swap.
 * plugin_test installs and runs the package under Node in either pass, so when both passes run
 * it runs once, in the Node pass (SAME_IN_BOTH).
 *
 * The e2e and in-process tiers need Linux (/proc, POSIX shell wrappers, bubblewrap); elsewhere
 * they are left out with a notice, and the rest still runs. `deno task test` calls this after
 * scripts/ensure_test_tools.ts.
 *
 * Run: deno run -A scripts/test.ts [--pass deno|node]... [--save-durations] [-- <args>]
 *   <args>            files or folders under tests/ run only those (`-- tests/e2e/`); anything
 *                     else goes to every `deno test` (`-- --filter cancel`)
 *   --save-durations  runs every file as a job of its own and, when every job passed, writes
 *                     what each took, and the share of a core it kept busy, to
 *                     tests/durations.json (commit it when the order has drifted)
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { availableParallelism, platform, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import process from "node:process";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { refusalOf } from "../src/guard/workdirs.ts";
import { writeFileAtomicSync } from "../src/platform/atomic_write.ts";
import { REGEX_FALLBACK_FLAG } from "../src/platform/regex_guard.ts";
import { realDenoDir } from "../tests/support/deno_dir.ts";
import { PACKED_VAR } from "../tests/support/npm_package.ts";
import { buildNpm } from "./build_npm.ts";
import { COMPILE_PERMISSIONS } from "./compile.ts";
import { smoke } from "./smoke_binary.ts";
import {
  failureDigest,
  type PoolJob,
  type PoolResult,
  runPool,
  type Slots,
  testCounts,
} from "./test_pool.ts";

const SCRIPT = fileURLToPath(import.meta.url);
const ROOT = join(dirname(SCRIPT), "..");
const PASSES = ["deno", "node"] as const;
type Pass = typeof PASSES[number];

/**
 * The Node pass's smoke subset (see the header for why each is here). Each starts the program
 * through tests/support/harness.ts's serverCommand(), or installs the package itself.
 */
export const NODE_SMOKE = [
  "tests/e2e/basic_test.ts",
  "tests/e2e/native_test.ts",
  "tests/e2e/hostile_backend_test.ts",
  "tests/e2e/lifecycle_test.ts",
  "tests/e2e/plugin_test.ts",
  "tests/cli/cli_wiring_test.ts",
  "tests/cli/serve_terminal_test.ts",
];

/**
 * Smoke files of which only some tests run under Node, by name: those where the runtime under
 * our code decides (the sandbox's processes, fetch against a failing or flooding backend, an
 * abort mid-stream, the regex engine, paths resolved through links). The rest of such a file
 * checks our own logic (loop detection, one-shot budgets, permission modes), which the Deno
 * pass covers and which runs the same on Node.
 */
export const NODE_SMOKE_ONLY: Record<string, RegExp> = {
  "tests/e2e/native_test.ts":
    /^native: (a Bash call writes|files in credential-named folders|a mapped write|writes to \.\.\/x|the sandbox keeps|HTTP 503|endpoint errors|cancel stops|a backend's API key|a pathological Grep|with OTEL_EXPORTER_OTLP_ENDPOINT)/,
  "tests/e2e/hostile_backend_test.ts":
    /^hostile backend: (400 MB of streamed content|an endless HTTP 500 body|garbage, a cut stream|while a backend streams empty deltas)/,
};

/**
 * Smoke files whose program under test is the same in both passes: plugin_test builds and
 * installs the npm package itself and runs it under Node through npx. When the Node pass runs
 * too, the Deno pass leaves them to it rather than run the same thing twice.
 */
export const SAME_IN_BOTH = ["tests/e2e/plugin_test.ts"];

/**
 * Files that run with nothing beside them. modern_tasks_test needs interactive Claude Code to
 * speak MCP 2026-07-28 with our server, and Claude Code falls back to 2025-11-25 for the session
 * when the server's first answer (server/discover, from a process it starts for that alone)
 * takes longer than a few seconds: on 2 cores shared with five other test files it did, even
 * though the server answers it before loading the rest of itself. They run first, on the empty
 * pool (scripts/test_pool.ts), with only the npm package's build and install beside them.
 */
export const EXCLUSIVE = ["tests/e2e/modern_tasks_test.ts"];

/**
 * The recorded load (tests/durations.json) up to which a file of its own may run beside an
 * EXCLUSIVE one. Alone, modern_tasks_test left a core idle for 14-27 s at the start of every
 * run (the build and install beside it end after 7 s). Files that mostly wait on a backend, a
 * lease or a timer do not crowd it: run beside two and then three of them (backend_death,
 * session_lock, pools: loads 0.11-0.18), three times each, it passed in 10-14 s, and no session
 * needed a second try at the discover probe; the files that made it miss were the busy ones
 * that start first. A file without a figure is not one of them.
 */
export const BESIDE_EXCLUSIVE_LOAD = 0.12;

/**
 * Files that count what the whole process holds (its live `node:timers` timers): each in a
 * process of its own, whatever its time, since a file before them in a chunk may leave a timer
 * that ends in the middle of their count (CI: sleep_test's `1 !== 2`). Now that short e2e and
 * in-process files share processes too, not every such file can be checked to clear its own.
 */
export const OWN_PROCESS = ["tests/platform/sleep_test.ts", "tests/jobs/wait_test.ts"];

/**
 * The V8 flags of every Deno process a test job starts that does not set its own: the ones the
 * server runs with (scripts/compile.ts). V8 keeps compiled code only for the flags it was
 * compiled under, so a `deno run` under other flags (a bench, a helper process) threw away the
 * server's cached code for every module both load, and the next server compiled them all again
 * and rewrote the cache (about 7,000 writes to Deno's cache and 0.1 CPU-s a start). It also
 * runs the in-process tier's server under the regex engine the product runs.
 */
const V8_FLAGS = [process.env.DENO_V8_FLAGS, REGEX_FALLBACK_FLAG].filter(Boolean).join(",");

/**
 * Deno's cache folder, asked of `deno info` once for the run and given to every test job: the
 * tests start servers with a HOME of their own and pass it on (tests/support/deno_dir.ts),
 * which otherwise ran `deno info` again in each of about 100 test processes.
 */
function denoDir(): { DENO_DIR?: string } {
  try {
    return { DENO_DIR: realDenoDir() };
  } catch {
    return {}; // Each test process asks for itself, and says why it cannot.
  }
}

/** What every test job's environment adds to this process's: V8_FLAGS and denoDir(). */
export function jobEnv(): Record<string, string> {
  return { DENO_V8_FLAGS: V8_FLAGS, ...denoDir() };
}

/** The tiers that need Linux: /proc, POSIX shell wrappers, bubblewrap. */
const LINUX_TIERS = ["tests/e2e/", "tests/in_process/"];

/** The variable tests/support/harness.ts reads: a JSON array is the server's argv. */
const SERVER_VAR = "OLLAMA_DELEGATE_TEST_SERVER";

/**
 * How many jobs at once: DENO_JOBS=N, N whatever their loads; DENO_JOBS=auto, at least as many
 * as cores and up to three times as many while the loads recorded in tests/durations.json fit on
 * the cores; by default twice as many as cores. Most e2e and in-process tests wait on
 * subprocesses, emulated replies and timers rather than compute, but many jobs at once crowd the
 * cores and the kernel's mount locks (every claude and native turn sets up bubblewrap): on 2
 * cores, one after the other on the same code with nothing else running, a fixed 4 took 656.6 s
 * against 709.0 and 726.2 s by load (2 to 6) and a fixed 3 was well behind; earlier, a fixed 6
 * took 262 s against 241 s with 4.
 */
function slots(value: string | undefined, cores: number): Slots | undefined {
  if (value === "auto") return { min: cores, max: 3 * cores, cores };
  const n = Number(value ?? 2 * cores);
  return Number.isInteger(n) && n >= 1 ? n : undefined;
}
const SLOTS = slots(process.env.DENO_JOBS, availableParallelism());

/**
 * Seconds each test file took in an earlier run (`--save-durations` writes it), so the pool
 * starts the long ones first. A file missing from it is guessed from its tier; a stale entry
 * only makes the order a little worse.
 */
const DURATIONS = join(ROOT, "tests", "durations.json");

/**
 * The files that install the npm package: in the Deno pass they wait for the run's one build.
 * (The Node pass waits for it in its install job.) A file missing here still passes; it builds
 * its own package.
 */
export const NEEDS_PACKAGE = [
  "tests/e2e/bench_quick_test.ts",
  "tests/e2e/plugin_gate_test.ts",
  "tests/e2e/plugin_test.ts",
];

/** Tiers whose files start processes and wait on them: they share a process only when short. */
const PROCESS_TIERS = ["tests/e2e/", "tests/in_process/", "tests/cli/"];

/**
 * Files expected to take less than this many seconds share a `deno test` process with their
 * neighbours, up to CHUNK_SECONDS, and one module (chunkModule): unit files under 3 s, and under
 * 8 s those of the process tiers. A file of those pays more for a process of its own than a unit
 * file: Deno's test runtime, the MCP SDK's client and the code it drives load again in each.
 * Seven short CLI files took 6.4-6.5 CPU-s one process each and 1.4-1.5 in one. Longer ones
 * keep a job of their own, so that the pool can run their waits side by side.
 */
const SMALL_SECONDS = 3;
const SMALL_PROCESS_SECONDS = 8;
const CHUNK_SECONDS = 10;

/** What the whole suite's type check takes with nothing cached, as on a clean clone. */
const UNCACHED_CHECK_SECONDS = 30;

/** Every test file under tests/, as a path from the repository's root with forward slashes. */
export function testFiles(root = ROOT): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile() && /_test\.(ts|tsx|js|mjs)$/.test(entry.name)) out.push(path);
    }
  };
  walk("tests");
  return out.sort();
}

/**
 * What each job took before: its seconds, and the share of a core it kept busy (CPU time over
 * wall time) where that was measured. In the file a figure is `seconds` or `[seconds, load]`.
 */
export interface Figures {
  seconds: Record<string, number>;
  load: Record<string, number>;
}

export function readDurations(): Figures {
  const out: Figures = { seconds: {}, load: {} };
  try {
    const parsed: unknown = JSON.parse(readFileSync(DURATIONS, "utf8"));
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) {
      for (const [key, value] of Object.entries(parsed)) {
        const [secs, load] = Array.isArray(value) ? value : [value];
        if (typeof secs !== "number" || !(secs >= 0)) continue;
        out.seconds[key] = secs;
        if (typeof load === "number" && load > 0) out.load[key] = load;
      }
    }
  } catch {
    // No table yet, or one that does not parse: every file is guessed from its tier.
  }
  return out;
}

/** The seconds a file is expected to take: its last figure, else a guess from its tier. */
export function expected(file: string, durations: Record<string, number>, key = file): number {
  const known = durations[key];
  if (known !== undefined) return known;
  // A file of the process tiers not in the table yet gets a job of its own, started early: at
  // 5 s the in-process and CLI ones shared processes, and those that take a minute in a run
  // (session_affinity_test, permission_questions_test) started late, in one job.
  if (PROCESS_TIERS.some((t) => file.startsWith(t))) return 10;
  return 1;
}

/**
 * One module that imports each of `files`, written into `dir` as `<name>_test.ts`, for a job of
 * several files to run as one. `deno test` gives each module it is handed a V8 isolate of its
 * own and sets up its test runtime in each: 0.33 CPU-s and 80 MB an isolate (Deno 2.9.6; most of
 * it an array of 10 million elements its bench module fills), also for a file of one empty test.
 * Handed one module that imports them, it does that once: eight empty files took 0.33 CPU-s
 * instead of 2.9. The tests are the same: each still registers under its own file's location,
 * and they run in the files' order. What the files share in one isolate is what the suite's
 * files already shared in one process (the environment, the working directory), plus the
 * modules' own state and whatever a file leaves running: a `node:timers` timer, which Deno's
 * sanitizer does not see, is still there for the files after it (job_sweep_test's 5 s one ended
 * in the middle of sleep_test's count of the process's timers). A file that needs a fresh copy
 * of that state belongs in a job of its own; a file's tests clear what they start. A file
 * that throws as it loads fails its chunk's job, and the chunk's tests do not run.
 */
export function chunkModule(dir: string, name: string, files: string[]): string {
  const path = join(dir, `${name}_test.ts`);
  const imports = files.map((f) =>
    `import ${JSON.stringify(pathToFileURL(resolve(ROOT, f)).href)};`
  );
  writeFileAtomicSync(
    path,
    `// ${files.length} test files as one module (scripts/test.ts chunkModule).\n` +
      `${imports.join("\n")}\n`,
  );
  return path;
}

/** Whether `file`, expected to take `cost` seconds, may share a `deno test` process. */
export function sharesProcess(file: string, cost: number): boolean {
  if (OWN_PROCESS.includes(file)) return false;
  const small = PROCESS_TIERS.some((t) => file.startsWith(t))
    ? SMALL_PROCESS_SECONDS
    : SMALL_SECONDS;
  return cost < small;
}

/** The files of one `deno test` job and the key its durations are kept under. */
interface TestJob extends PoolJob {
  files: string[];
  prefix: string;
}

/** A job of one file whose recorded load lets it run beside an exclusive one. */
export function besideExclusive(group: string[], prefix: string, figures: Figures): boolean {
  const load = group.length === 1 ? figures.load[prefix + group[0]!] : undefined;
  return load !== undefined && load <= BESIDE_EXCLUSIVE_LOAD && !EXCLUSIVE.includes(group[0]!);
}

/**
 * The `deno test` jobs for `files`: one per file that is slow for its tier (SMALL_SECONDS), the
 * rest packed in path order into jobs of about CHUNK_SECONDS, each run as one module
 * written into `chunks` (chunkModule). `alone` puts every file in a job of its own, so that each
 * one's time can be measured (`--save-durations`).
 */
function testJobs(
  files: string[],
  pass: Pass,
  figures: Figures,
  extra: string[],
  alone: boolean,
  server: () => string[],
  chunks: string,
  needs: (file: string) => PoolJob[] = () => [],
  only: Record<string, RegExp> = {},
  packed: () => Record<string, string> = () => ({}),
): TestJob[] {
  const prefix = pass === "deno" ? "" : `${pass}:`;
  const groups: string[][] = [];
  let chunk: string[] = [];
  let chunkCost = 0;
  for (const file of files) {
    const cost = expected(file, figures.seconds, prefix + file);
    if (alone || only[file] || !sharesProcess(file, cost)) {
      groups.push([file]);
      continue;
    }
    chunk.push(file);
    chunkCost += cost;
    if (chunkCost >= CHUNK_SECONDS) {
      groups.push(chunk);
      chunk = [];
      chunkCost = 0;
    }
  }
  if (chunk.length > 0) groups.push(chunk);
  return groups.map((group, index) => {
    const label = group.length === 1
      ? `${prefix}${group[0]}`
      : `${prefix}${group[0]} … ${group.at(-1)} (${group.length} files)`;
    return {
      label,
      pass,
      files: group,
      prefix,
      needs: [...new Set(group.flatMap(needs))],
      cost: group.reduce((sum, f) => sum + expected(f, figures.seconds, prefix + f), 0),
      load: groupLoad(group.map((f) => prefix + f), figures),
      ...(group.some((f) => EXCLUSIVE.includes(f)) ? { exclusive: true } : {}),
      ...(besideExclusive(group, prefix, figures) ? { besideExclusive: true } : {}),
      command: () => ({
        argv: [
          process.execPath,
          "test",
          "-A",
          "--no-check",
          // The emulators watch request.signal for a client that hangs up; the new semantics
          // (abort on a disconnect only) are what they mean, and opting in silences Deno's
          // legacy warning.
          "--unstable-no-legacy-abort",
          // Before `extra`, so that a --filter given by hand wins.
          ...(group.length === 1 && only[group[0]!]
            ? ["--filter", `/${only[group[0]!]!.source}/`]
            : []),
          ...extra,
          ...(group.length === 1 ? group : [
            "--config",
            join(ROOT, "deno.json"),
            chunkModule(chunks, `${pass}_chunk_${index}`, group),
          ]),
        ],
        env: { [SERVER_VAR]: JSON.stringify(server()), ...jobEnv(), ...packed() },
        cwd: ROOT,
      }),
    };
  });
}

/** A job's load from its files' figures: their CPU time over their time; unknown if any is. */
function groupLoad(keys: string[], figures: Figures): number | undefined {
  let cpu = 0;
  let wall = 0;
  for (const key of keys) {
    const secs = figures.seconds[key];
    const load = figures.load[key];
    if (secs === undefined || load === undefined) return undefined;
    cpu += secs * load;
    wall += secs;
  }
  return wall > 0 ? cpu / wall : undefined;
}

/** Figures of the jobs that passed, by key: a test file's path, "node:install", "typecheck". */
function measuredDurations(results: PoolResult[]): Record<string, [number, number | undefined]> {
  const out: Record<string, [number, number | undefined]> = {};
  for (const result of results) {
    const job = result.job as Partial<TestJob>;
    if (result.status !== "ok") continue;
    const key = job.files?.length === 1
      ? job.prefix + job.files[0]!
      : job.label?.startsWith("node: install")
      ? "node:install"
      : job.label === "npm package: build and pack"
      ? "npm:pack"
      : job.label === "type check"
      ? "typecheck"
      : undefined;
    if (key === undefined) continue;
    const load = result.cpuSeconds !== undefined && result.seconds > 0
      ? result.cpuSeconds / result.seconds
      : undefined;
    out[key] = [result.seconds, load];
  }
  return out;
}

function writeDurations(measured: Record<string, [number, number | undefined]>): void {
  const old = readDurations();
  const merged: Record<string, [number, number | undefined]> = {};
  for (const [key, secs] of Object.entries(old.seconds)) merged[key] = [secs, old.load[key]];
  Object.assign(merged, measured);
  // Files since removed or renamed leave the table.
  const kept = Object.keys(merged).filter((k) => {
    const file = k.slice(k.indexOf(":") + 1);
    return !file.startsWith("tests/") || existsSync(join(ROOT, file));
  });
  const round = (n: number, places: number) => Math.round(n * 10 ** places) / 10 ** places;
  const sorted = Object.fromEntries(
    kept.sort().map((k) => {
      const [secs, load] = merged[k]!;
      return [k, load === undefined ? round(secs, 1) : [round(secs, 1), round(load, 2)]];
    }),
  );
  writeFileAtomicSync(
    DURATIONS,
    JSON.stringify(sorted, null, 2).replace(/\[\n\s+([\d.]+),\n\s+([\d.]+)\n\s+\]/g, "[$1, $2]") +
      "\n",
  );
}

/**
 * Installs the packed npm package into a fresh prefix, as `npm install -g` does, and returns
 * the installed command after checking that `--version` names the package's version.
 */
function installNpmPackage(tarball: string): string {
  const prefix = mkdtempSync(join(tmpdir(), "od-npm-prefix-"));
  console.error(`\n$ npm install -g --prefix ${prefix} ${tarball}`);
  const npm = platform() === "win32" ? "npm.cmd" : "npm";
  const install = spawnSync(
    npm,
    ["install", "-g", "--prefix", prefix, "--no-audit", "--no-fund", tarball],
    { stdio: "inherit", shell: platform() === "win32" },
  );
  if (install.status !== 0) throw new Error(`npm install of ${tarball} failed (${install.status})`);
  const command = platform() === "win32"
    ? join(prefix, "ollama-delegate.cmd")
    : join(prefix, "bin", "ollama-delegate");
  const version = spawnSync(command, ["--version"], {
    encoding: "utf8",
    shell: platform() === "win32",
  });
  const want = /ollama-delegate-(\d+\.\d+\.\d+[^/\\]*)\.tgz$/.exec(tarball)?.[1];
  if (version.status !== 0 || !want || version.stdout.trim() !== `ollama-delegate ${want}`) {
    throw new Error(
      `the installed ${command} answered --version with "${version.stdout.trim()}" ` +
        `(exit ${version.status}), expected "ollama-delegate ${want}"`,
    );
  }
  console.error(`$ ${command} --version\n${version.stdout.trim()}`);
  return command;
}

/** The line `--install-npm` ends with: the installed command's path. */
const INSTALLED = "installed command: ";

/** The line `--pack-npm <dir>` ends with: the packed package's path. */
const PACKED = "packed package: ";

/**
 * `--install-npm`: installs the npm package the run packed (PACKED_VAR; else builds and packs
 * it) into a fresh prefix, smoke-tests the installed command and prints its path last. The Node
 * pass's job that every Node smoke file waits for; a process of its own so the pool keeps
 * reporting while npm works.
 */
async function installForNodePass(tarball: string | undefined): Promise<void> {
  const command = installNpmPackage(tarball ?? buildNpm());
  console.error(`\n$ smoke test: ${command}`);
  await smoke(command, []);
  console.log(`${INSTALLED}${command}`);
}

/** Every job of the passes asked for. */
function plan(
  passes: Pass[],
  extra: string[],
  linux: boolean,
  alone: boolean,
  only: string[],
  chunks: string,
): PoolJob[] {
  const figures = readDurations();
  const all = testFiles().filter((f) => linux || !LINUX_TIERS.some((t) => f.startsWith(t)))
    .filter((f) => only.length === 0 || only.some((o) => f === o || f.startsWith(`${o}/`)));
  const jobs: PoolJob[] = [];
  const deno = (file: string) => passes.includes("node") ? !SAME_IN_BOTH.includes(file) : true;
  const tested = new Set<string>();
  // The npm package, built and packed once for the jobs that install it.
  let tarball: string | undefined;
  const pack: PoolJob = {
    label: "npm package: build and pack",
    // A failed build (the Node bundle) is the Node pass's when it runs.
    pass: passes.includes("node") ? "node" : passes[0]!,
    cost: figures.seconds["npm:pack"] ?? 3,
    load: figures.load["npm:pack"],
    // Beside modern_tasks_test at the start: that file passed in runs with the build beside it,
    // and the build is what the Node pass and the files that install the package wait for.
    besideExclusive: true,
    command: () => ({
      argv: [process.execPath, "run", "-A", SCRIPT, "--pack-npm", join(chunks, "npm")],
      cwd: ROOT,
    }),
    done(output) {
      tarball = output.split("\n").findLast((l) => l.startsWith(PACKED))?.slice(PACKED.length)
        .trim();
      if (!tarball) throw new Error(`the pack job printed no "${PACKED}" line`);
    },
  };
  // Empty until the pack job has ended: a name left in the caller's environment is not used.
  const packed = (): Record<string, string> => ({ [PACKED_VAR]: tarball ?? "" });
  const wantsPack = passes.includes("node") || all.some((f) => NEEDS_PACKAGE.includes(f));
  if (wantsPack) jobs.push(pack);
  if (passes.includes("deno")) {
    const files = all.filter(deno);
    files.forEach((f) => tested.add(f));
    const server = [
      "deno",
      "run",
      ...COMPILE_PERMISSIONS,
      "--no-prompt",
      "--config",
      join(ROOT, "deno.json"),
      join(ROOT, "src", "main.ts"),
      "serve",
    ];
    jobs.push(
      ...testJobs(
        files,
        "deno",
        figures,
        extra,
        alone,
        () => server,
        chunks,
        (f) => NEEDS_PACKAGE.includes(f) ? [pack] : [],
        {},
        packed,
      ),
    );
  }
  if (passes.includes("node")) {
    let installed: string | undefined;
    const install: PoolJob = {
      label: "node: install and smoke-test the npm package",
      pass: "node",
      cost: figures.seconds["node:install"] ?? 20,
      load: figures.load["node:install"],
      needs: [pack],
      // After the build, beside modern_tasks_test too: one npm process, and what the Node pass
      // waits for.
      besideExclusive: true,
      command: () => ({
        argv: [process.execPath, "run", "-A", SCRIPT, "--install-npm"],
        env: packed(),
        cwd: ROOT,
      }),
      done(output) {
        installed = output.split("\n").findLast((l) => l.startsWith(INSTALLED))
          ?.slice(INSTALLED.length).trim();
        if (!installed) throw new Error(`the install job printed no "${INSTALLED}" line`);
      },
    };
    jobs.push(install);
    if (linux) {
      // A renamed or removed file must not silently shrink the subset.
      const missing = NODE_SMOKE.filter((file) => !existsSync(join(ROOT, file)));
      if (missing.length > 0) {
        throw new Error(
          `the Node smoke subset names ${missing.join(", ")}, which do not exist; ` +
            "update NODE_SMOKE in scripts/test.ts",
        );
      }
      const smoke = NODE_SMOKE.filter((f) => all.includes(f));
      smoke.forEach((f) => tested.add(f));
      jobs.push(
        ...testJobs(
          smoke,
          "node",
          figures,
          extra,
          alone,
          () => [installed!],
          chunks,
          () => [install],
          NODE_SMOKE_ONLY,
          packed,
        ),
      );
    }
  }
  // The type check `deno test` would do first. For the whole suite, the same roots as
  // `deno task check` (deno.json), whose result Deno has cached when that ran first (as in CI);
  // otherwise the files chosen. Its recorded figure is the cached one (2 s), which put it last;
  // on a clean clone nothing is cached and it took 13.6-15.1 s there, the run's last seconds
  // with one core busy. Ordered as what it costs uncached, it starts among the first jobs, where
  // a cached check ends in a second.
  const roots = only.length === 0 ? ["src/", "tests/", "bench/", "scripts/"] : [...tested].sort();
  jobs.push({
    label: "type check",
    pass: passes[0]!,
    cost: Math.max(figures.seconds["typecheck"] ?? 0, UNCACHED_CHECK_SECONDS),
    load: figures.load["typecheck"],
    command: () => ({ argv: [process.execPath, "check", ...roots], cwd: ROOT }),
  });
  return jobs;
}

function seconds(s: number): string {
  return `${s.toFixed(1)} s`;
}

/** The temporary folder each job was given (withTempFolders). */
const jobTemp = new Map<PoolJob, string>();

/**
 * Gives every job a temporary folder of its own inside `root` (TMPDIR, or TEMP and TMP on
 * Windows), made when it starts, and tells the tests in it to leave their folders: they are
 * removed once the run ends, and a failed job's are kept. A test module otherwise removes its
 * own at its end (tempDir in tests/support/harness.ts), in the middle of the run: on ext4
 * without a journal, inodes freed in the last minute are skipped one by one when a new one is
 * allocated, so every file made after a mass removal cost up to a millisecond of kernel time
 * (a 23,000-file tree took 5-18 s instead of 1).
 */
function withTempFolders(jobs: PoolJob[], root: string): PoolJob[] {
  for (const job of jobs) {
    // The same objects: other jobs name them in `needs`.
    const command = job.command.bind(job);
    job.command = () => {
      const dir = mkdtempSync(join(root, "job-"));
      jobTemp.set(job, dir);
      const run = command();
      const temp: Record<string, string> = platform() === "win32"
        ? { TEMP: dir, TMP: dir }
        : { TMPDIR: dir };
      return { ...run, env: { ...run.env, ...temp, OD_KEEP_TEMP: "1" } };
    };
  }
  return jobs;
}

/**
 * Why the run's temporary folders cannot be under `root` (a real path), or undefined. The tests
 * make their projects, homes and state dirs there, and the server refuses a delegate a directory
 * in a system tree (src/guard/workdirs.ts): with TMPDIR=/dev/shm every delegate was refused
 * ("it lies in the system directory /dev"), and 24 jobs failed or hung for minutes instead of
 * the run stopping at once.
 */
export function tempRootRefusal(root: string): string | undefined {
  const refusal = refusalOf(join(root, "od-test-run-x", "job-x", "od-work-x"), {
    home: join(root, "od-test-run-x", "job-x", "od-home-x"),
    roots: [],
  });
  return refusal?.rule === "system" ? refusal.reason : undefined;
}

/** Removes a temporary folder; one that cannot be removed now is named, not fatal. */
function removeTemp(dir: string | undefined): void {
  if (dir === undefined) return;
  try {
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  } catch (e) {
    console.error(`test: could not remove ${dir}: ${(e as Error).message}`);
  }
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    options: {
      pass: { type: "string", multiple: true },
      "save-durations": { type: "boolean" },
      "install-npm": { type: "boolean" },
      "pack-npm": { type: "string" },
    },
    allowPositionals: true,
  });
  if (values["pack-npm"] !== undefined) {
    const dir = values["pack-npm"];
    console.log(`${PACKED}${buildNpm(dir, join(dir, "stage"))}`);
    process.exit(0);
  }
  if (values["install-npm"]) {
    await installForNodePass(process.env[PACKED_VAR] || undefined);
    process.exit(0);
  }
  const passes = (values.pass ?? [...PASSES]) as Pass[];
  const bad = passes.find((p) => !(PASSES as readonly string[]).includes(p));
  if (bad) {
    console.error(`test: unknown pass "${bad}" (use ${PASSES.join(" or ")})`);
    process.exit(2);
  }
  if (SLOTS === undefined) {
    console.error(
      `test: DENO_JOBS must be a whole number of at least 1, or auto, not "${process.env.DENO_JOBS}"`,
    );
    process.exit(2);
  }
  let tempRoot: string;
  try {
    tempRoot = realpathSync(tmpdir());
  } catch (e) {
    console.error(
      `test: the temporary folder ${tmpdir()} (TMPDIR) cannot be used: ` +
        `${(e as Error).message}. Set TMPDIR to a folder that exists, such as /tmp.`,
    );
    process.exit(2);
  }
  const refusedTemp = tempRootRefusal(tempRoot);
  if (refusedTemp !== undefined) {
    console.error(
      `test: the tests cannot make their folders in ${tempRoot} (TMPDIR): ${refusedTemp}, and ` +
        `the server refuses a delegate such a directory. Set TMPDIR to a folder on a disk or a ` +
        `tmpfs outside the system's trees, such as /tmp.`,
    );
    process.exit(2);
  }
  const linux = platform() === "linux";
  if (!linux) {
    console.error(
      `test: ${LINUX_TIERS.join(" and ")} need Linux (/proc, POSIX shell wrappers, bubblewrap); ` +
        `running everything else on ${platform()}`,
    );
  }
  const save = values["save-durations"] === true;
  // Arguments naming files or folders under tests/ choose what runs; the rest go to deno test.
  const only = positionals.filter((a) => a.startsWith("tests/") && existsSync(join(ROOT, a)))
    .map((a) => a.replace(/\/+$/, ""));
  const extra = positionals.filter((a) => !only.includes(a.replace(/\/+$/, "")));
  const runTemp = mkdtempSync(join(tmpdir(), "od-test-run-"));
  const jobs = withTempFolders(plan(passes, extra, linux, save, only, runTemp), runTemp);
  let keepTemp = false;
  // Also when Ctrl-C ends the run (the pool exits once it has killed every job).
  process.on("exit", () => {
    if (!keepTemp) removeTemp(runTemp);
  });
  console.error(
    `test: ${jobs.length} jobs (${passes.join(" and ")} pass), ` +
      (typeof SLOTS === "number"
        ? `${SLOTS} at once`
        : `${SLOTS.min} to ${SLOTS.max} at once as their loads fit ${SLOTS.cores} cores`) +
      ", longest first",
  );
  const t0 = performance.now();
  // Every job runs even after a failure, so one run shows every fault, and whether one is
  // Node-only.
  const results = await runPool(jobs, SLOTS, (r, left) => {
    const head = r.status === "skipped"
      ? `skipped: ${r.reason}`
      : `${r.status === "ok" ? "ok" : "FAILED"} in ${seconds(r.seconds)}`;
    const at = seconds((performance.now() - t0) / 1000);
    console.error(`\n── ${r.job.label}: ${head} (${left} to go, ${at} into the run)`);
    if (r.output) process.stderr.write(r.output.endsWith("\n") ? r.output : `${r.output}\n`);
  }, save);
  const wall = (performance.now() - t0) / 1000;

  for (const r of results.filter((r) => r.status === "failed")) {
    console.error(`\n── why ${r.job.label} failed:\n${failureDigest(r.output ?? "")}`);
  }
  const lines: string[] = [];
  for (const pass of passes) {
    const mine = results.filter((r) => r.job.pass === pass);
    const counts = { passed: 0, failed: 0, ignored: 0 };
    for (const r of mine) {
      const c = testCounts(r.output);
      if (c) { for (const k of ["passed", "failed", "ignored"] as const) counts[k] += c[k]; }
    }
    const bad = mine.filter((r) => r.status !== "ok");
    const files = mine.reduce(
      (n, r) => n + ((r.job as { files?: string[] }).files?.length ?? 0),
      0,
    );
    lines.push(
      `test: ${pass} pass: ${bad.length === 0 ? "ok" : "FAILED"}: ${files} files, ` +
        `${counts.passed} passed, ${counts.failed} failed, ${counts.ignored} ignored`,
    );
    for (const r of bad) lines.push(`test:   ${r.status}: ${r.job.label}`);
  }
  const slowest = results.filter((r) => r.status !== "skipped")
    .sort((a, b) => b.seconds - a.seconds).slice(0, 8);
  lines.push(
    `test: slowest: ${slowest.map((r) => `${r.job.label} ${seconds(r.seconds)}`).join(", ")}`,
  );
  lines.push(`test: all done in ${seconds(wall)}`);
  console.error(`\n${lines.join("\n")}`);
  const failed = results.some((r) => r.status !== "ok");
  if (failed) {
    // Only the failed jobs' files stay, for a look.
    keepTemp = true;
    for (const r of results) if (r.status === "ok") removeTemp(jobTemp.get(r.job));
    console.error(`test: the failed jobs' temporary files are kept in ${runTemp}`);
  }
  if (save) {
    if (failed) console.error("test: durations not saved: not every job passed");
    else {
      writeDurations(measuredDurations(results));
      console.error(`test: wrote ${DURATIONS}`);
    }
  }
  if (failed) process.exit(1);
}
