import assert from "node:assert/strict";
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic, writeFileAtomicSync } from "../../src/platform/atomic_write.ts";

/** Runs `fn` with a fresh temporary directory, removed afterwards. */
async function withTempDir(fn: (sb: { root: string }) => Promise<void>): Promise<void> {
  const root = await Deno.makeTempDir({ prefix: "atomic_write_test_" });
  try {
    await fn({ root });
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

const posix = Deno.build.os !== "windows";

for (
  const [name, write] of [
    ["writeFileAtomicSync", (p: string, d: string | Uint8Array) => writeFileAtomicSync(p, d)],
    ["writeFileAtomic", writeFileAtomic],
  ] as const
) {
  Deno.test(`${name} creates missing directories and writes the content`, async () => {
    await withTempDir(async ({ root }) => {
      const file = join(root, "a", "b", "c.json");
      await write(file, "hello\n");
      assert.equal(readFileSync(file, "utf8"), "hello\n");
      assert.deepEqual(readdirSync(join(root, "a", "b")), ["c.json"]);
      if (posix) assert.equal(statSync(file).mode & 0o777, 0o600);
    });
  });

  Deno.test(`${name} replaces an existing file and leaves no temp file`, async () => {
    await withTempDir(async ({ root }) => {
      const file = join(root, "c.json");
      writeFileSync(file, "old content that is longer");
      await write(file, new TextEncoder().encode("new"));
      await write(file, "newer");
      assert.equal(readFileSync(file, "utf8"), "newer");
      assert.deepEqual(readdirSync(root).sort(), ["c.json"]);
    });
  });

  Deno.test(`${name} fails cleanly when the target cannot be replaced`, async () => {
    await withTempDir(async ({ root }) => {
      const target = join(root, "dir");
      mkdirSync(target);
      writeFileSync(join(target, "inside"), "x");
      await assert.rejects(async () => await write(target, "data"));
      assert.deepEqual(readdirSync(root).sort(), ["dir"], "temp file removed");
      assert.deepEqual(readdirSync(target), ["inside"]);
    });
  });
}
