/**
 * Both engines' sandboxes against a swap between their plan and their mounts (real
 * bubblewrap): a delegate of another job in the same folder replaces a planned folder with a
 * link, and bubblewrap, which mounts by path, would put the mount where the link points: a
 * read-only bind showing the user's home, a writable pin making it writable. Each sandbox checks
 * every bound path's device and inode before the command runs, and exits 125 instead.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import { basename, dirname, join, relative } from "node:path";
import process from "node:process";
import { jailArgs } from "../../src/engines/claude/jail.ts";
import { planJail } from "../../src/engines/claude/jail_plan.ts";
import { findBwrap } from "../../src/engines/native/sandbox/shell_runner.ts";
import { bwrapArgs } from "../../src/engines/native/sandbox/bwrap_args.ts";
import { protectedMounts } from "../../src/engines/native/sandbox/mounts.ts";
import { bwrapCommand } from "../../src/engines/bwrap_base.ts";
import { tempDir } from "../support/harness.ts";

const bwrap = process.platform === "linux" ? findBwrap() : undefined;

/**
 * A project with a nested repository and a store of several parts, and the user's home
 * outside it: in the jail an empty tmpfs at the same path, so a link to it leads somewhere
 * there too (a link to a path the jail lacks makes bubblewrap fail, which holds).
 */
function scene(engine: "claude" | "native") {
  const base = tempDir("od-mount-race-");
  const work = join(base, "work");
  const outside = join(base, "home");
  mkdirSync(join(work, "sub", ".git"), { recursive: true });
  writeFileSync(join(work, "sub", ".git", "config"), "[core]\n");
  mkdirSync(join(work, "tools", ".config", "gh"), { recursive: true });
  writeFileSync(join(work, "tools", ".config", "gh", "hosts.yml"), "oauth_token: x\n");
  mkdirSync(join(work, "keys", ".ssh"), { recursive: true });
  writeFileSync(join(work, "keys", ".ssh", "id_rsa"), "KEYS-SECRET\n");
  mkdirSync(outside);
  writeFileSync(join(outside, "secret.txt"), "OUTSIDE-SECRET\n");
  const nestedGit = [join(work, "sub", ".git")];
  const stores = [join(work, "tools", ".config", "gh"), join(work, "keys", ".ssh")];
  let argv: (script: string) => string[];
  let planned: string[];
  if (engine === "claude") {
    const plan = planJail({
      cwd: work,
      addDirs: [],
      command: "/bin/sh",
      pathDirs: ["/usr/bin", "/bin"],
      home: outside,
      protect: [],
      readOnly: [],
      nestedHostRun: nestedGit,
      credentialStores: stores,
      tmpMb: 64,
    });
    planned = (plan.identities ?? []).map((i) => i.path);
    argv = (script) => jailArgs(plan, "/bin/sh", ["-c", script]);
  } else {
    const mounts = protectedMounts([work], { readOnly: nestedGit, hidden: stores });
    planned = (mounts.identities ?? []).map((i) => i.path);
    // The user's home is there in the sandbox too: the system is mounted read-only whole.
    argv = (script) =>
      bwrapArgs({ cwd: work, writable: [work], root: process.getuid?.() === 0, mounts }, script);
  }
  const run = (script: string) => {
    const { command, args } = bwrapCommand(bwrap!, argv(script));
    return spawnSync(command, args, { encoding: "utf8", cwd: work });
  };
  // The temporary folder holding all of this is there in both sandboxes too (an empty /tmp), so
  // a link to it leads somewhere inside, and the mount would show the host's.
  const tmp = dirname(base);
  const viaTmp = (link: string) => join(link, basename(base), "home");
  return { work, outside, tmp, viaTmp, planned, run };
}

/**
 * `path` swapped for a link to `target`, as a racing delegate would. Relative: bubblewrap
 * resolves a mount's destination below the new root before it enters it, where an absolute
 * link leads nowhere (and the mount fails, which holds).
 */
function swap(path: string, target: string): void {
  renameSync(path, `${path}.away`);
  symlinkSync(relative(dirname(path), target), path);
}

for (const engine of ["claude", "native"] as const) {
  Deno.test({
    name: `${engine}: a read-only bind swapped for a link out of the project stops the sandbox`,
    ignore: bwrap === undefined,
    fn() {
      const { work, tmp, viaTmp, planned, run } = scene(engine);
      assert.ok(planned.includes(join(work, "sub", ".git")), planned.join(", "));
      const before = run("cat sub/.git/config; echo RAN");
      assert.equal(before.status, 0, before.stderr);
      assert.match(before.stdout, /\[core\][\s\S]*RAN/);
      swap(join(work, "sub", ".git"), tmp);
      const after = run(`cat ${viaTmp("sub/.git")}/secret.txt; echo RAN`);
      assert.ok(!after.stdout.includes("OUTSIDE-SECRET"), `the home was shown:\n${after.stdout}`);
      assert.equal(after.status, 125, after.stdout + after.stderr);
      assert.match(after.stderr, /not set up as planned/);
    },
  });

  Deno.test({
    name: `${engine}: a pinned folder swapped for a link out of the project stops the sandbox`,
    ignore: bwrap === undefined,
    fn() {
      const { work, outside, tmp, viaTmp, planned, run } = scene(engine);
      assert.ok(planned.includes(join(work, "tools", ".config")), planned.join(", "));
      swap(join(work, "tools", ".config"), tmp);
      const after = run(`touch ${viaTmp("tools/.config")}/planted; echo RAN`);
      assert.ok(!existsSync(join(outside, "planted")), "the home was made writable");
      assert.equal(after.status, 125, after.stdout + after.stderr);
    },
  });

  Deno.test({
    name: `${engine}: a store's folder renamed away before its mask is made stops the sandbox`,
    ignore: bwrap === undefined,
    fn() {
      const { work, planned, run } = scene(engine);
      assert.ok(planned.includes(join(work, "keys")), planned.join(", "));
      // The mask would be made at keys/.ssh anew, and the store, now moved/.ssh, left open.
      renameSync(join(work, "keys"), join(work, "moved"));
      const after = run("cat moved/.ssh/id_rsa; echo RAN");
      assert.ok(!after.stdout.includes("KEYS-SECRET"), `the store was shown:\n${after.stdout}`);
      assert.equal(after.status, 125, after.stdout + after.stderr);
    },
  });

  Deno.test({
    name: `${engine}: a store swapped for a link before its mask is made stops the sandbox`,
    ignore: bwrap === undefined,
    fn() {
      const { work, run } = scene(engine);
      // The mask would land where the link leads, and the store, now keys/id, be left open.
      renameSync(join(work, "keys", ".ssh"), join(work, "keys", "id"));
      mkdirSync(join(work, "other"));
      symlinkSync("../other", join(work, "keys", ".ssh"));
      const after = run("cat keys/id/id_rsa; echo RAN");
      assert.ok(!after.stdout.includes("KEYS-SECRET"), `the store was shown:\n${after.stdout}`);
      assert.equal(after.status, 125, after.stdout + after.stderr);
    },
  });
}
