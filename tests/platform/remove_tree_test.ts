/**
 * removeTree (src/platform/remove_tree.ts): a job's cache folder, where a delegate's build may
 * leave folders it made read-only, is still removed by `jobs prune` and retention. The owner of
 * such a folder cannot empty it with `rm -r`; root can, so as root the test runs the removal as
 * `nobody` (setpriv from util-linux) on a tree `nobody` made.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { tempDir } from "../support/harness.ts";
import { removeTree } from "../../src/platform/remove_tree.ts";

const root = process.getuid?.() === 0;

/** A cache with folders made read-only, a link out of it, and a file the link leads to. */
function cacheTree(base: string): { job: string; kept: string } {
  const outside = join(base, "outside");
  mkdirSync(outside);
  writeFileSync(join(outside, "keep.txt"), "keep");
  const cache = join(base, "job", "cache");
  mkdirSync(join(cache, "go-build", "ab"), { recursive: true });
  writeFileSync(join(cache, "go-build", "ab", "x"), "x");
  symlinkSync(outside, join(cache, "link"));
  chmodSync(join(cache, "go-build", "ab"), 0o500);
  chmodSync(join(cache, "go-build"), 0o500);
  return { job: join(base, "job"), kept: join(outside, "keep.txt") };
}

Deno.test("removeTree: a job's cache with read-only folders goes, and a link's target stays", async () => {
  const { job, kept } = cacheTree(tempDir("od-rmtree-"));
  await removeTree(job);
  assert.equal(existsSync(job), false);
  assert.equal(existsSync(kept), true);
  await removeTree(join(job, "missing"));
});

Deno.test({
  name: "removeTree: as the folders' owner, where `rm -r` alone fails",
  ignore: !root || process.platform !== "linux",
  fn() {
    // World-readable, for nobody: the test run's own TMPDIR may not be.
    const base = mkdtempSync("/tmp/od-rmtree-nobody-");
    try {
      chmodSync(base, 0o777);
      copyFileSync(
        fileURLToPath(new URL("../../src/platform/remove_tree.ts", import.meta.url)),
        join(base, "remove_tree.ts"),
      );
      writeFileSync(
        join(base, "run.ts"),
        `import { mkdirSync, chmodSync, existsSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { removeTree } from "./remove_tree.ts";
const job = "${base}/job";
mkdirSync(job + "/cache/a/b", { recursive: true });
writeFileSync(job + "/cache/a/b/x", "x");
chmodSync(job + "/cache/a/b", 0o500);
chmodSync(job + "/cache/a", 0o500);
const plain = await rm(job, { recursive: true, force: true }).then(() => "removed", (e) => e.code);
await removeTree(job);
console.log(plain, existsSync(job));
`,
      );
      const out = execFileSync("setpriv", [
        "--reuid=65534",
        "--regid=65534",
        "--clear-groups",
        "env",
        `HOME=${base}`,
        `DENO_DIR=${base}/.deno`,
        Deno.execPath(),
        "run",
        "-A",
        "--no-config",
        join(base, "run.ts"),
      ], { cwd: base, encoding: "utf8" });
      assert.equal(out.trim(), "EACCES false");
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  },
});
