/**
 * At server start: the placeholders of servers that died while a sandbox used them (a SIGKILL,
 * a crash, a power cut) are removed from the user's projects, when they are still empty and no
 * live server uses them. Without this they stay forever: an empty `.envrc` hides a parent
 * folder's, an empty `.pre-commit-config.yaml` breaks every commit.
 */
import { readdir, unlink } from "node:fs/promises";
import { join } from "node:path";
import { selfIdentity } from "../platform/process_identity.ts";
import {
  type EntryName,
  ownerAlive,
  parseEntryName,
  type PlaceholderKind,
  placeholderRunDir,
  readEntry,
  removeUnused,
} from "./mount_placeholders.ts";

export { placeholderRunDir };

/** Removes dead owners' placeholders registered in `dir`; the paths removed and kept. */
export async function sweepPlaceholders(
  dir: string,
): Promise<{ removed: string[]; kept: string[] }> {
  const names = (await readdir(dir).catch(() => [] as string[]))
    .flatMap((n) => parseEntryName(n) ?? []);
  const byKey = new Map<string, EntryName[]>();
  for (const e of names) byKey.set(e.key, [...(byKey.get(e.key) ?? []), e]);
  const leftover: { name: string; path: string; kind?: PlaceholderKind }[] = [];
  for (const entries of byKey.values()) {
    const found: typeof leftover = [];
    let inUse = false;
    for (const e of entries) {
      const record = await readEntry(dir, e.name);
      if (record === undefined) continue;
      if (await ownerAlive(e, record)) {
        if (!e.remover) inUse = true;
        continue;
      }
      if (e.remover || typeof record.path !== "string") {
        await unlink(join(dir, e.name)).catch(() => {});
      } else {
        found.push({
          name: e.name,
          path: record.path,
          ...(record.kind === "file" || record.kind === "dir" ? { kind: record.kind } : {}),
        });
      }
    }
    if (!inUse) leftover.push(...found);
    // A live user's placeholder stays; only its dead users' entries go.
    else await Promise.all(found.map((f) => unlink(join(dir, f.name)).catch(() => {})));
  }
  if (leftover.length === 0) return { removed: [], kept: [] };
  return await removeUnused(dir, leftover, await selfIdentity());
}

/**
 * Sweeps in the background and logs what it did; never throws. `after` is awaited first: the
 * recovery of dead servers' jobs, which stops whatever of theirs still runs.
 */
export async function startPlaceholderSweep(
  dir: string,
  log: (line: string) => void,
  after: Promise<unknown> = Promise.resolve(),
): Promise<void> {
  await after.catch(() => {});
  try {
    const { removed, kept } = await sweepPlaceholders(dir);
    if (removed.length > 0) {
      log(
        `removed ${removed.length} empty placeholder(s) left by stopped servers: ${
          removed.slice(0, 5).join(", ")
        }${removed.length > 5 ? ", ..." : ""}`,
      );
    }
    if (kept.length > 0) {
      log(
        `kept ${kept.length} placeholder path(s) of stopped servers that now have content: ${
          kept.slice(0, 5).join(", ")
        }${kept.length > 5 ? ", ..." : ""}`,
      );
    }
  } catch (e) {
    log(`cannot remove the placeholders of stopped servers in ${dir}: ${(e as Error).message}`);
  }
}
