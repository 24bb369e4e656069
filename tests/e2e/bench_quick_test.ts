/**
 * Every bench in bench/ runs as checked in (issue 34, item 5): each in its quick mode
 * (OD_BENCH_QUICK=1, bench/support/common.ts), its smallest case once, as a process of its own
 * the way a user runs it. A bench that no longer starts, throws, or no longer prints its figure
 * fails here instead of rotting until someone needs its numbers. Its figures are not checked:
 * in quick mode they mean nothing.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { REPO } from "../support/harness.ts";
import { headerOf } from "../../bench/support/help.ts";

/** What each bench prints once it has measured: its figure's line, as a pattern. */
const PRINTS: Record<string, RegExp> = {
  "backend_death_bench.ts": /^ {2}native +median [\d.]+ s/m,
  "cancel_bench.ts": /Bash-started processes gone: median \d+ ms[\s\S]*ignores SIGTERM/,
  "claims_bench.ts": /^all +precision/m,
  "claude_process_bench.ts": /SIGTERM to exit +median [\d.]+ s/,
  "first_request_bench.ts": /^native +\d+ \(/m,
  "gate_hook_bench.ts": /gate off: the hook reads the setting and exits +[\d.]+ s/,
  // The figure is padded to a width: "first turn  63.9 ms", "first turn 106.2 ms", "  1.52 s".
  "git_secrets_bench.ts": /1,000 objects, no secret +first turn +[\d.]+ m?s,/,
  "hostile_backend_bench.ts": /^replies +peak RSS turn/m,
  "job_start_bench.ts": /start -> turn running .* median [\d.]+ ms/,
  "listing_bench.ts": /^ +100 +[\d.]+ +[\d.]+ +[\d.]+ +\d+$/m,
  "native_context_bench.ts": /prompt tokens sent in total: \d+/,
  "native_overhead_bench.ts": /median [\d.]+ ms over 1 runs/,
  "native_tokens_bench.ts": /ratio native\/claude:/,
  "pool_bench.ts": /^header x-dynamo-session-id +[\d.]+s/m,
  "review_panel_bench.ts": /panel of 3 reviewers: median [\d.]+ s/,
  "sandbox_masks_bench.ts": /10 masks: [\d.]+ s/,
  "startup_bench.ts": /ollama-delegate, 20 jobs +[\d.]+ +ratio/,
  "status_bench.ts": /delegate_status with 2 jobs running, 10 calls/,
  "stream_memory_bench.ts": /state completed[\s\S]*kept by the server: [\d.-]+ MiB/,
  "suite_bench.ts":
    /^ +1 base .* deno \d+\/0\n[\s\S]*head over base, wall time per pair: [\d.]+; mean [\d.]+$/m,
  "text_calls_bench.ts": /claude engine \(real Claude Code\): of 1 replies with a call/,
  "tree_cost_bench.ts":
    /1,000 files +after \(both engines\): +\d+ ms.*under Node +\d+ ms[\s\S]*git stores, 120 nested projects: \d+ ms a turn/,
  "unread_hook_bench.ts": /hook, one unread job \(npx from its cache\) +median [\d.]+ ms/,
};

/** Text a bench prints when a part of it failed but the bench went on. */
const FAILED = /bench failed|not measured, .* failed|Error:/;

function run(file: string, args: string[] = []): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ["run", "-A", "--unstable-no-legacy-abort", join(REPO, "bench", file), ...args],
      { cwd: REPO, env: { ...process.env, OD_BENCH_QUICK: "1", NO_COLOR: "1" } },
    );
    let out = "";
    child.stdout.on("data", (c: Uint8Array) => out += new TextDecoder().decode(c));
    child.stderr.on("data", (c: Uint8Array) => out += new TextDecoder().decode(c));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, out }));
  });
}

const benches = readdirSync(join(REPO, "bench")).filter((f) => f.endsWith("_bench.ts")).sort();

/**
 * Benches at once. Most of a bench's time is spent waiting (on a server's start, a delegate, a
 * timer), so a few run side by side while the tests take them in order: the test of a bench
 * starts it and the next ones. Run one by one they took about five minutes.
 */
const AT_ONCE = 3;
const runs = new Map<string, ReturnType<typeof run>>();
function started(file: string): ReturnType<typeof run> {
  const at = benches.indexOf(file);
  for (const next of benches.slice(at, at + AT_ONCE)) {
    if (!runs.has(next)) runs.set(next, run(next));
  }
  return runs.get(file)!;
}

Deno.test("every bench in bench/ has a quick run here", () => {
  assert.deepEqual(benches, Object.keys(PRINTS).sort());
});

Deno.test("every bench answers --help with its header: support/help.ts is its first import", async () => {
  for (const file of benches) {
    const source = readFileSync(join(REPO, "bench", file), "utf8");
    const first = /^import\s[^;]*;/m.exec(source)?.[0];
    assert.equal(first, 'import "./support/help.ts";', `${file}'s first import`);
    assert.ok(headerOf(source).length > 80, `${file} has a header that says what it measures`);
  }
  // One run, of a bench that would otherwise start servers and Claude Code.
  const { code, out } = await run("startup_bench.ts", ["--help"]);
  assert.equal(code, 0, out);
  assert.equal(
    out.trim(),
    headerOf(readFileSync(join(REPO, "bench", "startup_bench.ts"), "utf8")),
  );
});

/** Why a bench's run does not count, or nothing when it does. */
function fault(file: string, code: number | null, out: string): string | undefined {
  if (code !== 0) return `exited with ${code}`;
  if (!(PRINTS[file] ?? /$^/).test(out)) return "printed no figure";
  if (FAILED.test(out)) return "reported a failure";
  return undefined;
}

for (const file of benches) {
  // The benches after this one may still be running when it ends (AT_ONCE).
  Deno.test({
    name: `bench runs as checked in: ${file}`,
    sanitizeOps: false,
    sanitizeResources: false,
  }, async () => {
    let { code, out } = await started(file);
    if (fault(file, code, out)) {
      // Run beside two others on a loaded machine, a bench may miss a deadline of its own. It
      // gets one more run alone; a bench that is broken fails that one too. The first failure
      // stays in this test's output, so a flaky bench is seen, not hidden.
      console.log(`${file}: ${fault(file, code, out)}\n${out.slice(-3000)}\n(run again, alone)`);
      ({ code, out } = await run(file));
    }
    assert.equal(code, 0, `${file} exited with ${code}:\n${out.slice(-3000)}`);
    assert.match(out, PRINTS[file] ?? /$^/, `${file} printed no figure:\n${out.slice(-3000)}`);
    assert.doesNotMatch(out, FAILED, `${file} reported a failure:\n${out.slice(-3000)}`);
  });
}
