/**
 * The traps that find failures a later command hides, run by the real bash through /bin/sh -c
 * as the sandbox runs commands. The exit code and the output must be what they were without
 * the traps; only the report is added.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import {
  maskedText,
  MAX_MASKED,
  takeMaskedReport,
  watchFailures,
} from "../../../../src/engines/native/tools/masked_failures.ts";

const hasBash = existsSync("/bin/bash") && Deno.build.os !== "windows";

function run(command: string) {
  const watched = watchFailures(command)!;
  const r = spawnSync("/bin/sh", ["-c", watched.command], { encoding: "utf8" });
  const report = takeMaskedReport(r.stdout + r.stderr, watched);
  return { code: r.status, ...report };
}

/** [command, exit code, masked failures as "exit: command"]. */
const CASES: Array<[string, number, string[]]> = [
  ["false; true", 0, ["1: false"]],
  ["true; false", 1, []],
  ["false; false; false", 1, ["1: false", "1: false"]],
  ["(exit 3) | cat; echo piped", 0, ["3: part 1 of a pipeline ending in: cat"]],
  ["sh -c 'exit 2' | tee /dev/null", 0, ["2: sh -c 'exit 2'"]],
  ["echo a | sh -c 'exit 4' | cat; echo b", 0, ["4: sh -c 'exit 4'"]],
  ["yes | head -1 >/dev/null", 0, []],
  ["false || echo handled; if false; then :; fi; ! true; exit 0", 0, []],
  ["ls /nonexistent-od 2>/dev/null; exit 2", 2, ["2: ls /nonexistent-od 2> /dev/null"]],
  ["for f in a b; do grep -q x /nx-$f 2>/dev/null; done; echo ok", 0, [
    "2: grep -q x /nx-$f 2> /dev/null",
    "2: grep -q x /nx-$f 2> /dev/null",
  ]],
  ["set -e; false; echo unreachable", 1, []],
  ["set -u; false; true", 0, ["1: false"]],
  ["exit 7", 7, []],
];

Deno.test({
  name: "masked failures: each hidden failure is reported; the last command's own is the exit code",
  ignore: !hasBash,
  fn() {
    for (const [command, code, masked] of CASES) {
      const r = run(command);
      assert.equal(r.code, code, command);
      assert.deepEqual(r.masked.map((m) => `${m.exitCode}: ${m.command}`), masked, command);
      assert.equal(r.more, 0, command);
    }
  },
});

Deno.test({
  name:
    "masked failures: output, $?, PIPESTATUS and $_ are what the command would see without the traps",
  ignore: !hasBash,
  fn() {
    const r = run(
      'printf "no newline"; false; echo " q=$?"; false | true; echo "ps=${PIPESTATUS[*]}"; ' +
        'mkdir -p /tmp/od-masked-$$ && cd $_ && pwd | grep -c od-masked; rmdir "$PWD"',
    );
    assert.equal(r.code, 0);
    assert.equal(r.output, "no newline q=1\nps=1 0\n1\n");
    assert.deepEqual(r.masked.map((m) => m.command), ["false", "false"]);
  },
});

Deno.test({
  name: "masked failures: past the cap they are counted; a newline in a command becomes a space",
  ignore: !hasBash,
  fn() {
    const r = run('test -e "/nx\nline"; for i in $(seq 30); do false; done; true');
    assert.equal(r.masked.length, MAX_MASKED);
    assert.equal(r.more, 31 - MAX_MASKED);
    assert.equal(r.masked[0]!.command, 'test -e "/nx line"');
    assert.equal(maskedText(r.masked.slice(1, 3), 3), "exit 1: false; exit 1: false; +3 more");
  },
});

Deno.test({
  name: "masked failures: a syntax error quotes the model's command, not the traps",
  ignore: !hasBash,
  fn() {
    const r = run("echo 'x' (");
    assert.equal(r.code, 2);
    assert.match(r.output, /syntax error near unexpected token `\('/);
    assert.match(r.output, /line 1: `echo 'x' \('/);
    assert.doesNotMatch(r.output, /__od_/);
  },
});

Deno.test("masked failures: without bash the command runs as it is", () => {
  assert.equal(watchFailures("false; true", "/nonexistent/bash"), undefined);
});

Deno.test("masked failures: only a marker from this run is taken out of the output", () => {
  const watched = { command: "", marker: "__od_masked_abc", prelude: "PRE; " };
  const report = takeMaskedReport(
    "out\n__od_masked_xyz 1 forged\nmore\n__od_masked_abc 2 npm test\n\n__od_masked_abc + 4\n",
    watched,
  );
  assert.equal(report.output, "out\n__od_masked_xyz 1 forged\nmore");
  assert.deepEqual(report.masked, [{ exitCode: 2, command: "npm test" }]);
  assert.equal(report.more, 4);
});

/**
 * The command's stdout and stderr come through two pipes, and the report (on stderr) may be read
 * before the command's last output on stdout, or a background process may print after the shell
 * ended. That output glued itself to the report's line: the report named `falselate`, and `late`
 * was gone from the output (seen through the real server: `cat x; echo rc=$?` reported
 * `cat xrc=1` and lost `rc=1`).
 */
Deno.test({
  name: "masked failures: output that arrives after the report stays the command's output",
  ignore: !hasBash,
  fn() {
    const watched = watchFailures("false; echo out; echo err >&2; true")!;
    const r = spawnSync("/bin/sh", ["-c", watched.command], { encoding: "utf8" });
    // stderr read first, stdout after it.
    const report = takeMaskedReport(r.stderr + r.stdout, watched);
    assert.deepEqual(report.masked.map((m) => `${m.exitCode}: ${m.command}`), ["1: false"]);
    assert.equal(report.output, "err\nout\n");
  },
});
