/**
 * `jobs tail` with its output on a terminal (a pseudo-terminal): the live status line is
 * there with and without NO_COLOR (which removes colour only), and `--no-status` removes it.
 */
import assert from "node:assert/strict";
import { appendFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { selfIdentity } from "../../src/platform/process_identity.ts";
import { until } from "../support/harness.ts";
import { baseRecord, cliArgv, cliEnv, writeJob } from "./jobs_support.ts";
import { PTY_UNSUPPORTED, startOnPty } from "./pty_support.ts";

const ESC = "\u001b";
const SGR = new RegExp(`${ESC}\\[[\\d;]*m`);
const CLEAR_LINE = `\r${ESC}[2K`;
const STATUS = /running \d+(\.\d+)?s · 0 tool calls so far/;

/**
 * Tails a running job (owned by this live test process) on a terminal, waits for `ready` on
 * the terminal, then ends the job; returns what the terminal showed.
 */
async function tailOnTerminal(
  args: string[],
  env: Record<string, string>,
  ready: (output: string) => boolean,
  job: { engine?: "native" | "claude"; started?: (dir: string) => void } = {},
): Promise<string> {
  const ctx = cliEnv({ env });
  const id = "7e770000-0000-4000-8000-000000000001";
  const now = Date.now();
  const live = baseRecord(id, "57000000-0000-4000-8000-000000000001", {
    engine: job.engine ?? "native",
    state: "running",
    createdAt: now,
    startedAt: now,
    endedAt: undefined,
    owner: await selfIdentity(),
  });
  const dir = writeJob(ctx.stateDir, live);
  const { command, args: argv } = cliArgv(["jobs", "tail", id, ...args]);
  const run = startOnPty([command, ...argv], { tty: ["stdout"], env: ctx.env, cwd: ctx.cwd });
  try {
    if (job.started) {
      await until(() => run.output().includes("--- job "), 60_000, "the tail's first line");
      job.started(dir);
    }
    await until(() => ready(run.output()), 60_000, "the tail on the terminal");
    writeFileSync(join(dir, "result.txt"), "finished on a terminal");
    writeJob(ctx.stateDir, { ...live, state: "completed", endedAt: Date.now() });
    const end = await run.done;
    assert.equal(end.code, 0, end.stderr + end.output);
    assert.equal(end.stdout, "", "the CLI's stdout is the terminal");
    assert.match(end.output, /finished on a terminal/);
    return end.output;
  } finally {
    run.child.kill();
    await run.done.catch(() => {});
  }
}

Deno.test({
  name: "jobs tail on a terminal: NO_COLOR removes colour, not the live status line",
  ignore: PTY_UNSUPPORTED !== undefined,
  async fn() {
    const coloured = await tailOnTerminal([], {}, (out) => STATUS.test(out));
    assert.ok(coloured.includes(CLEAR_LINE), "the status line is redrawn in place");
    assert.match(coloured, SGR, "colour on a terminal without NO_COLOR");

    const plain = await tailOnTerminal([], { NO_COLOR: "1" }, (out) => STATUS.test(out));
    assert.match(plain, STATUS);
    assert.ok(plain.includes(CLEAR_LINE), "the status line is redrawn in place");
    assert.doesNotMatch(plain, SGR, "no colour with NO_COLOR");
  },
});

Deno.test({
  name: "jobs tail --no-status: no live status line on a terminal",
  ignore: PTY_UNSUPPORTED !== undefined,
  async fn() {
    let seenAt = 0;
    const out = await tailOnTerminal(["--no-status"], {}, (text) => {
      // Long enough after the header for several status redraws, had there been any.
      if (!text.includes("--- job ")) return false;
      seenAt ||= Date.now();
      return Date.now() - seenAt > 1500;
    });
    assert.doesNotMatch(out, /so far/);
    assert.ok(!out.includes(CLEAR_LINE), JSON.stringify(out));
    assert.match(out, SGR, "colour stays: --no-status is about the status line only");
  },
});

Deno.test({
  name:
    "jobs tail on a terminal: the status line names the call that runs; a claude one says its output comes at its end",
  ignore: PTY_UNSUPPORTED !== undefined,
  async fn() {
    // Native: its running commands' output shows as it comes, so no note.
    const native = await tailOnTerminal(
      [],
      { NO_COLOR: "1" },
      (out) => /Bash: npm test for [5-9]\.\ds/.test(out),
      {
        started: (dir) =>
          appendFileSync(
            join(dir, "transcript.jsonl"),
            `${
              JSON.stringify({
                kind: "tool_call",
                id: "c1",
                name: "Bash",
                input: { command: "npm test" },
              })
            }\n`,
          ),
      },
    );
    assert.match(native, /running [\d.]+s · 0 tool calls so far · Bash: npm test for \d/);
    assert.doesNotMatch(native, /output shows when it ends/);
    // Claude Code's stream holds a command's output only in its result.
    const claude = await tailOnTerminal(
      [],
      { NO_COLOR: "1" },
      (out) => out.includes("(output shows when it ends)"),
      {
        engine: "claude",
        started: (dir) =>
          appendFileSync(
            join(dir, "stream.jsonl"),
            `${
              JSON.stringify({
                type: "assistant",
                message: {
                  content: [{
                    type: "tool_use",
                    id: "t1",
                    name: "Bash",
                    input: { command: "npm test" },
                  }],
                },
              })
            }\n`,
          ),
      },
    );
    assert.match(claude, /\[tool\] Bash: npm test\r?\n/);
    assert.match(
      claude,
      /· Bash: npm test for [5-9]\.\ds \(output shows when it ends\)/,
    );
  },
});
