import assert from "node:assert/strict";
import { commandsText, filesText } from "../../src/jobs/evidence_words.ts";
import type { JobRecord } from "../../src/jobs/record.ts";

type Run = NonNullable<JobRecord["commands"]>[number];

const run = (command: string, exitCode: number | null, masked?: Array<[string, number]>): Run => ({
  command,
  exitCode,
  durationMs: 5,
  ...(masked ? { masked: masked.map(([c, e]) => ({ command: c, exitCode: e })) } : {}),
});

Deno.test("commandsText: every command with its exit code, in order, after the counts", () => {
  assert.equal(
    commandsText([run("npm test", 2), run("npm run lint", 0), run("ls", 0)]),
    "3 run, 1 failed: npm test (exit 2), npm run lint (exit 0), ls (exit 0)",
  );
  assert.equal(commandsText([run("ls", 0)]), "1 run: ls (exit 0)");
});

Deno.test("commandsText: masked failures are said beside the command that hid them", () => {
  assert.equal(
    commandsText([run("npm test", 2), run("false; true", 0, [["false", 1]]), run("ls", 0)]),
    "3 run, 1 failed, 1 masked failure: npm test (exit 2), false; true (exit 0; masked exit 1: " +
      "false), ls (exit 0)",
  );
  assert.equal(
    commandsText([
      run("npm test | tee log; a; b; c", 0, [["npm test", 1], ["a", 2], ["b", 3], ["c", 4]]),
      { ...run("for f in *; do false; done; true", 0, [["false", 1]]), maskedMore: 30 },
    ]),
    "2 run, 35 masked failures: npm test | tee log; a; b; c (exit 0; masked exit 1: npm test, " +
      "exit 2: a, +2 more), for f in *; do false; done; true (exit 0; masked exit 1: false, " +
      "+30 more)",
  );
});

Deno.test("commandsText: a command without an exit code (ended with its turn), a signal, a refusal", () => {
  assert.equal(
    commandsText([run("sleep 100", null)]),
    "1 run, 1 failed: sleep 100 (no exit code)",
  );
  assert.equal(
    commandsText([{ ...run("yes", null), signal: "SIGKILL" }]),
    "1 run, 1 failed: yes (signal SIGKILL)",
  );
  assert.equal(
    commandsText([run("ls", 0), { ...run("rm -rf x", null), refused: "the sandbox is off" }]),
    "1 run, 1 refused: ls (exit 0), rm -rf x (refused)",
  );
});

Deno.test("commandsText: the list is capped, and a failure past the cap is still named", () => {
  const commands = Array.from({ length: 12 }, (_, i) => run(`step ${i}`, 0));
  commands[8] = run("make check", 1);
  commands[10] = run("npm t | tee l", 0, [["npm t", 1]]);
  assert.equal(
    commandsText(commands),
    "12 run, 1 failed, 1 masked failure: step 0 (exit 0), step 1 (exit 0), step 2 (exit 0), " +
      "step 3 (exit 0), step 4 (exit 0), +7 more, among them: make check (exit 1), npm t | tee l " +
      "(exit 0; masked exit 1: npm t)",
  );
  // All clean past the cap: only counted.
  assert.equal(
    commandsText(Array.from({ length: 7 }, (_, i) => run(`s${i}`, 0))),
    "7 run: s0 (exit 0), s1 (exit 0), s2 (exit 0), s3 (exit 0), s4 (exit 0), +2 more",
  );
  // Many failures past the cap: the first few, then an ellipsis.
  const failing = Array.from({ length: 20 }, (_, i) => run(`f${i}`, 1));
  assert.match(
    commandsText(failing),
    /^20 run, 20 failed: f0 \(exit 1\), .*f4 \(exit 1\), \+15 more, among them: f5 \(exit 1\), .*f9 \(exit 1\), …$/,
  );
});

Deno.test("commandsText: long commands are shortened, and what they carry stays on the line", () => {
  const long = `npm test -- ${"--grep x ".repeat(20)}`;
  const text = commandsText([run(long, 0), run("printf 'a\nstate:      completed'\u001b[2J", 1)]);
  assert.equal(text.split("\n").length, 1, text);
  // deno-lint-ignore no-control-regex
  assert.doesNotMatch(text, /[\u0000-\u001f]/);
  assert.match(text, /^2 run, 1 failed: npm test -- --grep x .{30,}… \(exit 0\), printf 'a\\n/);
  assert.ok(text.includes("\\033[2J (exit 1)"), text);
});

const record = (over: Partial<JobRecord>): JobRecord => ({
  format: 1,
  id: "11111111-2222-4333-8444-555555555555",
  sessionId: "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee",
  turn: 1,
  engine: "native",
  model: "m",
  cwd: "/work/proj",
  state: "completed",
  createdAt: 0,
  promptPreview: "p",
  options: { permissionMode: "acceptEdits", addDirs: [] },
  sessionCreated: true,
  toolCalls: 1,
  permissionDenials: [],
  ...over,
});

Deno.test("filesText: none only when the server looked; nothing when it did not", () => {
  assert.equal(filesText(record({})), undefined);
  assert.equal(filesText(record({ changesTracked: true })), "none");
  assert.equal(
    filesText(record({ changesTracked: true, changedFilesPartial: "a walk stopped" })),
    "none seen; incomplete: a walk stopped",
  );
  assert.equal(
    filesText(record({ changesTracked: true, changedFiles: ["/work/proj/a b.ts", "/else/x"] })),
    "2 changed: a b.ts, /else/x",
  );
});
