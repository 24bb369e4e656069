/**
 * The test tiers' bookkeeping: the Node pass's smoke list names files that exist, covers what
 * scripts/test.ts promises, and holds no in-process test; the inventory counts what a test
 * file holds and not what its comments quote.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import {
  BESIDE_EXCLUSIVE_LOAD,
  besideExclusive,
  chunkModule,
  EXCLUSIVE,
  expected,
  jobEnv,
  NEEDS_PACKAGE,
  NODE_SMOKE,
  NODE_SMOKE_ONLY,
  OWN_PROCESS,
  readDurations,
  SAME_IN_BOTH,
  sharesProcess,
  tempRootRefusal,
  testFiles,
} from "../../scripts/test.ts";
import { PACKED_VAR, runPackage } from "../support/npm_package.ts";
import { testCounts } from "../../scripts/test_pool.ts";
import { REGEX_FALLBACK_FLAG } from "../../src/platform/regex_guard.ts";
import { countFile } from "../../scripts/test_inventory.ts";
import { REPO, tempDir } from "../support/harness.ts";

Deno.test("node smoke list: every file exists, none is in-process, each engine and the plugin run", () => {
  for (const file of NODE_SMOKE) assert.ok(existsSync(join(REPO, file)), file);
  assert.deepEqual(NODE_SMOKE.filter((f) => f.startsWith("tests/in_process/")), []);
  const text = NODE_SMOKE.map((f) => readFileSync(join(REPO, f), "utf8")).join("\n");
  // The claude engine is the default; the native one is named; the plugin installs through npx.
  assert.match(text, /real Claude Code CLI/);
  assert.match(text, /engine: "native"/);
  assert.match(text, /npx/);
  assert.ok(NODE_SMOKE.some((f) => f.startsWith("tests/cli/")), "the installed command's CLI");
  // What the Deno pass leaves to the Node pass must run there, and must not need the pass's
  // program under test (it would then test only one of the two).
  for (const file of SAME_IN_BOTH) {
    assert.ok(NODE_SMOKE.includes(file), file);
    assert.doesNotMatch(readFileSync(join(REPO, file), "utf8"), /serverCommand|startScene/, file);
  }
});

Deno.test("node smoke list: a file run in part under Node runs some of its tests there, not all", () => {
  for (const [file, only] of Object.entries(NODE_SMOKE_ONLY)) {
    assert.ok(NODE_SMOKE.includes(file), `${file} is not on the smoke list`);
    const text = readFileSync(join(REPO, file), "utf8");
    const { names } = countFile(text);
    const chosen = names.filter((n) => only.test(n));
    // Each alternative of the pattern names a test that exists: a renamed test must not drop
    // out of the Node pass unnoticed. A name made in a loop (`${what} ends the job`) is matched
    // by the text it is made from, quoted in the file.
    const alternatives = /\((.*)\)$/.exec(only.source)?.[1]?.split("|") ?? [];
    assert.ok(alternatives.length > 0, only.source);
    for (const alternative of alternatives) {
      const one = new RegExp(only.source.replace(/\(.*\)$/, `(${alternative})`));
      const quoted = new RegExp(`"${alternative}`);
      assert.ok(
        names.some((n) => one.test(n)) || quoted.test(text),
        `${file}: no test matches ${alternative}`,
      );
    }
    assert.ok(chosen.length > 0 && chosen.length < names.length, `${file}: ${chosen.length}`);
  }
});

Deno.test("inventory: tests, steps and asserts are counted from code, not from comments", () => {
  // Written with stand-ins, so that the inventory of this file counts only its own two tests.
  const source = [
    '// T("quoted in a comment") and A.ok(x)',
    '/* T("in a block"); A(y) */',
    'T("one", async (t) => {',
    '  await S("a", () => A.equal(1, 1));',
    "  A(true);",
    "});",
    "T({",
    '  name: "two",',
    "  fn() { A.deepEqual([], []); },",
    "});",
    "T(`${engine}: three`, () => {});",
  ].join("\n").replaceAll("T(", "Deno" + ".test(").replaceAll("S(", "t" + ".step(")
    .replaceAll("A", "as" + "sert");
  const counts = countFile(source);
  assert.equal(counts.tests, 3);
  assert.equal(counts.steps, 1);
  assert.equal(counts.asserts, 3);
  assert.deepEqual(counts.names, ["one", "two", "${engine}: three"]);
});

Deno.test("test jobs: each runs its Deno processes with the server's V8 flags and names Deno's cache", () => {
  const env = jobEnv();
  // V8 keeps compiled code per flag set: a `deno run` under other flags than the server's
  // made the next server compile every module both load again.
  assert.ok(
    env.DENO_V8_FLAGS?.split(",").includes(REGEX_FALLBACK_FLAG),
    `DENO_V8_FLAGS is ${env.DENO_V8_FLAGS}`,
  );
  // Asked once for the run, so that no test process has to run `deno info` for it.
  assert.ok(env.DENO_DIR && statSync(join(env.DENO_DIR, "npm")).isDirectory(), env.DENO_DIR);
});

Deno.test("test jobs: a chunk's files run as one module, in order, and a failure in one is its own", () => {
  const dir = tempDir("od-chunk-");
  // The first file leaves a mark on the global object that the second reads: they share one
  // isolate only when they are one module's imports (handed to `deno test` as files, each had
  // its own, and its own test runtime to set up).
  writeFileSync(
    join(dir, "first_test.ts"),
    'Deno.test("first: passes", () => {});\n(globalThis as Record<string, unknown>).odChunkMark = "first";\n',
  );
  writeFileSync(
    join(dir, "second_test.ts"),
    'Deno.test("second: sees the first file\'s mark", () => {\n' +
      '  if ((globalThis as Record<string, unknown>).odChunkMark !== "first") throw new Error("no mark");\n' +
      "});\n" +
      'Deno.test("second: fails on purpose", () => { throw new Error("planted failure"); });\n',
  );
  const chunk = chunkModule(dir, "chunk_0", [
    join(dir, "first_test.ts"),
    join(dir, "second_test.ts"),
  ]);
  const run = spawnSync(Deno.execPath(), ["test", "--no-check", chunk], {
    encoding: "utf8",
    env: { ...Deno.env.toObject(), NO_COLOR: "1" },
  });
  const out = run.stdout + run.stderr;
  assert.equal(run.status, 1, out);
  assert.deepEqual(testCounts(out), { passed: 2, failed: 1, ignored: 0 }, out);
  assert.match(out, /first: passes \.\.\. ok[\s\S]*second: sees the first file's mark \.\.\. ok/);
  // The failure is reported where its test is, not at the chunk.
  assert.match(out, /second: fails on purpose => .*second_test\.ts:\d+:\d+/);
});

Deno.test("test jobs: every file that installs the npm package waits for the run's one build", () => {
  // A file that packs its own (packedNpmPackage without the run's package) still passes, so
  // only this check sees it missing from the list. bench_quick_test runs unread_hook_bench.
  const installs = testFiles(REPO).filter((f) =>
    f !== "tests/scripts/test_tiers_test.ts" &&
    /packedNpmPackage\(|OD_BENCH_QUICK/.test(readFileSync(join(REPO, f), "utf8"))
  );
  assert.ok(installs.length >= 3, installs.join(", "));
  for (const file of installs) assert.ok(NEEDS_PACKAGE.includes(file), file);
  for (const file of NEEDS_PACKAGE) assert.ok(installs.includes(file), `${file} installs none`);
  const bench = readFileSync(join(REPO, "bench", "unread_hook_bench.ts"), "utf8");
  assert.match(bench, /runPackage\(\) \?\? buildNpm/);
});

Deno.test("test jobs: the run's package is used when it is there, and only then", () => {
  const before = Deno.env.get(PACKED_VAR);
  const dir = tempDir("od-packed-");
  try {
    const tarball = join(dir, "ollama-delegate-0.1.0.tgz");
    Deno.env.set(PACKED_VAR, tarball);
    assert.equal(runPackage(), undefined, "named but not there");
    writeFileSync(tarball, "");
    assert.equal(runPackage(), tarball);
    Deno.env.delete(PACKED_VAR);
    assert.equal(runPackage(), undefined);
  } finally {
    if (before === undefined) Deno.env.delete(PACKED_VAR);
    else Deno.env.set(PACKED_VAR, before);
  }
});

Deno.test("a file that counts the process's live timers runs in a process of its own", () => {
  // Counted through the process's active resources; a chunk's earlier files may leave one.
  const counting = testFiles().filter((f) =>
    /getActiveResourcesInfo\(\)/.test(readFileSync(join(REPO, f), "utf8"))
  );
  assert.ok(counting.length > 0, "the timer counts this list exists for are gone");
  assert.deepEqual([...OWN_PROCESS].sort(), counting.sort());
  for (const file of counting) assert.equal(sharesProcess(file, 0.1), false, file);
});

Deno.test("short files share a process: unit files under 3 s, e2e, in-process and CLI ones under 8 s", () => {
  assert.equal(sharesProcess("tests/jobs/record_test.ts", 2.9), true);
  assert.equal(sharesProcess("tests/jobs/record_test.ts", 3), false);
  for (const tier of ["e2e", "in_process", "cli"]) {
    assert.equal(sharesProcess(`tests/${tier}/x_test.ts`, 7.9), true, tier);
    assert.equal(sharesProcess(`tests/${tier}/x_test.ts`, 8), false, tier);
    // One not in tests/durations.json yet runs alone, as it did before process tiers shared.
    const unknown = `tests/${tier}/new_test.ts`;
    assert.equal(sharesProcess(unknown, expected(unknown, {})), false, tier);
  }
  assert.equal(
    sharesProcess("tests/jobs/new_test.ts", expected("tests/jobs/new_test.ts", {})),
    true,
  );
});

Deno.test("files that mostly wait run beside modern_tasks_test; busy ones, chunks, unknown ones and itself do not", () => {
  const figures = {
    seconds: {},
    load: {
      "tests/e2e/waits_test.ts": BESIDE_EXCLUSIVE_LOAD,
      "tests/e2e/busy_test.ts": BESIDE_EXCLUSIVE_LOAD + 0.01,
      "tests/e2e/small_test.ts": 0.05,
      "node:tests/e2e/waits_test.ts": 0.5,
      [EXCLUSIVE[0]!]: 0.01,
    },
  };
  assert.equal(besideExclusive(["tests/e2e/waits_test.ts"], "", figures), true);
  assert.equal(besideExclusive(["tests/e2e/busy_test.ts"], "", figures), false);
  assert.equal(besideExclusive(["tests/e2e/new_test.ts"], "", figures), false);
  assert.equal(besideExclusive(["tests/e2e/waits_test.ts"], "node:", figures), false);
  assert.equal(
    besideExclusive(["tests/e2e/small_test.ts", "tests/e2e/waits_test.ts"], "", figures),
    false,
  );
  assert.equal(besideExclusive([EXCLUSIVE[0]!], "", figures), false);
  // With the figures checked in, some files, each a job of its own, keep the other core busy
  // while it runs.
  const recorded = readDurations();
  const beside = Object.keys(recorded.seconds).filter((f) =>
    !f.includes(":") && !sharesProcess(f, expected(f, recorded.seconds)) &&
    besideExclusive([f], "", recorded)
  );
  assert.ok(beside.length >= 3, `beside modern_tasks_test: ${beside.join(", ")}`);
});

Deno.test("a TMPDIR inside a system tree, or one that does not exist, stops the run at once with what to do", () => {
  // The tests' projects live in the run's temporary folders; the server refuses a delegate a
  // directory under /dev (its system directory rule), so TMPDIR=/dev/shm failed 24 jobs.
  assert.match(tempRootRefusal("/dev/shm") ?? "", /system directory "\/dev"/);
  assert.match(tempRootRefusal("/usr/local/tmp") ?? "", /system directory "\/usr"/);
  // A folder under /tmp, /var/tmp or a home is a project folder like any other.
  for (const fine of ["/tmp", "/var/tmp", "/home/u/tmp", "/private/var/folders/x/T"]) {
    assert.equal(tempRootRefusal(fine), undefined, fine);
  }
  // One small file of the Deno pass: without the checks, this run goes ahead and passes.
  const runWith = (tmp: string) =>
    spawnSync(Deno.execPath(), [
      "run",
      "-A",
      join(REPO, "scripts", "test.ts"),
      "--pass",
      "deno",
      "tests/agents/agent_test.ts",
    ], {
      cwd: REPO,
      env: { ...Deno.env.toObject(), TMPDIR: tmp },
      encoding: "utf8",
      timeout: 60_000,
    });
  // A TMPDIR that does not exist is named, with what to do, not thrown as a stack.
  const missing = runWith(join(tempDir("od-tiers-"), "no-such-folder"));
  assert.equal(missing.status, 2, missing.stderr);
  assert.match(
    missing.stderr,
    /test: the temporary folder .*no-such-folder \(TMPDIR\) cannot be used: /,
  );
  assert.match(missing.stderr, /Set TMPDIR to a folder that exists, such as \/tmp\./);
  const shm = "/dev/shm";
  if (!existsSync(shm) || !statSync(shm).isDirectory()) return;
  const run = runWith(shm);
  assert.equal(run.status, 2, run.stderr);
  assert.match(run.stderr, /test: the tests cannot make their folders in \/dev\/shm \(TMPDIR\)/);
  assert.match(run.stderr, /Set TMPDIR to a folder .* such as \/tmp/);
  assert.doesNotMatch(run.stderr, /at once|jobs \(/, "jobs started");
});

Deno.test("test runner: the type check starts among the first jobs, as its uncached cost says", () => {
  // Its recorded figure is a cached check's (2 s), which put it last; on a clean clone it took
  // 13.6-15.1 s there, with one core busy. With one job at a time, the order is the pool's.
  const run = spawnSync(Deno.execPath(), [
    "run",
    "-A",
    join(REPO, "scripts", "test.ts"),
    "--pass",
    "deno",
    "tests/agents/agent_test.ts",
    // Recorded at 2.6 s: longer than the cached check's figure.
    "tests/backends/third_kind_test.ts",
  ], {
    cwd: REPO,
    env: { ...Deno.env.toObject(), DENO_JOBS: "1" },
    encoding: "utf8",
    timeout: 120_000,
  });
  assert.equal(run.status, 0, run.stdout + run.stderr);
  // The runner reports each job's end on stderr.
  const ended = [...run.stderr.matchAll(/^── (.*): ok in /gm)].map((m) => m[1]);
  // Two jobs: the type check, and the two small files as one (3.2 s recorded together).
  assert.equal(ended.length, 2, run.stderr);
  assert.equal(ended[0], "type check", run.stderr);
});
