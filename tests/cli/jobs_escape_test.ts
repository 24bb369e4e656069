/**
 * The `jobs` console prints what delegates and backends wrote (model names, error texts, file
 * names, tool calls, answers) to a terminal: none of it may reach the terminal as a control
 * sequence or as a line that passes for the console's own.
 */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { baseRecord, cliEnv, runCli, writeJob } from "./jobs_support.ts";

const ESC = "\u001b";
const BEL = "\u0007";
const FORGE = "\nstate       completed";
const ID = "e5c00000-0000-4000-8000-000000000001";
const SID = "5e500000-0000-4000-8000-000000000001";

Deno.test("jobs show, tail and the table escape a backend's model name and error, and a delegate's words", async () => {
  const ctx = cliEnv();
  const dir = writeJob(
    ctx.stateDir,
    baseRecord(ID, SID, {
      engine: "native",
      state: "failed",
      model: `m${ESC}]0;title${BEL}${FORGE}`,
      cwd: `/work/odd${FORGE}`,
      toolCalls: 1,
      errorText: `backend_refused: HTTP 400: no${FORGE}${ESC}[2J`,
      changedFiles: [`/work/odd${FORGE}/f${ESC}[31m.txt`],
      commands: [{ command: `npm test${ESC}[2J${FORGE}`, exitCode: 2, durationMs: 5 }],
      promptPreview: `go ${ESC}[2J`,
    }),
    { result: `partial ${ESC}[2J\rline${FORGE}` },
  );
  const entries = [
    { kind: "text", text: `thinking ${ESC}[1A\u2028aloud` },
    { kind: "tool_call", id: "c1", name: `Bash${ESC}[2J`, input: { command: `ls ${ESC}[31m` } },
    // A running command's output, as it came: a progress bar's CRs and a title sequence.
    { kind: "output", id: "c1", text: `50%\r100% ${ESC}]0;t${BEL}${FORGE}\n` },
    { kind: "tool_result", id: "c1", text: `out${ESC}]0;x${BEL}`, isError: false },
  ];
  writeFileSync(join(dir, "transcript.jsonl"), entries.map((e) => JSON.stringify(e)).join("\n"));

  const show = await runCli(ctx, ["jobs", "show", ID]);
  const tail = await runCli(ctx, ["jobs", "tail", ID]);
  const table = await runCli(ctx, ["jobs"]);
  for (const [name, run] of [["show", show], ["tail", tail], ["table", table]] as const) {
    assert.ok(
      // deno-lint-ignore no-control-regex
      !/[\u001b\u0007\r\u2028]/.test(run.stdout),
      `jobs ${name}: ${JSON.stringify(run.stdout)}`,
    );
  }
  assert.equal(show.code, 0, show.stderr);
  // The record's lines end where the prompt begins; the answer below may say anything.
  const fields = show.stdout.slice(0, show.stdout.indexOf("\n--- prompt"));
  assert.equal(fields.match(/^state /gm)?.length, 1, show.stdout);
  assert.match(show.stdout, /^model {7}m\\033\]0;title\\a\\nstate {7}completed$/m);
  assert.match(show.stdout, /^cwd {9}"\/work\/odd\\nstate {7}completed"$/m);
  assert.match(show.stdout, /^changed {5}"\/work\/odd\\nstate {7}completed\/f\\033\[31m\.txt"$/m);
  assert.match(
    show.stdout,
    /^commands {4}1 run, 1 failed: npm test\\033\[2J\\nstate {7}completed \(exit 2\)$/m,
  );
  assert.match(
    show.stdout,
    /^error {7}backend_refused: HTTP 400: no\\nstate {7}completed\\033\[2J$/m,
  );
  assert.match(show.stdout, /^partial \\033\[2J\\rline$/m);

  assert.equal(tail.code, 1, tail.stderr);
  assert.match(
    tail.stdout,
    /^--- job \S+ \(native, m\\033\]0;title\\a\\nstate {7}completed\): failed ---$/m,
  );
  assert.match(tail.stdout, /^\[text\] thinking \\033\[1A\\342\\200\\250aloud$/m);
  assert.match(tail.stdout, /^\[tool\] Bash\\033\[2J: ls \\033\[31m$/m);
  assert.match(tail.stdout, /^\[output\] 100% \\033\]0;t\\a\n\[output\] state {7}completed$/m);
  assert.match(tail.stdout, /^\[result\] out\\033\]0;x\\a$/m);
  assert.match(
    tail.stdout,
    /^error: backend_refused: HTTP 400: no\\nstate {7}completed\\033\[2J$/m,
  );

  assert.equal(table.code, 0, table.stderr);
  assert.match(table.stdout, /cwd "\/work\/odd\\nstate {7}completed"$/m);
  assert.match(table.stdout, / m\\033\]0;title\\a\\nstate {7}completed +1 /);
  assert.match(table.stdout, /go \\033\[2J$/m);
});
