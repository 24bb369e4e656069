/**
 * Credential stores known by what they are, not by the name that found them. A store reached
 * through a linked folder (`.config -> cfg` in the project makes `cfg/gh` the GitHub CLI's
 * store) is hidden at its real path; but `cfg/gh` is a store only while `.config` leads there.
 * A delegate could remove or relink `.config`, and the next command (native engine), turn or
 * job (both engines) found nothing by name at `cfg/gh` and showed its tokens.
 *
 * So every store a turn hides that a link led to is remembered by its identity (device and
 * inode) in the state dir, one small file each, and every later turn and command hides it too
 * while it is in the job's directories: at its remembered path while the same folder or file is
 * there, else wherever in the roots the walk below finds it again (a `mv cfg cfg2`). One that is
 * gone from the roots is forgotten.
 */
import { mkdirSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { basename, join } from "node:path";
import { writeFileAtomicSync } from "../platform/atomic_write.ts";
import { formatCount } from "../platform/count_text.ts";
import { dirNames } from "../platform/dir_names.ts";
import { pathFacts, type StatFacts } from "../platform/path_facts.ts";
import { isInsideRoots } from "../platform/path_inside.ts";
import { CREDENTIAL_PATHS } from "./protected_paths.ts";

/** The state dir's folder of remembered stores. */
export function knownStoresDir(stateDir: string): string {
  return join(stateDir, ".known-stores");
}

/** Entries looked at when searching the roots for a remembered store that moved. */
export const STORE_SEARCH_ENTRIES = 200_000;

/** What a turn hides besides the stores it found by name. */
export interface KnownStores {
  /** Real paths of remembered stores, inside the roots. */
  paths: string[];
  /** Set when a remembered store moved and the search stopped before finding it. */
  incomplete?: string;
}

const idOf = (s: Pick<StatFacts, "dev" | "ino">) => `${s.dev}-${s.ino}`;

/** A store's record: where it was, and what it is (a recycled inode is not taken for it). */
interface StoreRecord {
  path: string;
  kind: "dir" | "file";
}

/**
 * The top-level credential stores of `roots` that a link leads to (`.config/gh` through
 * `.config -> cfg`): their real paths, inside the roots.
 */
export function linkedStores(roots: readonly string[]): string[] {
  return storesBehindLinks(
    roots.flatMap((root) => CREDENTIAL_PATHS.map((entry) => join(root, entry))),
    roots,
  );
}

/**
 * The real paths, inside the roots, of the stores that links lead to among `named`: stores found
 * by name whose path passes through a link (`sub/.ssh -> ../keys`), and the places a link of a
 * store's first parts leads to (`sub/.config/gh` through `sub/.config -> ../cfg`, from
 * names.ts storesThroughLink). Those that lead nowhere or out of the roots are left out.
 */
export function storesBehindLinks(named: readonly string[], roots: readonly string[]): string[] {
  const out = new Set<string>();
  for (const path of named) {
    let real: string;
    try {
      real = realpathSync(path);
    } catch {
      continue;
    }
    if (real !== path && isInsideRoots(roots, real) && !roots.includes(real)) out.add(real);
  }
  return [...out].sort();
}

/** Remembers each of `paths` (real paths of stores) by its identity. Never throws. */
export function rememberStores(dir: string, paths: readonly string[]): void {
  for (const path of paths) {
    try {
      const s = pathFacts(path);
      if (!s || (s.kind !== "dir" && s.kind !== "file")) continue;
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const file = join(dir, idOf(s));
      if (readRecord(file)?.path === path) continue;
      writeRecord(file, { path, kind: s.kind });
    } catch {
      // Not remembered: this turn still hides it, found by its name.
    }
  }
}

function writeRecord(file: string, record: StoreRecord): void {
  writeFileAtomicSync(file, JSON.stringify(record) + "\n");
}

function readRecord(file: string): StoreRecord | undefined {
  try {
    const parsed = JSON.parse(readFileSync(file, "utf8")) as Partial<StoreRecord> | null;
    const { path, kind } = parsed ?? {};
    return typeof path === "string" && (kind === "dir" || kind === "file")
      ? { path, kind }
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The remembered stores inside `roots`, where they are now. A record whose store left the roots
 * (deleted, or moved out) is removed; one whose path now holds something else is looked for in
 * the roots by identity, and its record follows it.
 */
export function knownStores(
  dir: string,
  roots: readonly string[],
  maxEntries = STORE_SEARCH_ENTRIES,
): KnownStores {
  let ids: string[];
  try {
    ids = dirNames(dir).filter((n) => /^\d+-\d+$/.test(n));
  } catch {
    return { paths: [] };
  }
  const paths: string[] = [];
  const lost = new Map<string, StoreRecord>();
  for (const id of ids) {
    const record = readRecord(join(dir, id));
    if (!record || !isInsideRoots(roots, record.path)) continue;
    let s: StatFacts | undefined;
    try {
      s = pathFacts(record.path);
    } catch {
      s = undefined;
    }
    if (s && idOf(s) === id) paths.push(record.path);
    else lost.set(id, record);
  }
  if (lost.size === 0) return { paths: paths.sort() };
  const found = searchByIdentity(roots, lost, maxEntries);
  for (const [id, path] of found.paths) {
    paths.push(path);
    writeRecord(join(dir, id), { path, kind: lost.get(id)!.kind });
    lost.delete(id);
  }
  if (found.incomplete) {
    return {
      paths: paths.sort(),
      incomplete: `${[...lost.values()].map((r) => r.path).join(", ")} (a credential store ` +
        `seen before) moved, and the job's directories hold over ` +
        `${formatCount(maxEntries)} entries to look for it in`,
    };
  }
  // Gone from the roots: nothing there to hide any more.
  for (const id of lost.keys()) rmSync(join(dir, id), { force: true });
  return { paths: paths.sort() };
}

/**
 * Where in `roots` the stores of `lost` are now (links not followed): the entry with the same
 * identity, kind and name (a store's own name cannot change while a turn hides it, a mount
 * point cannot be renamed; its folder can).
 */
function searchByIdentity(
  roots: readonly string[],
  lost: ReadonlyMap<string, StoreRecord>,
  maxEntries: number,
): { paths: Map<string, string>; incomplete?: true } {
  const paths = new Map<string, string>();
  const names = new Set([...lost.values()].map((r) => basename(r.path)));
  const pending = [...roots];
  let seen = 0;
  while (pending.length > 0 && paths.size < lost.size) {
    const at = pending.pop()!;
    let entries: string[];
    try {
      entries = dirNames(at);
    } catch {
      continue;
    }
    for (const name of entries) {
      if (++seen > maxEntries) return { paths, incomplete: true };
      const path = join(at, name);
      let s: StatFacts | undefined;
      try {
        s = pathFacts(path);
      } catch {
        continue;
      }
      if (!s) continue;
      const record = names.has(name) ? lost.get(idOf(s)) : undefined;
      if (record && record.kind === s.kind && basename(record.path) === name) {
        paths.set(idOf(s), path);
      } else if (s.kind === "dir") pending.push(path);
    }
  }
  return { paths };
}
