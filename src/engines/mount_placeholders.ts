/**
 * Mount points for protected paths that do not exist yet. bubblewrap can only mount onto a
 * path that exists, so to keep a delegate from creating `.envrc` or `.claude/` in its working
 * directory it creates an empty file or directory there, on the host, and mounts a read-only
 * one over it. Those empty entries are removed when no sandbox uses them any more.
 *
 * Every server sharing a state dir registers its uses in one directory of small files, each
 * written before bubblewrap runs and naming the path, its kind and the owning server (pid and
 * start time). So a placeholder is known before it exists: the last user removes it, and a
 * server starting up removes those whose owners all died (killed mid-command) that are still
 * empty (placeholder_sweep.ts).
 *
 * Unlinking a mount point detaches the mount in every namespace (Linux >= 3.18), so a remover
 * must never take one that a sandbox is about to mount or has mounted. A user writes its entry,
 * then waits while a live remover's marker for that path exists; a remover writes its marker,
 * then reads the entries. One of the two sees the other's file: either the remover keeps the
 * path, or the user waits until it is gone and bubblewrap makes it again.
 */
import { createHash } from "node:crypto";
import { lstat, mkdir, readdir, readFile, rmdir, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import process from "node:process";
import { setTimeout as delay } from "node:timers/promises";
import {
  isRunning,
  processExists,
  type ProcessIdentity,
  selfIdentity,
} from "../platform/process_identity.ts";

export type PlaceholderKind = "file" | "dir";

export interface Placeholder {
  path: string;
  kind: PlaceholderKind;
}

/** Where the sandboxes of servers sharing `stateDir` register their placeholders. */
export function placeholderRunDir(stateDir: string): string {
  return join(stateDir, ".sandbox");
}

/** How long a user waits for a live remover of its path before the command is refused. */
const REMOVER_WAIT_MS = 5000;
const POLL_MS = 20;

/**
 * A number unique to this module instance's entries: a process may hold several instances
 * (Deno runs test modules side by side in one process), which share its pid.
 */
const instance = crypto.getRandomValues(new Uint32Array(1))[0]!;
let counter = 0;

export const keyOf = (path: string) => createHash("sha256").update(path).digest("hex").slice(0, 24);

/** One file of the registry: `<key>.<pid>.<n>` for a user, `....removing` for a remover. */
export interface EntryName {
  name: string;
  key: string;
  pid: number;
  remover: boolean;
}

export function parseEntryName(name: string): EntryName | undefined {
  const m = /^([0-9a-f]{24})\.(\d+)\.\d+(\.removing)?$/.exec(name);
  return m ? { name, key: m[1]!, pid: Number(m[2]), remover: m[3] !== undefined } : undefined;
}

/** What an entry holds. Entries of older versions hold only the path (no kind, no owner). */
export interface EntryRecord {
  path?: string;
  kind?: PlaceholderKind;
  owner?: ProcessIdentity;
}

export async function readEntry(dir: string, name: string): Promise<EntryRecord | undefined> {
  let text: string;
  try {
    text = await readFile(join(dir, name), "utf8");
  } catch {
    return undefined;
  }
  try {
    const parsed = JSON.parse(text) as EntryRecord;
    return typeof parsed === "object" && parsed !== null ? parsed : {};
  } catch {
    return { path: text };
  }
}

/** Whether the owner of an entry still runs: its pid and start time when recorded. */
export async function ownerAlive(entry: EntryName, record: EntryRecord | undefined) {
  const owner = record?.owner;
  if (!owner || owner.pid !== entry.pid) return processExists(entry.pid, true);
  if (owner.pid === process.pid && owner.startTime === (await selfIdentity()).startTime) {
    return true;
  }
  return await isRunning(owner);
}

async function writeEntry(dir: string, name: string, record: EntryRecord): Promise<void> {
  await writeFile(join(dir, name), JSON.stringify(record), { mode: 0o600 });
}

/** Registered uses of placeholders, in `dir` (private to the user: mode 0700). */
export class PlaceholderRegistry {
  constructor(readonly dir: string) {}

  /**
   * Records that a sandbox is about to mount onto `placeholders`, and waits until no remover
   * is taking one of them. `existingEmpty` are empty paths the sandbox would mount read-only:
   * those another sandbox registered are its placeholders, claimed here too (`adopted`) so that
   * they stay while this sandbox runs; the caller mounts them as placeholders. `release`
   * removes, once nobody uses them, those that are still empty. Throws when a remover does
   * not finish (nothing is then registered).
   */
  async claim(
    placeholders: readonly Placeholder[],
    existingEmpty: readonly Placeholder[] = [],
  ): Promise<{ adopted: Placeholder[]; release: () => Promise<void> }> {
    const none = { adopted: [], release: () => Promise.resolve() };
    if (placeholders.length === 0 && existingEmpty.length === 0) return none;
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const known = new Set((await this.#names()).map((e) => e.key));
    const adopted: Placeholder[] = [];
    for (const p of existingEmpty) {
      // Registered: someone's placeholder. Gone since the caller looked: a remover took it,
      // and bubblewrap must make it again (a read-only bind needs its source to exist).
      if (known.has(keyOf(p.path)) || !(await lstat(p.path).then(() => true, () => false))) {
        adopted.push(p);
      }
    }
    const used = [...placeholders, ...adopted];
    if (used.length === 0) return none;
    const self = await selfIdentity();
    const tag = `${process.pid}.${instance}${++counter}`;
    const entries = used.map((p) => ({ ...p, name: `${keyOf(p.path)}.${tag}` }));
    const release = async () => {
      await removeUnused(this.dir, entries, self);
    };
    try {
      await Promise.all(
        entries.map((e) =>
          writeEntry(this.dir, e.name, { path: e.path, kind: e.kind, owner: self })
        ),
      );
      await this.#waitForRemovers(new Set(entries.map((e) => keyOf(e.path))));
    } catch (e) {
      await release();
      throw e;
    }
    return { adopted, release };
  }

  async #names(): Promise<EntryName[]> {
    const names = await readdir(this.dir).catch(() => [] as string[]);
    return names.flatMap((n) => parseEntryName(n) ?? []);
  }

  async #waitForRemovers(keys: ReadonlySet<string>): Promise<void> {
    const deadline = performance.now() + REMOVER_WAIT_MS;
    for (;;) {
      const removers = (await this.#names()).filter((e) => e.remover && keys.has(e.key));
      let live: string | undefined;
      for (const r of removers) {
        const record = await readEntry(this.dir, r.name);
        if (record === undefined) continue;
        if (await ownerAlive(r, record)) live ??= record.path ?? r.name;
        else await unlink(join(this.dir, r.name)).catch(() => {});
      }
      if (live === undefined) return;
      if (performance.now() > deadline) {
        throw new Error(
          `Cannot mount a placeholder on "${live}": another server (pid ${
            removers[0]?.pid
          }) has been removing it for ${REMOVER_WAIT_MS / 1000} s and has not finished. ` +
            `Run the command again; if this repeats, check that process`,
        );
      }
      await delay(POLL_MS);
    }
  }
}

/**
 * Removes `entries` (a remover's own uses, or dead owners' left over) from the registry, and
 * each placeholder nobody else uses that is still empty. Returns the paths removed and the
 * ones kept because they are no longer empty.
 */
export async function removeUnused(
  dir: string,
  entries: readonly { name: string; path: string; kind?: PlaceholderKind }[],
  self: ProcessIdentity,
): Promise<{ removed: string[]; kept: string[] }> {
  const out = { removed: [] as string[], kept: [] as string[] };
  const byKey = new Map(entries.map((e) => [keyOf(e.path), e]));
  const tag = `${process.pid}.${instance}${++counter}.removing`;
  const markers = [...byKey.keys()].map((key) => `${key}.${tag}`);
  // The markers first: a user that registers after them waits for this to finish.
  await Promise.all(
    markers.map((m) => writeEntry(dir, m, { path: byKey.get(m.slice(0, 24))!.path, owner: self })),
  );
  try {
    await Promise.all(entries.map((e) => unlink(join(dir, e.name)).catch(() => {})));
    const names = (await readdir(dir).catch(() => [] as string[]))
      .flatMap((n) => parseEntryName(n) ?? []);
    for (const [key, e] of byKey) {
      const users = names.filter((n) => n.key === key && !n.remover);
      let inUse = false;
      const dead: string[] = [];
      for (const u of users) {
        if (await ownerAlive(u, await readEntry(dir, u.name))) inUse = true;
        else dead.push(u.name);
      }
      if (inUse) continue;
      await Promise.all(dead.map((n) => unlink(join(dir, n)).catch(() => {})));
      const gone = await removeIfEmpty(e.path, e.kind);
      if (gone === "removed") out.removed.push(e.path);
      if (gone === "kept") out.kept.push(e.path);
    }
  } finally {
    await Promise.all(markers.map((m) => unlink(join(dir, m)).catch(() => {})));
  }
  return out;
}

/**
 * Removes a placeholder left on the host if it is still what bubblewrap made: an empty file
 * or directory (of `kind`, when known). Never a file with content, a folder with entries or a
 * link.
 */
async function removeIfEmpty(
  path: string,
  kind: PlaceholderKind | undefined,
): Promise<"removed" | "kept" | "absent"> {
  let info;
  try {
    info = await lstat(path);
  } catch {
    return "absent";
  }
  try {
    if (kind !== "dir" && info.isFile() && info.size === 0) {
      await unlink(path);
      return "removed";
    }
    if (kind !== "file" && info.isDirectory()) {
      // rmdir refuses a directory that is not empty, which is what we want.
      await rmdir(path);
      return "removed";
    }
  } catch {
    // Not empty, or replaced meanwhile: leave it.
  }
  return "kept";
}
