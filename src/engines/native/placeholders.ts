/**
 * Mount points for protected paths that do not exist yet. bubblewrap can only mount onto a
 * path that exists, so to keep a delegate from creating `.envrc` or `.claude/` in its working
 * directory it creates an empty file or directory there, on the host, and mounts a read-only
 * one over it. Those empty entries are removed when no sandbox uses them any more.
 *
 * Another sandbox (of this server or another one) may use the same mount point at the same
 * time, and unlinking a mount point detaches the mount in every namespace (Linux >= 3.18), so
 * each user registers itself in a directory of small files and the last one out removes it.
 */
import { createHash } from "node:crypto";
import { lstat, mkdir, readdir, rm, rmdir, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import process from "node:process";
import { processExists } from "../../platform/process_identity.ts";

export type PlaceholderKind = "file" | "dir";

export interface Placeholder {
  path: string;
  kind: PlaceholderKind;
}

let counter = 0;

const keyOf = (path: string) => createHash("sha256").update(path).digest("hex").slice(0, 24);

function alive(pid: number): boolean {
  return pid === process.pid || processExists(pid, true);
}

/** Registered uses of placeholders, in `dir` (private to the user: mode 0700). */
export class PlaceholderRegistry {
  constructor(readonly dir: string) {}

  /**
   * Records that a sandbox is about to mount onto `placeholders`; the returned function
   * releases them and removes each one that nobody else uses and that is still empty.
   */
  async claim(placeholders: readonly Placeholder[]): Promise<() => Promise<void>> {
    if (placeholders.length === 0) return () => Promise.resolve();
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const tag = `${process.pid}.${++counter}`;
    const entries = placeholders.map((p) => ({ ...p, entry: `${keyOf(p.path)}.${tag}` }));
    await Promise.all(
      entries.map((e) => writeFile(join(this.dir, e.entry), e.path, { mode: 0o600 })),
    );
    return async () => {
      await Promise.all(entries.map((e) => unlink(join(this.dir, e.entry)).catch(() => {})));
      const names = await readdir(this.dir).catch(() => [] as string[]);
      for (const e of entries) {
        const key = keyOf(e.path);
        const users = names.filter((n) => n.startsWith(`${key}.`));
        const inUse = users.some((n) => alive(Number(n.split(".")[1])));
        if (!inUse) {
          await Promise.all(users.map((n) => rm(join(this.dir, n), { force: true })));
          await removeIfEmpty(e);
        }
      }
    };
  }
}

/** Removes a placeholder left on the host if it is still what bubblewrap made: empty. */
async function removeIfEmpty(p: Placeholder): Promise<void> {
  try {
    const info = await lstat(p.path);
    if (p.kind === "file" && info.isFile() && info.size === 0) await unlink(p.path);
    // rmdir refuses a directory that is not empty, which is what we want.
    if (p.kind === "dir" && info.isDirectory()) await rmdir(p.path);
  } catch {
    // Gone already, not empty, or replaced: leave it.
  }
}
