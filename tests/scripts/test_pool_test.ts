/**
 * The test suite's job pool (scripts/test_pool.ts): longest first, a job that others wait on
 * before its cost says, a need that fails skips what waits on it, output held per job, and the
 * counts read from deno's summary line.
 */
import assert from "node:assert/strict";
import { failureDigest, type PoolJob, runPool, testCounts } from "../../scripts/test_pool.ts";

function sh(label: string, cost: number, script: string, extra: Partial<PoolJob> = {}): PoolJob {
  return { label, pass: "t", cost, command: () => ({ argv: ["sh", "-c", script] }), ...extra };
}

Deno.test("pool: with one slot, jobs start longest first; every one reports", async () => {
  const jobs = [sh("short", 1, "echo s"), sh("long", 9, "echo l"), sh("middle", 5, "echo m")];
  const reported: string[] = [];
  const results = await runPool(jobs, 1, (r) => reported.push(r.job.label));
  assert.deepEqual(results.map((r) => r.job.label), ["long", "middle", "short"]);
  assert.deepEqual(reported, ["long", "middle", "short"]);
  assert.deepEqual(results.map((r) => r.output.trim()), ["l", "m", "s"]);
  assert.ok(results.every((r) => r.status === "ok"));
});

Deno.test("pool: a cheap job that a long one waits on starts before a medium one", async () => {
  let seen = "";
  const install = sh("install", 1, "echo path=/opt/x", {
    done(output) {
      seen = /path=(\S+)/.exec(output)![1]!;
    },
  });
  const after: PoolJob = {
    label: "uses install",
    pass: "t",
    cost: 10,
    needs: [install],
    command: () => ({ argv: ["sh", "-c", `echo using ${seen}`] }),
  };
  const results = await runPool([sh("medium", 5, "echo m"), after, install], 1, () => {});
  assert.deepEqual(results.map((r) => r.job.label), ["install", "uses install", "medium"]);
  assert.equal(results[1]!.output.trim(), "using /opt/x");
});

Deno.test("pool: a failed need skips what waits on it; the rest still runs and fails alone", async () => {
  const broken = sh("broken", 1, "echo out; echo err >&2; exit 3");
  const results = await runPool(
    [broken, sh("waits", 5, "echo never", { needs: [broken] }), sh("other", 2, "echo fine")],
    2,
    () => {},
  );
  const by = new Map(results.map((r) => [r.job.label, r]));
  assert.equal(by.get("broken")!.status, "failed");
  assert.match(by.get("broken")!.output, /out\n[\s\S]*err\n[\s\S]*exited with 3/);
  assert.equal(by.get("waits")!.status, "skipped");
  assert.equal(by.get("waits")!.reason, "broken failed");
  assert.equal(by.get("waits")!.output, "");
  assert.equal(by.get("other")!.status, "ok");
});

Deno.test("pool: a job whose result cannot be used fails; one whose program is missing fails", async () => {
  const results = await runPool(
    [
      sh("no path", 1, "echo nothing", {
        done() {
          throw new Error("printed no path");
        },
      }),
      {
        label: "missing",
        pass: "t",
        cost: 1,
        command: () => ({ argv: ["/nonexistent/program"] }),
      },
    ],
    2,
    () => {},
  );
  for (const r of results) assert.equal(r.status, "failed", r.job.label);
  assert.match(results.find((r) => r.job.label === "no path")!.output, /printed no path/);
});

Deno.test("pool: jobs run side by side up to the slots", async () => {
  // Each waits for a file the other writes: one slot would never finish them.
  const dir = Deno.makeTempDirSync();
  const a = sh("a", 1, `touch ${dir}/a; while [ ! -e ${dir}/b ]; do sleep 0.05; done`);
  const b = sh("b", 1, `touch ${dir}/b; while [ ! -e ${dir}/a ]; do sleep 0.05; done`);
  const results = await runPool([a, b], 2, () => {});
  assert.ok(results.every((r) => r.status === "ok"));
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("testCounts: deno's summary line, coloured or not; nothing when there is none", () => {
  assert.deepEqual(
    testCounts(
      "x ... ok\n\n\x1b[0m\x1b[32mok\x1b[0m | 12 passed (3 steps) | 0 failed | 2 ignored \x1b[0m(4s)\n",
    ),
    { passed: 12, failed: 0, ignored: 2 },
  );
  assert.deepEqual(testCounts("FAILED | 3 passed | 1 failed (1 step) (2s)\n"), {
    passed: 3,
    failed: 1,
    ignored: 0,
  });
  assert.equal(testCounts("error: Module not found\n"), undefined);
});

Deno.test("failureDigest: a failed run's ERRORS part without colour, capped; the tail when there is none", () => {
  const run = "running 2 tests\nx ... \x1b[31mFAILED\x1b[0m\n\n\x1b[41m ERRORS \x1b[0m\n\n" +
    "x => ./a_test.ts:3:1\n\x1b[31merror\x1b[0m: AssertionError: bench printed no figure\n" +
    "line 1\nline 2\n\n\x1b[41m FAILURES \x1b[0m\n\nx => ./a_test.ts:3:1\n\nFAILED | 1 passed | 1 failed\n";
  const digest = failureDigest(run);
  assert.match(digest, /^x => \.\/a_test\.ts:3:1\nerror: AssertionError: bench printed no figure/);
  assert.doesNotMatch(digest, /FAILURES|running 2 tests/);
  assert.ok(!digest.includes("\x1b"), "colour codes are left");
  const capped = failureDigest(run, 2);
  assert.equal(capped.split("\n").length, 3);
  assert.match(capped, /more lines above in the log/);
  assert.equal(failureDigest("a\nb\nerror: Module not found\n", 2), "b\nerror: Module not found");
});

Deno.test("pool: by load, light jobs run beyond the minimum; heavy ones wait for room", async () => {
  // Three jobs that each wait (2 s at most) until all three have started: they pass only when
  // they run side by side.
  const together = (dir: string, load: number) =>
    ["a", "b", "c"].map((name) =>
      sh(
        name,
        1,
        `touch ${dir}/${name}; i=0; while [ ! -e ${dir}/a ] || [ ! -e ${dir}/b ] || ` +
          `[ ! -e ${dir}/c ]; do i=$((i+1)); [ $i -gt 40 ] && exit 1; sleep 0.05; done`,
        { load },
      )
    );
  const light = Deno.makeTempDirSync();
  const slots = { min: 1, max: 3, cores: 1 };
  const ran = await runPool(together(light, 0.2), slots, () => {});
  assert.deepEqual(ran.map((r) => r.status), ["ok", "ok", "ok"]);
  // Busy ones (a core each) run one at a time: the first gives up waiting for the others.
  const heavy = Deno.makeTempDirSync();
  const alone = await runPool(together(heavy, 1), slots, () => {});
  assert.equal(alone[0]!.status, "failed");
  for (const dir of [light, heavy]) Deno.removeSync(dir, { recursive: true });
});

Deno.test("pool: measureCpu reports the CPU time of the job's processes and keeps its output", async () => {
  const [busy] = await runPool(
    [sh("busy", 1, "echo start; i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; echo end")],
    1,
    () => {},
    true,
  );
  assert.equal(busy!.status, "ok");
  assert.equal(busy!.output, "start\nend\n");
  assert.ok(
    busy!.cpuSeconds! > 0.1 && busy!.cpuSeconds! <= busy!.seconds + 0.05,
    JSON.stringify(busy),
  );
  const [failed] = await runPool([sh("f", 1, "echo x; exit 4")], 1, () => {}, true);
  assert.equal(failed!.status, "failed");
  assert.match(failed!.output, /^x\n\n\(sh exited with 4\)\n$/);
  assert.ok(failed!.cpuSeconds !== undefined);
});

Deno.test("pool: an exclusive job runs first, with only a job marked besideExclusive beside it", async () => {
  // Each job leaves a mark while it runs. The exclusive one fails if it sees another's than the
  // build's (build.on), and it and the build each wait for the other's mark: against a pool that
  // runs nothing beside an exclusive job, both fail.
  const dir = Deno.makeTempDirSync();
  const busy = (name: string) =>
    sh(name, 5, `touch ${dir}/${name}.on; sleep 0.3; rm ${dir}/${name}.on`);
  const others = `ls ${dir} | grep -Ev '^(build|x)\\.on$' | grep -q '\\.on$'`;
  const waitFor = (mark: string) =>
    `i=0; while [ ! -e ${dir}/${mark} ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done; ` +
    `[ -e ${dir}/${mark} ] || exit 1`;
  const exclusive = sh(
    "exclusive",
    1,
    [
      `${others} && exit 1`,
      `touch ${dir}/x.on`,
      waitFor("build.on"),
      "sleep 0.2",
      `${others} && exit 1`,
      `rm ${dir}/x.on`,
    ].join("; "),
    { exclusive: true },
  );
  const beside = sh(
    "beside",
    2,
    `touch ${dir}/build.on; ${waitFor("x.on")}; sleep 0.3; rm ${dir}/build.on`,
    { besideExclusive: true },
  );
  const results = await runPool([busy("a"), exclusive, busy("b"), beside, busy("c")], 4, () => {});
  assert.ok(
    results.every((r) => r.status === "ok"),
    JSON.stringify(results.map((r) => [r.job.label, r.status])),
  );
  // The cheapest job, yet started first on the empty pool rather than after a drain at the end.
  assert.deepEqual(results.slice(0, 2).map((r) => r.job.label).sort(), ["beside", "exclusive"]);
  Deno.removeSync(dir, { recursive: true });
});
