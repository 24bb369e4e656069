/**
 * scripts/capture_jobs.ts, run as `deno task capture` runs it: a real server, real jobs on
 * the emulator, the real CLI on a pseudo-terminal. Its pictures show what the console shows,
 * and the ones in docs/images are what the code prints today (apart from ids and times).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { comparableText, samePicture } from "../../scripts/capture_jobs.ts";
import { PALETTE } from "../../scripts/ansi_terminal.ts";
import { REPO, tempDir } from "../support/harness.ts";

const PICTURES = ["jobs.svg", "jobs_tail.svg"];

Deno.test({
  name: "capture_jobs: a real run draws the jobs table and a tail, as docs/images shows them",
  // The e2e suite's needs: bubblewrap for the native engine's Bash, a pseudo-terminal.
  ignore: Deno.build.os !== "linux",
  fn() {
    const out = tempDir("od-capture-test-");
    try {
      check(out);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  },
});

/** Runs the capture into `out` and checks its pictures. */
function check(out: string): void {
  const run = spawnSync(
    "deno",
    ["task", "capture", "--out", out],
    { cwd: REPO, encoding: "utf8", timeout: 120_000, env: { ...Deno.env.toObject() } },
  );
  assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`);
  const [jobs, tail] = PICTURES.map((name) => readFileSync(join(out, name), "utf8")) as [
    string,
    string,
  ];

  // The throwaway HOME is shown as ~, never as its temporary path.
  for (const svg of [jobs, tail]) {
    assert.doesNotMatch(svg, /od-capture-|\/tmp\//);
    assert.match(svg, /^<svg [^]*<\/svg>\n$/);
  }
  // The table: every state in its colour, both engines, the branch of the worktree job.
  const table = comparableText(jobs);
  assert.equal(table[0], "$ ollama-delegate jobs");
  for (const [state, colour] of [["running", 3], ["failed", 1], ["completed", 2]] as const) {
    assert.match(jobs, new RegExp(`fill="${PALETTE[colour]}">${state}\\s*</tspan>`), state);
  }
  assert.ok(table.some((l) => / claude qwen3-coder:30b /.test(l)), table.join("\n"));
  assert.ok(table.some((l) => /cwd ~\/project branch delegate\/<id>/.test(l)), table.join("\n"));
  assert.equal(
    table.at(-1),
    "6 of 6 jobs in 5 conversations, newest first. State dir: ~/.ollama-mcp/jobs",
  );
  // The tail: the job's activity as it ran, its end, then its answer.
  const shown = comparableText(tail).join("\n");
  assert.match(
    shown,
    /^\$ ollama-delegate jobs tail <id>\n--- job <uuid> \(native, qwen3-coder:30b\): running ---\n\[tool\] Grep/,
  );
  assert.match(shown, /\[tool\] Bash: grep -n timeoutMs[^]*\[tool\] Read: src\/sync\.ts/);
  assert.match(
    shown,
    /--- completed after <time> · 3 tool calls · tokens in <tokens> \/ out <tokens> · cost unknown ---\nwithRetry has two callers:/,
  );
  assert.doesNotMatch(shown, /tool calls so far/, "the live status line is cleared at the end");

  // What the README shows is what the code prints now.
  for (const [i, name] of PICTURES.entries()) {
    const committed = readFileSync(join(REPO, "docs", "images", name), "utf8");
    assert.ok(
      samePicture(committed, [jobs, tail][i]!),
      `docs/images/${name} no longer shows what the console prints: run deno task capture ` +
        `and commit the pictures.\n--- committed\n${comparableText(committed).join("\n")}\n` +
        `--- now\n${comparableText([jobs, tail][i]!).join("\n")}`,
    );
  }
}
