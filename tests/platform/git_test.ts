/** git() through runCommand: input, exit codes that are answers, the output cap, failures. */
import assert from "node:assert/strict";
import { git, GitError } from "../../src/platform/git.ts";
import { readFileSync } from "node:fs";
import { tempDir } from "../support/harness.ts";

Deno.test("git: stdin, okCodes, the byte cap and a failure", async () => {
  const cwd = tempDir();
  await git(["init", "-q"], { cwd });
  const hashed = await git(["hash-object", "--stdin"], {
    cwd,
    stdin: new TextEncoder().encode("hello\n"),
  });
  assert.equal(hashed.stdout.trim(), "ce013625030ba8dba906f756967f9e9ca394464a");
  const differs = await git(["diff", "--quiet", "--no-index", "/dev/null", ".git/HEAD"], {
    cwd,
    okCodes: [1],
  });
  assert.equal(differs.code, 1);
  const big = await git(["cat-file", "-p", "HEAD:nothing"], { cwd }).catch((e) => e);
  assert.ok(big instanceof GitError);
  assert.equal(big.reason, undefined);
  assert.match(big.message, /^git cat-file -p HEAD:nothing failed \(exit 128\)/);
  const tooBig = await git(["hash-object", "--stdin"], {
    cwd,
    stdin: new TextEncoder().encode("x"),
    maxBytes: 10,
  }).catch((e) => e);
  assert.ok(tooBig instanceof GitError);
  assert.equal(tooBig.reason, "too-big");
});

Deno.test({
  // A session of its own costs a fork of the whole server under Deno (platform/command_run.ts):
  // 30 worktrees took 7.1-8.4 s with it and 4.3-4.4 s without.
  name: "git: without a deadline git stays in the server's session; with one it leads its own",
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    const cwd = tempDir();
    const session = (stat: string) => Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[3]);
    const ours = session(readFileSync("/proc/self/stat", "utf8"));
    // An alias that runs a shell (git's child) which reports its pid, its parent's (git) and
    // its session.
    const probe = ["-c", 'alias.sid=!echo "$PPID $(cat /proc/$$/stat)"', "sid"];
    const read = async (timeoutMs?: number) => {
      const out = await git(probe, { cwd, ...(timeoutMs ? { timeoutMs } : {}) });
      const [gitPid, ...stat] = out.stdout.trim().split(" ");
      return { gitPid: Number(gitPid), session: session(stat.join(" ")) };
    };
    assert.equal((await read()).session, ours);
    const timed = await read(30_000);
    assert.equal(timed.session, timed.gitPid, "under a deadline git leads its session");
  },
});

Deno.test({
  name: "git: a git that ends while a process it started holds its output is named as that",
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    const cwd = tempDir();
    // The alias's shell leaves a sleep holding git's stdout and exits; runCommand waits 2 s for
    // the pipes, and without a session of its own there is no sweep to close them.
    const held = await git(["-c", "alias.hold=!sleep 3 & echo started", "hold"], { cwd }).catch((
      e,
    ) => e);
    assert.ok(held instanceof GitError, String(held));
    assert.equal(held.reason, undefined);
    assert.match(held.message, /^git -c ended, but a process it started still held its output$/);
  },
});
