/**
 * Issue 34, item 2: the Node route (the npm package) keeps a change journal too, through the
 * Python helper (src/platform/posix/inotify_helper.ts), and it keeps the journal's promises
 * there: a write through a shared memory map, a file in a credential-named folder, a name that
 * is not UTF-8 (which Node names by its bytes) and a folder renamed into place are each
 * reported; an overflow of the kernel's queue is seen, and what it hid is found by a walk.
 * journal_test.ts runs every journal test on the helper too (under Deno).
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  helperFsWith,
  listFolder,
  PYTHON_CANDIDATES,
} from "../../../src/platform/posix/inotify_helper.ts";
import { IN_CREATE, IN_ONLYDIR, type RawEvent } from "../../../src/platform/posix/inotify.ts";
import { bundleForNode } from "../../../scripts/build_node.ts";
import { tempDir } from "../../support/temp_dir.ts";

const ROOT = join(import.meta.dirname!, "..", "..", "..");
const python = PYTHON_CANDIDATES.find((p) => existsSync(p));
const node = (() => {
  try {
    return execFileSync("sh", ["-c", "command -v node"], { encoding: "utf8" }).trim();
  } catch {
    return "";
  }
})();

/** The entry bundled as the npm package is, once for the file. */
let bundled: string | undefined;
function runUnderNode(
  mode: "turns" | "failures" | "race",
  root: string,
  ...more: string[]
): string {
  if (!bundled) {
    bundled = join(tempDir("od-node-journal-"), "turn.mjs");
    bundleForNode(join(ROOT, "tests", "support", "node_journal_turn.ts"), bundled);
  }
  // TMPDIR is not where the helper's FIFOs go (a folder a delegate may write to): the system's
  // /tmp is, and a TMPDIR that does not exist changes nothing.
  const env = { ...Deno.env.toObject(), TMPDIR: join(root, "no-such-tmpdir") };
  return execFileSync(node, [bundled, mode, root, ...more], { encoding: "utf8", env }).trim()
    .split("\n").at(-1)!;
}

const ignore = node === "" || python === undefined || Deno.build.os !== "linux";

Deno.test({
  name: "journal on Node: kept through the Python helper; a mapped write, a credential-named " +
    "folder, a name that is not UTF-8, a rename and an overflowing burst are each reported",
  ignore,
  fn: () => {
    const root = tempDir("od-node-journal-");
    writeFileSync(join(root, "mapped.bin"), "aaaa");
    writeFileSync(join(root, "same.txt"), "untouched");
    const out = runUnderNode("turns", root);
    const seen = JSON.parse(out) as {
      helper: boolean;
      turns: Array<{ how: string; files: string[]; burst: number; partial?: string }>;
    };
    assert.equal(seen.helper, true, out);
    const [quiet, burst] = seen.turns;
    // A journal, not the walk Node fell back to before.
    assert.equal(quiet!.how, "journal", out);
    assert.deepEqual(
      quiet!.files,
      ["caf\udce9.txt", "final/a.js", "lib/.ssh/payload.js", "mapped.bin"],
      out,
    );
    assert.equal(quiet!.partial, undefined, out);
    assert.equal(burst!.how, "journal", out);
    const queued = Number(Deno.readTextFileSync("/proc/sys/fs/inotify/max_queued_events").trim());
    assert.equal(burst!.burst, queued + 1, out);
    assert.deepEqual(burst!.files, [], out);
  },
});

/**
 * The helper fails closed: one that cannot start, or that is killed during a turn, costs a walk,
 * never a change left unlisted.
 */
Deno.test({
  name: "journal on Node: a helper that cannot start leaves the turn to a walk; one that dies " +
    "keeps its turn's files, and the next turn has a new helper's journal",
  ignore,
  fn: () => {
    const out = runUnderNode("failures", tempDir("od-node-journal-"));
    const seen = JSON.parse(out);
    // No Python there: no journal, and no wait for one.
    assert.ok(seen.broken.init < 0, out);
    assert.ok(seen.broken.ms < 2500, out);
    assert.equal(seen.broken.how, "walk", out);
    assert.deepEqual(seen.broken.files, ["a.txt"], out);
    // Killed while the turn ran: the turn began on the journal, and its file is still listed.
    assert.equal(seen.killed.how, "journal", out);
    assert.deepEqual(seen.killed.files, ["b.txt"], out);
    // The next turn has a journal again, from a helper started anew (before, it walked for
    // five minutes, and every other folder with it).
    assert.equal(seen.next.how, "journal", out);
    assert.deepEqual(seen.next.files, ["c.txt"], out);
  },
});

/**
 * On a file system that gives no entry types (ext2 without `filetype` here; XFS with `ftype=0`
 * and some NFS and FUSE mounts are alike), Node's typed listing looks each entry up itself and
 * throws for the whole folder when one is gone by then. A delegate that makes and removes a link
 * in a loop made the journal take a folder it had just renamed for gone: the files in it and
 * written in it later went unlisted, and its `.git` and credential store were not hidden in the
 * next turn (4 runs of 22, found by review); Node's walk skipped such a folder the same way.
 * Needs root, for a loop mount.
 */
/** An ext2 file system without entry types, loop-mounted (root only), or undefined. */
function ext2WithoutTypes(size: string): { mount: string; [Symbol.dispose](): void } | undefined {
  if (Deno.build.os !== "linux" || Deno.uid() !== 0 || !existsSync("/dev/loop-control")) {
    return undefined;
  }
  const scratch = tempDir("od-node-journal-ext2-");
  const image = join(scratch, "fs.img");
  const mount = join(scratch, "mnt");
  try {
    execFileSync("truncate", ["-s", size, image]);
    execFileSync("mke2fs", ["-q", "-F", "-O", "^filetype", image], { stdio: "ignore" });
    mkdirSync(mount);
    execFileSync("mount", ["-o", "loop", image, mount], { stdio: "ignore" });
  } catch {
    return undefined; // no mke2fs, no loop device, or no right to mount here
  }
  return { mount, [Symbol.dispose]: () => execFileSync("umount", [mount]) };
}

/** Whether this machine can make one (tried once, on a small one). */
const canMount = (() => {
  using tried = ext2WithoutTypes("2M");
  return tried !== undefined;
})();

Deno.test({
  name: "journal on Node: a folder whose entry vanishes while it is listed (no entry types) is " +
    "still followed, by the journal and by the walk",
  ignore: ignore || !canMount,
  fn: () => {
    using ext2 = ext2WithoutTypes("64M");
    const out = runUnderNode("race", ext2!.mount, "12");
    const seen = JSON.parse(out) as { runs: number; missed: unknown[] };
    assert.equal(seen.runs, 12, out);
    assert.deepEqual(seen.missed, [], out);
  },
});

/**
 * The helper's listing where Node's typed one throws for a folder that is still there (as above,
 * without a loop mount): by name, each kind left for the caller to look up; a folder gone, or
 * reached through a link, is still refused.
 */
Deno.test("journal on Node: a folder Node's typed listing fails on is listed by name", () => {
  const dir = tempDir("od-node-journal-");
  mkdirSync(join(dir, "sub"));
  writeFileSync(join(dir, "a.js"), "x");
  symlinkSync("sub", join(dir, "link"));
  const vanished = () => {
    throw Object.assign(new Error("ENOENT: no such file or directory, lstat 'zz'"), {
      code: "ENOENT",
    });
  };
  const byName = listFolder(dir, vanished);
  assert.ok(Array.isArray(byName), String(byName));
  assert.deepEqual(
    byName.sort((a, b) => a.name.localeCompare(b.name)),
    [
      { name: "a.js", kind: "unknown" },
      { name: "link", kind: "unknown" },
      { name: "sub", kind: "unknown" },
    ],
  );
  // Typed where Node's listing works.
  const typed = listFolder(dir);
  assert.ok(Array.isArray(typed));
  assert.deepEqual(
    typed.map((e) => `${e.name}:${e.kind}`).sort(),
    ["a.js:file", "link:link", "sub:dir"],
  );
  assert.equal(listFolder(join(dir, "gone"), vanished), -2);
  assert.equal(listFolder(join(dir, "link"), vanished), -20);
  // An entry that cannot be looked up (a folder that can be read but not entered) is the
  // folder's own state: said as unreadable (EACCES), not listed by name with kinds to guess
  // (the journal then took its entries for gone, and a file made in it went unlisted).
  const unreadable = () => {
    throw Object.assign(new Error("EACCES: permission denied, lstat 'x'"), { code: "EACCES" });
  };
  assert.equal(listFolder(dir, unreadable), -13);
});

/** The batched call answers each path as the single one does (the watch, or -errno). */
Deno.test({
  name: "journal on Node: the helper's addWatches gives each path what addWatch gives",
  ignore: python === undefined || Deno.build.os !== "linux",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: () => {
    const dir = tempDir("od-node-journal-");
    const paths = [join(dir, "a"), join(dir, "gone"), join(dir, "file"), join(dir, "b")];
    mkdirSync(paths[0]!);
    mkdirSync(paths[3]!);
    writeFileSync(paths[2]!, "x");
    // Enough long names that they take several requests.
    const many = Array.from({ length: 400 }, (_, i) => join(dir, `${"n".repeat(200)}${i}`));
    for (const path of many) mkdirSync(path);
    const fs = helperFsWith(python!);
    try {
      const fd = fs.inotifyInit();
      assert.ok(fd >= 0);
      const batched = fs.addWatches!(fd, [...paths, ...many], IN_CREATE | IN_ONLYDIR);
      const single = [...paths, ...many].map((p) => fs.addWatch(fd, p, IN_CREATE | IN_ONLYDIR));
      assert.deepEqual(batched, single);
      assert.deepEqual(batched.slice(1, 3), [-2, -20]);
      assert.equal(new Set(batched.filter((wd) => wd >= 0)).size, 402);
    } finally {
      fs.stop();
    }
  },
});

/**
 * A dead helper is started again at the next inotifyInit, a few times: the instances the dead
 * one made answer an error for good and never reach the new helper's, whose descriptor numbers
 * are the same; past the restarts, a journal cannot be set up and turns walk.
 */
Deno.test({
  name: "journal on Node: a helper killed is started again; its old instances stay dead, apart " +
    "from the new one's",
  ignore: python === undefined || Deno.build.os !== "linux",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: () => {
    const dir = tempDir("od-node-journal-");
    const fs = helperFsWith(python!);
    const kill = () => execFileSync("kill", ["-9", String(fs.pid())]);
    const created = (fd: number, name: string) => {
      writeFileSync(join(dir, name), name);
      const events = fs.readEvents(fd);
      return Array.isArray(events) && (events as RawEvent[]).some((e) => e.name === name);
    };
    try {
      const first = fs.inotifyInit();
      assert.ok(first >= 0, `${first}`);
      assert.ok(fs.addWatch(first, dir, IN_CREATE) >= 0);
      assert.ok(created(first, "a.txt"));
      const pids = [fs.pid()];
      for (let restart = 1; restart <= 3; restart++) {
        kill();
        const next = fs.inotifyInit();
        assert.ok(next >= 0, `restart ${restart}: ${next}`);
        assert.notEqual(fs.pid(), pids.at(-1));
        pids.push(fs.pid());
        assert.ok(fs.addWatch(next, dir, IN_CREATE) >= 0);
        assert.ok(created(next, `n${restart}.txt`), `restart ${restart}`);
        // The first instance, from a dead helper: an error, not the new one's events.
        assert.ok(typeof fs.readEvents(first) === "number", `restart ${restart}`);
        assert.ok(fs.addWatch(first, dir, IN_CREATE) < 0);
      }
      kill();
      assert.ok(fs.inotifyInit() < 0, "a fourth death is not restarted");
    } finally {
      fs.stop();
    }
  },
});
