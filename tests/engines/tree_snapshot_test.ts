import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { appendFile, mkdir, realpath, rm, symlink, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { changedBetween, snapshot } from "../../src/engines/tree_snapshot.ts";

async function withTree(
  fn: (top: string) => Promise<void>,
  opts: { dir?: string } = {},
): Promise<void> {
  const top = await realpath(await Deno.makeTempDir({ prefix: "changes_test_", ...opts }));
  try {
    await fn(top);
  } finally {
    await rm(top, { recursive: true, force: true });
  }
}

async function put(path: string, content: string): Promise<void> {
  await mkdir(join(path, ".."), { recursive: true });
  await writeFile(path, content);
}

Deno.test("snapshot: records every file below the roots, nested and in several roots", async () => {
  await withTree(async (top) => {
    await put(join(top, "a", "one.txt"), "1");
    await put(join(top, "a", "deep", "er", "two.txt"), "22");
    await put(join(top, "b", "three.txt"), "333");
    await put(join(top, "c", "not-a-root.txt"), "x");
    const snap = await snapshot([join(top, "a"), join(top, "b")]);
    assert.equal(snap.capped, false);
    assert.deepEqual([...snap.files.keys()].sort(), [
      join(top, "a", "deep", "er", "two.txt"),
      join(top, "a", "one.txt"),
      join(top, "b", "three.txt"),
    ]);
  });
});

Deno.test("snapshot: version control and dependency folders are walked too, and nested repositories and credential stores are found", async () => {
  await withTree(async (top) => {
    for (const bulk of [".git", "node_modules", ".hg", ".svn", "__pycache__", ".venv", "target"]) {
      await put(join(top, bulk, "inner.txt"), "x");
      await put(join(top, "sub", bulk, "inner.txt"), "x");
    }
    await put(join(top, "kept.txt"), "x");
    await put(join(top, "node_modules", "pkg", ".git", "config"), "x");
    await put(join(top, "deep", ".ssh", "id_rsa"), "KEY");
    await put(join(top, ".aws", "credentials"), "KEY");
    const snap = await snapshot([top]);
    assert.equal(snap.capped, false);
    const files = [...snap.files.keys()];
    assert.ok(files.includes(join(top, ".git", "inner.txt")), ".git is walked");
    assert.ok(files.includes(join(top, "sub", "node_modules", "inner.txt")));
    assert.ok(files.includes(join(top, "kept.txt")));
    assert.equal(files.length, 16);
    // A credential store is recorded, never read into.
    assert.ok(!files.some((f) => f.includes(".ssh") || f.includes(".aws")));
    assert.deepEqual(snap.credentials, [join(top, ".aws"), join(top, "deep", ".ssh")]);
    // The root's own .git is not nested; the others are.
    assert.deepEqual(snap.nestedGit, [
      join(top, "node_modules", "pkg", ".git"),
      join(top, "sub", ".git"),
    ]);
  });
});

Deno.test("changedBetween: a command that plants a hook in .git or patches node_modules is reported", async () => {
  await withTree(async (top) => {
    await put(join(top, ".git", "config"), "[core]\n");
    await put(join(top, "node_modules", "dep", "index.js"), "ok");
    const before = await snapshot([top]);
    await put(join(top, ".git", "hooks", "pre-commit"), "#!/bin/sh\nevil\n");
    await appendFile(join(top, "node_modules", "dep", "index.js"), ";evil()");
    const after = await snapshot([top]);
    assert.deepEqual(changedBetween(before, after), [
      join(top, ".git", "hooks", "pre-commit"),
      join(top, "node_modules", "dep", "index.js"),
    ]);
  });
});

Deno.test("snapshot: a symlink counts as a file and is not followed", async () => {
  await withTree(async (top) => {
    await put(join(top, "outside", "secret.txt"), "x");
    await mkdir(join(top, "root"));
    await symlink(join(top, "outside"), join(top, "root", "dirlink"));
    await symlink(join(top, "outside", "secret.txt"), join(top, "root", "filelink"));
    const snap = await snapshot([join(top, "root")]);
    assert.deepEqual([...snap.files.keys()].sort(), [
      join(top, "root", "dirlink"),
      join(top, "root", "filelink"),
    ]);
  });
});

Deno.test("snapshot: a missing root is an empty snapshot, not an error", async () => {
  await withTree(async (top) => {
    assert.deepEqual(await snapshot([join(top, "nope")]), {
      files: new Map(),
      capped: false,
      nestedGit: [],
      credentials: [],
    });
  });
});

Deno.test("changedBetween: created and changed files, sorted; unchanged and deleted left out", async () => {
  await withTree(async (top) => {
    await put(join(top, "same.txt"), "same");
    await put(join(top, "grows.txt"), "a");
    await put(join(top, "touched.txt"), "t");
    await put(join(top, "deleted.txt"), "d");
    const old = new Date(Date.now() - 60_000);
    await utimes(join(top, "touched.txt"), old, old);
    const before = await snapshot([top]);
    await appendFile(join(top, "grows.txt"), "bc");
    // Same size, new mtime: a rewrite in place.
    await writeFile(join(top, "touched.txt"), "T");
    await rm(join(top, "deleted.txt"));
    await put(join(top, "new", "z.txt"), "z");
    await put(join(top, "b-new.txt"), "b");
    const after = await snapshot([top]);
    assert.deepEqual(changedBetween(before, after), [
      join(top, "b-new.txt"),
      join(top, "grows.txt"),
      join(top, "new", "z.txt"),
      join(top, "touched.txt"),
    ]);
    assert.deepEqual(changedBetween(after, after), []);
  });
});

/** 20,000 entries on a slow disk take a minute to make and remove; tmpfs takes a second. */
const RAM_DIR = existsSync("/dev/shm") ? "/dev/shm" : undefined;

Deno.test("snapshot: stops at 20,000 entries and says it was capped", async () => {
  await withTree(async (top) => {
    const dir = join(top, "many");
    await mkdir(dir);
    // Empty folders count as entries but cost no lstat, which keeps this test quick.
    for (let i = 0; i < 20_001; i++) Deno.mkdirSync(join(dir, `d${i}`));
    await put(join(dir, "d0", "file.txt"), "x");
    const snap = await snapshot([dir]);
    assert.equal(snap.capped, "project");
    assert.deepEqual([...snap.files.keys()], [], "the walk stopped before going deeper");
    const fewer = await snapshot([join(dir, "d0")]);
    assert.equal(fewer.capped, false);
    assert.equal(fewer.files.size, 1);
  }, { dir: RAM_DIR });
});
