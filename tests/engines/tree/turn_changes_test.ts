/**
 * A turn's view of its changes, as both engines use it: from a change journal where one can
 * be kept, completed by a walk by change time where the journal cannot name every file a
 * write reached; by a walk before and after where there is no journal, saying when that walk
 * was capped.
 */
import assert from "node:assert/strict";
import {
  appendFileSync,
  existsSync,
  linkSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import {
  beginTurnChanges,
  closeJournals,
  storesUnknown,
} from "../../../src/engines/tree/turn_changes.ts";
import { collectGuardIdentities } from "../../../src/guard/identities.ts";
import { type LinuxFs, linuxFs } from "../../../src/platform/posix/inotify.ts";
import { helperFsWith, PYTHON_CANDIDATES } from "../../../src/platform/posix/inotify_helper.ts";
import { quotePath } from "../../../src/platform/plain_text.ts";
import { putBytes } from "../../support/trees.ts";

function tree(): { root: string; [Symbol.dispose](): void } {
  const root = realpathSync(Deno.makeTempDirSync({ prefix: "turn_changes_test_" }));
  return {
    root,
    [Symbol.dispose]: () => {
      closeJournals();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

Deno.test({
  name: "turn changes: a file changed through a hard link made and removed in the turn is named",
  ignore: linuxFs() === undefined,
  fn: async () => {
    using t = tree();
    const r = t.root;
    writeFileSync(join(r, "package.json"), "{}");
    writeFileSync(join(r, "other.txt"), "untouched");
    // The walk by change time allows for the kernel's coarse clock: files changed just before
    // the turn would count.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const changes = await beginTurnChanges([r], { walk: true });
    assert.equal(changes.how, "journal");
    linkSync(join(r, "package.json"), join(r, "x"));
    appendFileSync(join(r, "x"), "evil");
    rmSync(join(r, "x"));
    assert.deepEqual(await changes.end(), { files: [join(r, "package.json")] });
  },
});

Deno.test({
  name: "turn changes: a journal that overflows mid-turn is replaced by a walk by change time",
  ignore: linuxFs() === undefined,
  fn: async () => {
    using t = tree();
    const r = t.root;
    writeFileSync(join(r, "old.txt"), "old");
    await new Promise((resolve) => setTimeout(resolve, 100));
    const changes = await beginTurnChanges([r], { walk: true, limits: { maxDirs: 10, maxLog: 3 } });
    assert.equal(changes.how, "journal");
    for (let i = 0; i < 5; i++) writeFileSync(join(r, `f${i}.txt`), "x");
    const report = await changes.end();
    assert.deepEqual(report, { files: [0, 1, 2, 3, 4].map((i) => join(r, `f${i}.txt`)) });
  },
});

/**
 * The kernel stamps change times from its coarse clock, which lags this process's clock by a
 * tick, and by as long as its timekeeping is held up (a CPU of a loaded virtual machine taken
 * away): CI saw a turn's five files missed by the walk that replaced an overflowed journal.
 * Here the kernel's clock runs LAG_MS behind, as seen through each route's calls (libc, and
 * the Node route's helper): the turn's start is read on that clock, so nothing is missed.
 */
const LAG_MS = 400;
const python = PYTHON_CANDIDATES.find((p) => existsSync(p));
for (const route of ["libc", "helper"] as const) {
  Deno.test({
    name: `turn changes (${route}): files changed at the start of a turn are found by change ` +
      "time while the kernel's clock lags",
    ignore: linuxFs() === undefined || (route === "helper" && python === undefined),
    fn: async () => {
      const real = route === "libc" ? linuxFs()! : helperFsWith(python!);
      try {
        const now = real.coarseNowMs?.();
        assert.ok(now !== undefined, "the kernel's coarse clock cannot be read");
        // Change times as the kernel has them, to the nanosecond: the helper's own come from
        // node:fs, which under Deno gives them to the second only (to the nanosecond on Node).
        const changeTimeMs = (path: string) => linuxFs()!.changeTimeMs(path)!;
        // The clock read is the one change times come from: a file made after has a later one.
        using t = tree();
        writeFileSync(join(t.root, "after.txt"), "x");
        const stamped = changeTimeMs(join(t.root, "after.txt"));
        assert.ok(stamped >= now, `changed at ${stamped}, before the clock read ${now}`);
        assert.ok(Math.abs(now - Date.now()) < 1000, `coarse clock at ${now}`);
        const lagging: LinuxFs = {
          ...real,
          coarseNowMs: () => real.coarseNowMs!()! - LAG_MS,
          changeTimeMs: (path) => changeTimeMs(path) - LAG_MS,
        };
        // maxDirs 0: no journal can be kept, and the turn walks from the start.
        for (const limits of [{ maxDirs: 10, maxLog: 3 }, { maxDirs: 0, maxLog: 3 }]) {
          using t = tree();
          const r = t.root;
          writeFileSync(join(r, "old.txt"), "old");
          await new Promise((resolve) => setTimeout(resolve, 100));
          const changes = await beginTurnChanges([r], { walk: true, fs: lagging, limits });
          assert.equal(changes.how, limits.maxDirs === 0 ? "walk" : "journal");
          for (let i = 0; i < 5; i++) writeFileSync(join(r, `f${i}.txt`), "x");
          assert.deepEqual(await changes.end(), {
            files: [0, 1, 2, 3, 4].map((i) => join(r, `f${i}.txt`)),
          });
        }
      } finally {
        if ("stop" in real) (real as { stop(): void }).stop();
      }
    },
  });
}

Deno.test({
  name: "turn changes (helper): a turn that would not walk, with no journal kept, starts no helper",
  ignore: linuxFs() === undefined || python === undefined,
  fn: async () => {
    const helper = helperFsWith(python!);
    try {
      using t = tree();
      const changes = await beginTurnChanges([t.root], { walk: false, fs: helper });
      assert.equal(changes.how, undefined);
      assert.deepEqual(await changes.end(), { files: [] });
      assert.equal(helper.pid(), undefined, "the Python helper was started");
    } finally {
      helper.stop();
    }
  },
});

Deno.test({
  name: "turn changes: a journal stopped by a queue overflow between turns gives way to a walk " +
    "that still finds the nested stores and repositories",
  ignore: linuxFs() === undefined,
  fn: async () => {
    using t = tree();
    const r = t.root;
    mkdirSync(join(r, "sub", ".ssh"), { recursive: true });
    writeFileSync(join(r, "sub", ".ssh", "id_rsa"), "key");
    mkdirSync(join(r, "nested", "p", ".git"), { recursive: true });
    // Watched from the first turn on, so that what is made in it later has events.
    mkdirSync(join(r, "bulk"));
    const found = {
      credentials: [join(r, "sub", ".ssh")],
      nestedGit: [join(r, "nested", "p", ".git")],
    };
    const first = await beginTurnChanges([r], { walk: true });
    assert.equal(first.how, "journal");
    assert.deepEqual(first.nested?.credentials, found.credentials);
    first.release();
    // Between turns (an `npm ci` of the user's, another job's burst), more events than the
    // kernel queues for the journal: each new file leaves at least two (made, closed).
    const queued = Number(readFileSync("/proc/sys/fs/inotify/max_queued_events", "utf8"));
    for (let i = 0; i < queued; i++) writeFileSync(join(r, "bulk", `f${i}`), "");
    const next = await beginTurnChanges([r], { walk: true });
    try {
      assert.deepEqual(next.nested?.credentials, found.credentials);
      assert.deepEqual(next.nested?.nestedGit, found.nestedGit);
      assert.equal(next.how, "walk");
      assert.equal(storesUnknown(next.nested), undefined);
    } finally {
      next.release();
    }
  },
});

Deno.test("storesUnknown: a list of stores that may miss some says why", () => {
  const lists = { nestedGit: [], credentials: [] };
  assert.equal(storesUnknown({ ...lists, capped: false }), undefined);
  assert.match(storesUnknown(undefined) ?? "", /not searched/);
  assert.match(storesUnknown({ ...lists, capped: true }) ?? "", /stopped at its limit/);
  assert.match(storesUnknown({ ...lists, unread: true }) ?? "", /could not be read/);
});

Deno.test("turn changes: without a journal, a walk of the folders, then of the files' change times, saying when it stopped", async () => {
  using t = tree();
  const r = t.root;
  writeFileSync(join(r, "a.txt"), "a");
  mkdirSync(join(r, "node_modules", "dep", ".git"), { recursive: true });
  mkdirSync(join(r, "sub", ".ssh"), { recursive: true });
  // Deno's own stat has the change time to the second: what was made before must be older.
  await new Promise((resolve) => setTimeout(resolve, 1100));
  const changes = await beginTurnChanges([r], { walk: true, fs: null });
  assert.equal(changes.how, "walk");
  assert.deepEqual(changes.nested, {
    nestedGit: [join(r, "node_modules", "dep", ".git")],
    credentials: [join(r, "sub", ".ssh")],
    capped: false,
    linked: [],
  });
  appendFileSync(join(r, "a.txt"), "+");
  writeFileSync(join(r, "node_modules", "dep", "new.js"), "x");
  assert.deepEqual(await changes.end(), {
    files: [join(r, "a.txt"), join(r, "node_modules", "dep", "new.js")],
  });
  const capped = await beginTurnChanges([r], { walk: true, fs: null, walkLimit: 3 });
  assert.match((await capped.end()).partial ?? "", /over 3 entries, and the walk .* stopped/);
  const none = await beginTurnChanges([r], { walk: false, fs: null });
  assert.equal(none.how, undefined);
  assert.deepEqual(await none.end(), { files: [] });
});

Deno.test("turn changes: without a journal, the identity scan lists folders from the walk's memory and finds what it finds on disk", async () => {
  using t = tree();
  const r = t.root;
  for (const dir of ["proj/.git/hooks", "proj/.claude", "a/b/c/.vscode", "node_modules/dep/.git"]) {
    mkdirSync(join(r, dir), { recursive: true });
  }
  mkdirSync(join(r, "sub", ".ssh", "inner", ".git"), { recursive: true });
  writeFileSync(join(r, "proj", ".envrc"), "export A=1");
  writeFileSync(join(r, "proj", ".claude", "settings.json"), "{}");
  writeFileSync(join(r, "a", "b", "c", ".env"), "KEY=1");
  writeFileSync(join(r, "a", "b", "id_rsa"), "key");
  writeFileSync(join(r, "a", "b", "c", "plain.js"), "x");
  writeFileSync(join(r, "node_modules", "dep", "index.js"), "x");
  writeFileSync(join(r, "node_modules", ".envrc"), "export B=1");
  const fromDisk = await collectGuardIdentities([r]);
  assert.deepEqual(fromDisk.scan.paths, [
    join(r, "a", "b", "c", ".vscode"),
    join(r, "node_modules", ".envrc"),
    join(r, "proj", ".claude"),
    join(r, "proj", ".envrc"),
    join(r, "proj", ".git"),
  ]);
  for (const walkLimit of [1_000, 6]) {
    const changes = await beginTurnChanges([r], { walk: true, fs: null, walkLimit });
    assert.equal(changes.how, "walk");
    // The walk's memory serves the scan (the folders it read whole, the rest from disk)...
    const list = changes.list;
    assert.ok(list, "the walk route gives the scan no listing");
    assert.ok(list(r), "the walk route gives the scan no listing of the root");
    const listed = join(r, "a", "b");
    assert.equal(list(listed) !== undefined, walkLimit > 6, `listing of ${listed}`);
    assert.deepEqual(
      list(listed)?.map((e) => [e.name, e.isDirectory()]).sort(),
      walkLimit > 6 ? [["c", true], ["id_rsa", false]] : undefined,
    );
    // ...and the scan from it finds exactly what the scan from disk finds.
    const fromWalk = await collectGuardIdentities([r], { list });
    assert.deepEqual(fromWalk.scan, fromDisk.scan);
    assert.deepEqual(fromWalk.secretPaths, fromDisk.secretPaths);
    assert.deepEqual(fromWalk.hostRunPaths, fromDisk.hostRunPaths);
    changes.release();
  }
});

/**
 * Issue 28's chain: a payload in a credential-named folder made for it, an existing store no
 * sandbox hid, the `.npmrc` that runs the payload at the user's next `npm test`, and names that
 * are not UTF-8. Each route lists them all by name, or says what it could not see.
 */
for (const route of ["journal", "walk through libc", "walk"] as const) {
  Deno.test({
    name: `turn changes (${route}): credential-named folders, a new .npmrc and names that are ` +
      "not UTF-8 are listed, or said to be unseen",
    ignore: linuxFs() === undefined,
    fn: async () => {
      using t = tree();
      const r = t.root;
      writeFileSync(join(r, "a.txt"), "a");
      mkdirSync(join(r, "lib", ".docker"), { recursive: true });
      writeFileSync(join(r, "lib", ".docker", "config.json"), "{}");
      await new Promise((resolve) => setTimeout(resolve, route === "walk" ? 1100 : 100));
      const changes = await beginTurnChanges([r], {
        walk: true,
        // The walk, as where no journal can be kept: libc's calls past a journal's limits
        // (Deno on Linux), none on Node, or Deno elsewhere.
        ...(route === "journal" ? {} : route === "walk" ? { fs: null } : {
          limits: { maxDirs: 1, maxLog: 10 },
        }),
      });
      assert.equal(changes.how, route === "journal" ? "journal" : "walk");
      mkdirSync(join(r, "lib", ".ssh"));
      writeFileSync(join(r, "lib", ".ssh", "payload.js"), "require('child_process')");
      appendFileSync(join(r, "lib", ".docker", "config.json"), "+");
      writeFileSync(join(r, ".npmrc"), "script-shell=lib/.ssh/payload.js");
      putBytes(r, "caf\\351.txt");
      const report = await changes.end();
      const named = [
        join(r, ".npmrc"),
        join(r, "lib", ".docker", "config.json"),
        join(r, "lib", ".ssh", "payload.js"),
      ];
      if (route === "walk") {
        // Deno's own calls cannot name it: said on the line instead.
        assert.deepEqual(report, {
          files: named,
          partial: `1 entry in "${r}" cannot be looked at: its name is not UTF-8, which this ` +
            "runtime cannot read",
        });
      } else {
        assert.deepEqual(report, {
          files: [join(r, ".npmrc"), join(r, "caf\udce9.txt"), ...named.slice(1)],
        });
        assert.equal(quotePath(report.files[1]!.slice(r.length + 1)), '"caf\\351.txt"');
      }
    },
  });
}
