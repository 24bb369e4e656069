/**
 * The tests' temporary folders: one way to make them (issue 33 found `tempDir` in 71 files and
 * `mkdtemp` in about 40). A module of its own, without the harness's MCP client, so that unit
 * tests load nothing more for it; the harness re-exports it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";

/** Every folder to remove when this test module ends. */
const made: string[] = [];

/**
 * OD_KEEP_TEMP=1: temporary folders stay, for a look after a failure, or because whoever runs
 * the test removes them all at once (scripts/test.ts, which points TMPDIR at a folder of its
 * own). Tests that remove a large tree of their own early leave it too.
 */
export const KEEP_TEMP = Boolean(process.env.OD_KEEP_TEMP);

/**
 * Removes `dir` when the test module's isolate ends, after all its tests, whatever OD_KEEP_TEMP
 * says: for folders made outside the system's temporary folder, which nobody else removes
 * (tests/support/harness.ts's claudeWrapper, under the repository's `.tools/`).
 */
export function removeAtEnd(dir: string): void {
  if (made.length === 0) {
    globalThis.addEventListener("unload", () => {
      for (const d of made) {
        try {
          rmSync(d, { recursive: true, force: true });
        } catch {
          // A folder still in use or not ours to remove: left for the system's /tmp cleaning.
        }
      }
    });
  }
  made.push(dir);
}

export function tempDir(prefix = "od-test-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  // A run of the whole suite made several GiB of them (52k-file trees, job folders).
  if (!KEEP_TEMP) removeAtEnd(dir);
  return dir;
}
