/**
 * The whole test suite, in two passes:
 *   1. deno: every test under tests/ on Deno, in three tiers: unit tests (tests/<layer>/), the
 *      in-process tier (tests/in_process/: our server built by the same wiring in this process,
 *      its delegates still real) and the end-to-end tier (tests/e2e/, tests/cli/: the real
 *      program as a process, started as `deno run` with exactly the permissions baked into the
 *      release binaries, scripts/compile.ts).
 *   2. node: builds the npm package (scripts/build_npm.ts: the Node bundle, packed), installs
 *      the tarball into a temporary prefix as a user would (`npm install -g --prefix`),
 *      checks `ollama-delegate --version`, smoke-tests the installed command, then runs the
 *      NODE_SMOKE files below against it, with no Deno global in the program under test.
 *
 * The Node pass is a smoke subset, not the e2e tier again: what differs under Node is the
 * runtime under our code (child processes, stdio, signals, fetch, the regex engine, memory),
 * not the code, which the Deno pass covers whole. The subset still runs each engine, the
 * sandbox, the plugin and the installed command:
 *   - tests/e2e/basic_test.ts: the claude engine, the real Claude Code CLI in its bubblewrap jail;
 *   - tests/e2e/native_test.ts: the native engine, its bubblewrap sandbox, backend retries,
 *     errors, keys and a cancel mid-stream, and a pathological Grep pattern;
 *   - tests/e2e/hostile_backend_test.ts: Node's fetch against a hostile backend, memory bounded;
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
 * Run: deno run -A scripts/test.ts [--pass deno|node]... [-- <deno test args>]
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { availableParallelism, platform } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { buildNpm } from "./build_npm.ts";
import { COMPILE_PERMISSIONS } from "./compile.ts";
import { smoke } from "./smoke_binary.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
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
 * Smoke files whose program under test is the same in both passes: plugin_test builds and
 * installs the npm package itself and runs it under Node through npx. When the Node pass runs
 * too, the Deno pass leaves them to it rather than run the same thing twice.
 */
export const SAME_IN_BOTH = ["tests/e2e/plugin_test.ts"];

/** The tiers that need Linux: /proc, POSIX shell wrappers, bubblewrap. */
const LINUX_TIERS = ["tests/e2e/", "tests/in_process/"];

/** The variable tests/support/harness.ts reads: a JSON array is the server's argv. */
const SERVER_VAR = "OLLAMA_DELEGATE_TEST_SERVER";

/**
 * Test files run at once: twice the cores, unless DENO_JOBS says otherwise. Most e2e and
 * in-process tests wait on subprocesses, emulated replies and timers rather than compute; on
 * 2 shared cores the Deno pass took 478 s with 2 files at once, 282-302 s with 4, 309 s with 6
 * (later, after cutting the suite's idle waits: 254 s with 4, 297 s with 8).
 * The failures first seen at 4 (an empty answer after a deadline or a follow-up) were a race in
 * the job layer, a reader seeing a job ended before its answer was written, since fixed
 * (tests/jobs/manager_test.ts "a reader never sees a job ended before its answer is on disk").
 */
const JOBS = process.env.DENO_JOBS ?? String(2 * availableParallelism());

function denoTest(paths: string[], extra: string[], env: Record<string, string>): void {
  // The emulators watch request.signal for a client that hangs up; the new semantics (abort on
  // a disconnect only) are what they mean, and opting in silences Deno's legacy warning.
  const args = ["test", "-A", "--parallel", "--unstable-no-legacy-abort", ...extra, ...paths];
  console.error(`\n$ DENO_JOBS=${JOBS} deno ${args.join(" ")}`);
  const r = spawnSync(process.execPath, args, {
    cwd: ROOT,
    stdio: "inherit",
    env: { ...process.env, DENO_JOBS: JOBS, ...env },
  });
  if (r.status !== 0) throw new Error(`deno test ${paths.join(" ")} failed (${r.status})`);
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

async function runPass(
  pass: Pass,
  extra: string[],
  e2e: boolean,
  nodeToo: boolean,
  checkedByDeno = false,
): Promise<void> {
  if (pass === "deno") {
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
    const ignored = e2e ? (nodeToo ? SAME_IN_BOTH : []) : LINUX_TIERS;
    const ignore = ignored.length > 0 ? [`--ignore=${ignored.join(",")}`] : [];
    denoTest(["tests/"], [...ignore, ...extra], { [SERVER_VAR]: JSON.stringify(server) });
    return;
  }
  const command = installNpmPackage(buildNpm());
  console.error(`\n$ smoke test: ${command}`);
  await smoke(command, []);
  if (e2e) {
    // A renamed or removed file must not silently shrink the subset.
    const missing = NODE_SMOKE.filter((file) => !existsSync(join(ROOT, file)));
    if (missing.length > 0) {
      throw new Error(
        `the Node smoke subset names ${missing.join(", ")}, which do not exist; ` +
          "update NODE_SMOKE in scripts/test.ts",
      );
    }
    // The Deno pass type-checked these files already when it ran before.
    const check = checkedByDeno ? ["--no-check"] : [];
    denoTest(NODE_SMOKE, [...check, ...extra], { [SERVER_VAR]: JSON.stringify([command]) });
  }
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    options: { pass: { type: "string", multiple: true } },
    allowPositionals: true,
  });
  const passes = (values.pass ?? [...PASSES]) as Pass[];
  const bad = passes.find((p) => !(PASSES as readonly string[]).includes(p));
  if (bad) {
    console.error(`test: unknown pass "${bad}" (use ${PASSES.join(" or ")})`);
    process.exit(2);
  }
  const e2e = platform() === "linux";
  if (!e2e) {
    console.error(
      `test: ${LINUX_TIERS.join(" and ")} need Linux (/proc, POSIX shell wrappers, bubblewrap); ` +
        `running everything else on ${platform()}`,
    );
  }
  // Every pass runs even after a failure, so one run shows whether a fault is Node-only.
  const results: string[] = [];
  let failed = false;
  for (const [i, pass] of passes.entries()) {
    const t0 = performance.now();
    let outcome = "ok";
    try {
      const checked = passes.slice(0, i).includes("deno");
      await runPass(pass, positionals, e2e, passes.includes("node"), checked);
    } catch (e) {
      failed = true;
      outcome = `FAILED: ${(e as Error).message}`;
    }
    results.push(`${pass} pass (${((performance.now() - t0) / 1000).toFixed(0)} s): ${outcome}`);
  }
  console.error(`\n${results.map((r) => `test: ${r}`).join("\n")}`);
  if (failed) process.exit(1);
}
