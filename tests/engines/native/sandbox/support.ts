/** What the native sandbox's tests share: real bubblewrap, and folders removed after a test. */
import { existsSync } from "node:fs";
import { mkdir, realpath, rm } from "node:fs/promises";
import { join } from "node:path";
import process from "node:process";

export const BWRAP = "/usr/bin/bwrap";
export const hasBwrap = existsSync(BWRAP) && process.platform === "linux";
export const isRoot = process.getuid?.() === 0;

/** A test that needs bubblewrap: left out (and said so) where it is missing. */
export function bwrapTest(name: string, fn: () => Promise<void>, ignore = false): void {
  Deno.test({ name, ignore: !hasBwrap || ignore, fn });
}

/** Runs `fn` in a new folder (its real path: /tmp may be a link), removed afterwards. */
export async function withTempFolder(
  prefix: string,
  fn: (top: string) => Promise<void>,
): Promise<void> {
  const top = await realpath(await Deno.makeTempDir({ prefix }));
  try {
    await fn(top);
  } finally {
    await rm(top, { recursive: true, force: true });
  }
}

/** The same with a project folder `<top>/proj` made in it. */
export function withProject(
  prefix: string,
  fn: (cwd: string, top: string) => Promise<void>,
): Promise<void> {
  return withTempFolder(prefix, async (top) => {
    const cwd = join(top, "proj");
    await mkdir(cwd);
    await fn(cwd, top);
  });
}
