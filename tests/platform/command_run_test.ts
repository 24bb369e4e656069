/**
 * runCommand, the one home of spawn, wait, time out and kill: what the sandbox, git and the
 * doctor's probes each wrote out before (input at the start, stdout and stderr apart under a
 * byte cap, exit codes that are answers).
 */
import assert from "node:assert/strict";
import process from "node:process";
import { runCommand, shellCommand } from "../../src/platform/command_run.ts";
import { tempDir } from "../support/harness.ts";

const isWindows = process.platform === "win32";
const env = { PATH: process.env.PATH ?? "/usr/bin:/bin" };
const sh = (script: string) => ({ ...shellCommand(script), cwd: tempDir(), env, keepChars: 1000 });

Deno.test({
  name: "runCommand: stdin is given, stdout and stderr come back apart as bytes",
  ignore: isWindows,
  fn: async () => {
    const run = await runCommand({
      ...sh("cat; echo oops >&2"),
      stdin: new TextEncoder().encode("hello\n"),
      maxBytes: 1024,
    });
    assert.equal(run.exitCode, 0);
    assert.equal(run.accepted, true);
    assert.equal(new TextDecoder().decode(run.stdout), "hello\n");
    assert.equal(new TextDecoder().decode(run.stderr), "oops\n");
    assert.equal(run.overCap, false);
  },
});

Deno.test({
  name: "runCommand: past the byte cap the command is stopped and its stdout is not kept",
  ignore: isWindows,
  fn: async () => {
    const started = performance.now();
    const run = await runCommand({ ...sh("yes"), maxBytes: 100_000, timeoutMs: 30_000 });
    assert.equal(run.overCap, true);
    assert.equal(run.stdout, undefined);
    assert.equal(run.accepted, false);
    assert.equal(run.timedOut, false);
    assert.ok(performance.now() - started < 20_000, "stopped at the cap, not at the timeout");
  },
});

Deno.test({
  name: "runCommand: okCodes says which exit codes are answers",
  ignore: isWindows,
  fn: async () => {
    assert.equal((await runCommand(sh("exit 1"))).accepted, false);
    const one = await runCommand({ ...sh("exit 1"), okCodes: [0, 1] });
    assert.equal(one.exitCode, 1);
    assert.equal(one.accepted, true);
    const timedOut = await runCommand({ ...sh("sleep 5"), timeoutMs: 200, okCodes: [0, 143] });
    assert.equal(timedOut.timedOut, true);
    assert.equal(timedOut.accepted, false, "a stopped command is never accepted");
  },
});

Deno.test("runCommand: a command that cannot start says why, without throwing", async () => {
  const run = await runCommand({
    command: "/nonexistent/od-no-such-program",
    args: [],
    cwd: tempDir(),
    env,
    keepChars: 100,
  });
  assert.equal(run.notStarted, "ENOENT");
  assert.equal(run.exitCode, null);
  assert.equal(run.accepted, false);
});

/** The session id of a process, from /proc/<pid>/stat (the field after the state, ppid, pgrp). */
function sessionOf(stat: string): number {
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[3]);
}

Deno.test({
  name: "runCommand: the command leads a session of its own unless ownSession is false",
  ignore: process.platform !== "linux",
  fn: async () => {
    const ours = sessionOf(Deno.readTextFileSync("/proc/self/stat"));
    const probe = sh('echo "$$ $(cat /proc/$$/stat)"');
    const read = async (ownSession?: boolean) => {
      const run = await runCommand({
        ...probe,
        ...(ownSession === undefined ? {} : { ownSession }),
      });
      const [pid, ...stat] = run.output.trim().split(" ");
      return { pid: Number(pid), session: sessionOf(stat.join(" ")) };
    };
    const own = await read();
    assert.equal(own.session, own.pid, "by default the shell leads its session");
    const shared = await read(false);
    assert.equal(shared.session, ours, "with ownSession false it stays in ours");
    // Without a session of its own, a deadline still stops the command, through its tree.
    const started = performance.now();
    const stopped = await runCommand({ ...sh("sleep 20"), ownSession: false, timeoutMs: 200 });
    assert.equal(stopped.timedOut, true);
    assert.ok(performance.now() - started < 10_000, "stopped at the deadline");
  },
});
