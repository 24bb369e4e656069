/**
 * Removes a folder that holds what a sandboxed command wrote: a job's cache folder, where a
 * build may leave read-only folders (Go's module cache makes its folders 0555, and a delegate
 * may `chmod 0500` anything it writes). `rm -r` cannot empty a folder its owner may not write,
 * so the folders are made writable again, without following a link, before a second try.
 */
import { chmod, lstat, readdir, rm } from "node:fs/promises";
import { join } from "node:path";

const codeOf = (e: unknown) => (e as { code?: string }).code;

/** Entries looked at when restoring modes: past it the second `rm` says what is left. */
const MAX_ENTRIES = 100_000;

/** `rm -rf path`, also when folders below it were made read-only. */
export async function removeTree(path: string): Promise<void> {
  try {
    await rm(path, { recursive: true, force: true });
    return;
  } catch (e) {
    if (codeOf(e) !== "EACCES" && codeOf(e) !== "EPERM") throw e;
  }
  const pending = [path];
  let seen = 0;
  while (pending.length > 0 && seen++ < MAX_ENTRIES) {
    const dir = pending.pop()!;
    const info = await lstat(dir).catch(() => undefined);
    if (!info?.isDirectory()) continue;
    await chmod(dir, 0o700).catch(() => {});
    for (const name of await readdir(dir).catch(() => [] as string[])) {
      pending.push(join(dir, name));
    }
  }
  await rm(path, { recursive: true, force: true });
}
