import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { bashTool } from "../../../../src/engines/native/tools/bash.ts";
import { BASH_KEEP_CHARS, type CommandRun } from "../../../../src/engines/native/tools/types.ts";
import { type Fixture, fixture } from "../tool_fixture.ts";
import { BWRAP, bwrapTest } from "../sandbox/support.ts";

const sandboxed = bashTool({ kind: "bwrap", bwrap: BWRAP });

interface Run {
  f: Fixture;
  runs: CommandRun[];
}

async function withRun(fn: (r: Run) => Promise<void>, signal?: AbortSignal): Promise<void> {
  const f = await fixture();
  const runs: CommandRun[] = [];
  f.ctx.commandRun = (run) => runs.push(run);
  if (signal) f.ctx.signal = signal;
  try {
    await fn({ f, runs });
  } finally {
    await f.cleanup();
  }
}

Deno.test("Bash: a refused runner records the refused command and returns the reason", async () => {
  await withRun(async ({ f, runs }) => {
    const tool = bashTool({
      kind: "refused",
      problem: {
        facts: "Bash is refused: bubblewrap (bwrap) is not installed",
        advice: "Install it",
      },
    });
    // The facts and the advice, in one sentence.
    const reason = "Bash is refused: bubblewrap (bwrap) is not installed. Install it";
    const marker = join(f.cwd, "ran.txt");
    const out = await tool.run({ command: `touch ${marker}` }, f.ctx);
    assert.deepEqual(out, { text: reason, isError: true });
    assert.deepEqual(runs, [{
      command: `touch ${marker}`,
      exitCode: null,
      durationMs: 0,
      refused: reason,
    }]);
    assert.ok(!existsSync(marker), "nothing ran");
  });
});

Deno.test("Bash: a missing or empty command is an error and records nothing", async () => {
  await withRun(async ({ f, runs }) => {
    for (const input of [{}, { command: "" }, { command: "   " }, { command: 42 }]) {
      const out = await sandboxed.run(input, f.ctx);
      assert.deepEqual(out, { text: "Error: command must be a non-empty string", isError: true });
    }
    assert.deepEqual(runs, []);
  });
});

Deno.test("Bash: the schema is compact and names the command as required", () => {
  assert.equal(sandboxed.name, "Bash");
  assert.equal(sandboxed.readOnly, false);
  assert.deepEqual(sandboxed.parameters.required, ["command"]);
  const size = JSON.stringify({ d: sandboxed.description, p: sandboxed.parameters }).length;
  assert.ok(size <= 1000, `${size} chars`);
});

bwrapTest(
  "Bash: records the real exit code and duration; output follows the exit line",
  async () => {
    await withRun(async ({ f, runs }) => {
      const out = await sandboxed.run({ command: "echo out; echo err >&2; exit 2" }, f.ctx);
      assert.equal(out.isError, true);
      assert.match(out.text, /^exit code 2 \(\d+\.\ds\)\n/);
      // Two pipes: the order in which stdout and stderr arrive is not fixed.
      assert.deepEqual(out.text.split("\n").slice(1).sort(), ["", "err", "out"]);
      assert.equal(runs.length, 1);
      const run = runs[0]!;
      assert.equal(run.command, "echo out; echo err >&2; exit 2");
      assert.equal(run.exitCode, 2);
      assert.equal(run.signal, null);
      assert.equal(run.refused, undefined);
      assert.ok(Number.isInteger(run.durationMs) && run.durationMs >= 0, String(run.durationMs));
    });
  },
);

bwrapTest(
  "Bash: success is not an error; silence says (no output); duration measured",
  async () => {
    await withRun(async ({ f, runs }) => {
      const out = await sandboxed.run({ command: "sleep 0.3" }, f.ctx);
      assert.equal(out.isError, false);
      assert.match(out.text, /^exit code 0 \(0\.\ds\)\n\(no output\)$/);
      assert.equal(runs[0]!.exitCode, 0);
      assert.ok(runs[0]!.durationMs >= 290, `${runs[0]!.durationMs} ms`);
    });
  },
);

bwrapTest(
  "Bash: a failure hidden by a later command or a pipe is reported beside the real exit code",
  async () => {
    await withRun(async ({ f, runs }) => {
      const command = "sh -c 'echo 3 tests failed; exit 1' | tee test.log; false; echo done";
      const out = await sandboxed.run({ command }, f.ctx);
      assert.equal(out.isError, false, "the exit code is the last command's: 0");
      assert.match(out.text, /^exit code 0 \(\d+\.\ds\)\n/);
      assert.ok(
        out.text.endsWith(
          "3 tests failed\ndone\n[masked failures: exit 1: sh -c 'echo 3 tests failed; exit 1'; " +
            "exit 1: false (these failed, but a later command set the exit code)]",
        ),
        out.text,
      );
      assert.equal(runs.length, 1);
      assert.equal(runs[0]!.command, command);
      assert.equal(runs[0]!.exitCode, 0);
      assert.deepEqual(runs[0]!.masked, [
        { command: "sh -c 'echo 3 tests failed; exit 1'", exitCode: 1 },
        { command: "false", exitCode: 1 },
      ]);
      assert.equal(await readFile(join(f.cwd, "test.log"), "utf8"), "3 tests failed\n");
    });
  },
);

bwrapTest("Bash: a failure that is the exit code is not reported as masked", async () => {
  await withRun(async ({ f, runs }) => {
    const out = await sandboxed.run({ command: "true; echo ok | cat; false" }, f.ctx);
    assert.equal(out.isError, true);
    assert.equal(out.text.split("\n").slice(1).join("\n"), "ok\n");
    assert.equal(runs[0]!.exitCode, 1);
    assert.equal(runs[0]!.masked, undefined);
    // In a pipe, only the parts before the last are hidden.
    const piped = await sandboxed.run({ command: "grep -q x /nonexistent | cat" }, f.ctx);
    assert.match(piped.text, /^exit code 0 /);
    assert.deepEqual(runs[1]!.masked, [{ command: "grep -q x /nonexistent", exitCode: 2 }]);
  });
});

bwrapTest("Bash: runs in the job's cwd, and writes there reach the project", async () => {
  await withRun(async ({ f }) => {
    const out = await sandboxed.run({ command: "pwd && echo built > out.txt" }, f.ctx);
    assert.equal(out.isError, false, out.text);
    assert.ok(out.text.includes(`\n${f.cwd}\n`), out.text);
    assert.equal(await readFile(join(f.cwd, "out.txt"), "utf8"), "built\n");
  });
});

bwrapTest("Bash: long output keeps the last 20,000 chars and says how much was cut", async () => {
  await withRun(async ({ f }) => {
    const out = await sandboxed.run(
      { command: `head -c ${BASH_KEEP_CHARS + 5000} /dev/zero | tr '\\0' z; printf END` },
      f.ctx,
    );
    const lines = out.text.split("\n");
    assert.match(lines[0]!, /^exit code 0 /);
    assert.equal(
      lines[1],
      `[output cut: the first 5003 chars were dropped; last ${BASH_KEEP_CHARS} kept]`,
    );
    assert.equal(lines[2]!.length, BASH_KEEP_CHARS);
    assert.ok(lines[2]!.endsWith("zzEND"));
  });
});

bwrapTest("Bash: the timeout input kills the command and says so", async () => {
  await withRun(async ({ f, runs }) => {
    const started = performance.now();
    const out = await sandboxed.run({ command: "sleep 20", timeout: 300 }, f.ctx);
    assert.ok(performance.now() - started < 5000);
    assert.equal(out.isError, true);
    assert.match(out.text, /^Timed out after 0\.3s and was killed \(/);
    assert.equal(runs[0]!.exitCode, null);
  });
});

bwrapTest("Bash: a cancelled job stops the command and says so", async () => {
  const ac = new AbortController();
  await withRun(async ({ f, runs }) => {
    setTimeout(() => ac.abort(), 200);
    const started = performance.now();
    const out = await sandboxed.run({ command: "sleep 20" }, f.ctx);
    assert.ok(performance.now() - started < 5000);
    assert.equal(out.isError, true);
    assert.match(out.text, /^Stopped: the job was cancelled \(/);
    assert.equal(runs.length, 1);
  }, ac.signal);
});
