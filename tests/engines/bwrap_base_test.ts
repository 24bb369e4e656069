/**
 * bubblewrap started with paths whose names are not UTF-8 (bwrap_base.ts `bwrapCommand`): a
 * process's arguments can be given only as UTF-8 text, so the options go by bytes through
 * `--args`. With real bubblewrap: the path named that way is mounted read-only, the file that
 * carried the options is gone once bubblewrap read it, and what cannot be passed is refused.
 */
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, renameSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { bwrapCommand, identityCheck, plannedIdentities } from "../../src/engines/bwrap_base.ts";
import { tempDir } from "../support/temp_dir.ts";
import { putBytes } from "../support/trees.ts";
import { BWRAP, bwrapTest, withTempFolder } from "./native/sandbox/support.ts";

/** Options files of this process left in the temporary folder. */
const leftOver = () =>
  readdirSync(tmpdir()).filter((n) => n.startsWith(`ollama-delegate-bwrap-${Deno.pid}-`));

bwrapTest(
  "bwrapCommand: a file below a folder named by bytes is mounted read-only; the options file is gone",
  async () => {
    await withTempFolder("od-bwrap-raw-", (top) => {
      putBytes(top, "proj\\377/.envrc");
      const file = `${top}/proj\uDCFF/.envrc`;
      const args = [
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--bind",
        top,
        top,
        "--ro-bind",
        file,
        file,
        "--",
        "/bin/sh",
        "-c",
        'echo evil > "$(printf "proj\\377/.envrc")"; ls -l /proc/self/fd/',
      ];
      const plain = bwrapCommand(BWRAP, args.map((a) => a.replace("\uDCFF", "")));
      assert.equal(plain.command, BWRAP, "no file without a name that needs one");
      const launch = bwrapCommand(BWRAP, args);
      const run = spawnSync(launch.command, launch.args, { cwd: top, encoding: "utf8" });
      assert.match(run.stderr, /Read-only file system/, run.stderr);
      // bubblewrap closed the options' fd: the command inside does not hold it.
      assert.match(run.stdout, /0 -> \/dev\/null/, run.stdout);
      assert.doesNotMatch(run.stdout, /ollama-delegate-bwrap-/, run.stdout);
      const content = execFileSync("sh", ["-c", 'cat "$(printf "proj\\377/.envrc")"'], {
        cwd: top,
        encoding: "utf8",
      });
      assert.equal(content, "x");
      assert.deepEqual(leftOver(), []);
      return Promise.resolve();
    });
  },
);

bwrapTest(
  "bwrapCommand: a name that is not UTF-8 after `--` cannot be passed: refused, naming it",
  () => {
    assert.throws(
      () => bwrapCommand(BWRAP, ["--dev", "/dev", "--", "/bin/cat", "/tmp/a\uDCFF"]),
      /cannot run a command whose arguments name "\/tmp\/a\\377": its name is not UTF-8/,
    );
    assert.deepEqual(leftOver(), []);
    return Promise.resolve();
  },
);

Deno.test("identityCheck: the command runs, with its own PATH, while the paths are as planned; a changed one stops it with 125", () => {
  const dir = tempDir("od-identity-check-");
  mkdirSync(join(dir, "a"));
  const prefix = identityCheck(plannedIdentities([join(dir, "a")]));
  // The check's tools are found without the caller's PATH, which the command keeps.
  const run = () =>
    spawnSync(prefix[0]!, [...prefix.slice(1), "/bin/sh", "-c", 'echo "ran $PATH"'], {
      env: { PATH: "/nowhere" },
      encoding: "utf8",
    });
  const ok = run();
  assert.equal(ok.status, 0, ok.stderr);
  assert.equal(ok.stdout.trim(), "ran /nowhere");
  renameSync(join(dir, "a"), join(dir, "b"));
  mkdirSync(join(dir, "a"));
  const changed = run();
  assert.equal(changed.status, 125);
  assert.equal(changed.stdout, "");
  assert.match(changed.stderr, /not set up as planned/);
  assert.deepEqual(identityCheck([]), []);
});

bwrapTest(
  "identityCheck: one stat a kind and nothing else before the command, which runs in the check's place",
  () => {
    const dir = tempDir("od-identity-forks-");
    mkdirSync(join(dir, "a"));
    mkdirSync(join(dir, "m"));
    const prefix = identityCheck(
      plannedIdentities([join(dir, "a"), dir]),
      [{ kind: "dir", path: join(dir, "m") }],
      [dir],
    );
    // In a PID namespace of its own, bubblewrap's init is 1 and the check 2; every process the
    // check starts takes the next number, and so does the child the command starts at the end.
    // The command prints its own number (the check's, since it runs by exec) and its child's.
    const run = spawnSync(BWRAP, [
      "--unshare-pid",
      "--dev-bind",
      "/",
      "/",
      "--tmpfs",
      join(dir, "m"),
      "--",
      ...prefix,
      "/bin/sh",
      "-c",
      "echo \"$$ $(/bin/sh -c 'echo $PPID $$')\"",
    ], { encoding: "utf8" });
    assert.equal(run.status, 0, run.stderr);
    const [own, parent, child] = run.stdout.trim().split(" ").map(Number);
    assert.equal(own, 2, run.stdout);
    assert.equal(parent, own, run.stdout);
    // Two stats, one for the bound paths and one for the masks, then the command's child.
    assert.equal(child! - own! - 1, 2, `the check started ${child! - own! - 1} processes`);
    return Promise.resolve();
  },
);
