/**
 * Secret files' content in git's object store (issue 28, item 2). `.git` is read-only to
 * delegates but readable, and git keeps what it was once given: after `git stash -u && git
 * stash pop`, or `git add .env; git reset .env`, the blob of `.env` stays in `.git/objects`,
 * unreachable, and `git cat-file -p <id>` prints it; a tracked or once-committed `.env` is in
 * the history (`git show HEAD~3:.env`). Hiding the file in the working tree is then no
 * protection. This finds, in each repository a turn's commands can read, the objects that hold
 * a secret:
 *
 * - blobs that an index entry or any stored tree names with a secret file's name, or that sit
 *   in a tree named like a credential store (`.ssh/`, `.aws/`);
 * - blobs whose content is a secret file's content now (hashed as git hashes a blob), wherever
 *   they are;
 * - loose blobs that no loose tree and no index entry names (what `git add` left behind when
 *   it was undone): their names are unknown, no git command needs them, so they are hidden
 *   whatever they hold.
 *
 * Loose objects are hidden one by one. A pack cannot be hidden in part, so when one holds a
 * secret, the commands get a view of the store instead: a pack of every packed object but the
 * secret ones, built once in the state dir and mounted over `objects/pack`. git then works as
 * before and fails only for those objects. Where no view can be made (no git, a store over the
 * bounds), those packs are hidden whole, and the note says the history is unreadable.
 *
 * Trees in packs never change: each pack's secret-named entries are found once (one pass over
 * its trees with `git cat-file`) and kept in the state dir.
 */
import { createHash } from "node:crypto";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { open, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import process from "node:process";
import { pathFacts } from "../platform/path_facts.ts";
import { gitBytes } from "../platform/git.ts";
import {
  blobId,
  type GitStore,
  looseIds,
  loosePath,
  looseType,
  type ObjectFormat,
  packFiles,
  PackIndex,
  readLoose,
  treeEntries,
} from "./git_store.ts";
import { CREDENTIAL_PATHS, isSecretFileName, SECRET_FILE_PATTERNS } from "./protected_paths.ts";
import { formatCount } from "../platform/count_text.ts";

/** The state dir's folder of views and pack findings. */
export function gitCacheDir(stateDir: string): string {
  return join(stateDir, ".git-secrets");
}

/** Loose objects looked at in one store; past it, the store's loose objects are all hidden. */
export const MAX_LOOSE = 50_000;
/**
 * Packed objects of one store whose trees are searched for secret names, at most: a first
 * turn in a store this large reads its trees once (about 10 s per million objects, then kept).
 * Past it, a store's history is not searched by name; its index and the secret files' content
 * still are (docs/security.md says so).
 */
export const MAX_SEARCHED_OBJECTS = 2_000_000;
/** A view is built for stores of at most this many packed objects, and this many bytes. */
export const MAX_VIEW_OBJECTS = 1_000_000;
export const MAX_VIEW_BYTES = 2 * 1024 * 1024 * 1024;
/** Ids asked of `git cat-file --batch-check` at once. */
const CHECK_BATCH = 100_000;
/** Trees read per `git cat-file --batch` call (its output is collected whole). */
const TREE_BATCH = 4_000;
/** A tree's body read at most (a tree of 100,000 entries is about 4 MB). */
const MAX_TREE_BYTES = 16 * 1024 * 1024;
/** A secret file's content hashed at most; a larger one is not looked for. */
const MAX_HASHED_BYTES = 256 * 1024 * 1024;

/** Single-name credential stores and files: a tree or file of such a name holds credentials. */
const CREDENTIAL_NAMES = new Set(CREDENTIAL_PATHS.filter((p) => !p.includes("/")));

/** Regular files' modes in a tree (a symlink's blob is its target's name, not content). */
const FILE_MODES = new Set(["100644", "100755", "100664"]);

/** What one store hides. */
export interface StoreSecrets {
  store: GitStore;
  /** Loose object files to hide (absolute). */
  loose: string[];
  /** Files of packs hidden whole (`.pack`, `.idx` and their siblings). */
  packs: string[];
  /** How many packs those files make, and how many of them are cruft packs. */
  hiddenPacks: number;
  cruftPacks: number;
  /** A folder to mount over `objects/pack` instead: every packed object but the secrets. */
  view?: string;
  /** Path -> the secret it holds, for refusals: `.env` or `an unnamed blob`. */
  owners: Map<string, string>;
  /** For the reply, when anything was hidden. */
  note?: string;
  /** Why the store could not be looked at whole: callers hide all of its objects. */
  incomplete?: string;
  /** Why its history was not searched by name (a store over MAX_SEARCHED_OBJECTS). */
  unsearched?: string;
}

export interface GitSecretOptions {
  /** Secret files in the turn's directories (real paths): their content is looked for. */
  secretFiles: readonly string[];
  /** Secret-looking names the user lets delegates read (`allowSecretFiles`). */
  allow: readonly string[];
  /** Where views and each pack's findings are kept (in the state dir); none: packs are hidden. */
  cacheDir?: string;
  /**
   * `secretFiles` as read for every store of one turn (SecretContents); without it each store
   * reads them itself.
   */
  contents?: SecretContents;
}

/**
 * The secret files of one turn, looked at once for all its stores: their change times (part of
 * each store's memo key) and their content's object ids. Read per store, 100 nested
 * repositories each with a secret `.envrc` cost 10,000 file reads: 10.7 s of a first turn and
 * 2.3 s of the next (issue 34, measured with timestamps in the server).
 */
export class SecretContents {
  #key: string | undefined;
  readonly #ids = new Map<ObjectFormat, Promise<Named>>();

  constructor(readonly files: readonly string[]) {}

  /** What the files' change would change: their paths with inode, size and times. */
  key(): string {
    if (this.#key === undefined) {
      const hash = createHash("sha256");
      for (const file of this.files) hash.update(`${file}=${statKey(file)}\0`);
      this.#key = hash.digest("hex");
    }
    return this.#key;
  }

  /** The object id each file's content has in a store of `format`. */
  ids(format: ObjectFormat): Promise<Named> {
    let ids = this.#ids.get(format);
    if (!ids) this.#ids.set(format, ids = contentIds(format, this.files));
    return ids;
  }
}

/**
 * What a change of the file at `path` (its link followed) would change. Synchronous and without
 * an error object for a missing file (a store without an index is common): through Deno's
 * node:fs an awaited stat took about 40 µs, twice a repository a turn (path_facts.ts).
 */
function statKey(path: string): string {
  let s;
  try {
    s = pathFacts(path, true);
  } catch {
    return "?";
  }
  return s ? `${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}` : "-";
}

/** A secret blob found by name: the name it was stored under. */
type Named = Map<string, string>;

/** The secret-named file entries of one pack's trees, and its credential-named subtrees. */
interface PackFindings {
  named: [string, string][];
  credentialTrees: [string, string][];
}

/** A key of the rules that decide what a name is: a change of them makes old findings stale. */
const RULES_KEY = createHash("sha256").update(
  JSON.stringify([SECRET_FILE_PATTERNS, [...CREDENTIAL_NAMES], 1]),
).digest("hex").slice(0, 12);

/** Findings per pack, for this process (the disk cache serves other servers and restarts). */
const packMemo = new Map<string, PackFindings>();

function isCredentialName(name: string): boolean {
  return CREDENTIAL_NAMES.has(name) || CREDENTIAL_NAMES.has(name.toLowerCase());
}

/** Whether a tree entry names a file whose content is a secret. */
function secretEntry(mode: string, name: string, allow: readonly string[]): boolean {
  return FILE_MODES.has(mode) && (isSecretFileName(name, allow) || isCredentialName(name));
}

/** git, with the store pinned (a `.git` file or `commondir` a delegate wrote is not followed). */
function runGit(store: GitStore, args: string[], stdin?: Uint8Array) {
  return gitBytes(args, {
    cwd: store.commonDir,
    gitDir: store.gitDir,
    commonDir: store.commonDir,
    ...(stdin ? { stdin } : {}),
    timeoutMs: 300_000,
    maxBytes: 256 * 1024 * 1024,
  });
}

/** The index's entries with secret names: blob id -> path. */
async function indexSecrets(store: GitStore, allow: readonly string[]): Promise<Named> {
  const out: Named = new Map();
  if (!existsSync(join(store.gitDir, "index"))) return out;
  const { stdout } = await runGit(store, ["ls-files", "-s", "-z"]);
  for (const line of new TextDecoder().decode(stdout).split("\0")) {
    const m = /^(\d+) ([0-9a-f]+) \d\t(.+)$/s.exec(line);
    if (!m) continue;
    const [, mode, id, path] = m;
    const parts = path!.split("/");
    const inCredentialStore = parts.slice(0, -1).some(isCredentialName);
    if (inCredentialStore || secretEntry(mode!, parts.at(-1)!, allow)) out.set(id!, path!);
  }
  return out;
}

/** Parses `git cat-file --batch` output: `<id> <type> <size>\n<body>\n` one after another. */
function* batchObjects(out: Uint8Array): Generator<{ id: string; type: string; body: Uint8Array }> {
  let at = 0;
  while (at < out.length) {
    const nl = out.indexOf(0x0a, at);
    if (nl < 0) return;
    const [id, type, size] = new TextDecoder().decode(out.subarray(at, nl)).split(" ");
    if (type === "missing" || size === undefined) {
      at = nl + 1;
      continue;
    }
    const n = Number(size);
    yield { id: id!, type: type!, body: out.subarray(nl + 1, nl + 1 + n) };
    at = nl + 1 + n + 1;
  }
}

/** Reads `ids` (trees) with git, in batches, handing each to `each`. */
async function readTrees(
  store: GitStore,
  ids: readonly string[],
  each: (id: string, body: Uint8Array) => void,
): Promise<void> {
  for (let i = 0; i < ids.length; i += TREE_BATCH) {
    const batch = ids.slice(i, i + TREE_BATCH);
    const { stdout } = await runGit(
      store,
      ["cat-file", "--batch"],
      new TextEncoder().encode(batch.join("\n") + "\n"),
    );
    for (const o of batchObjects(stdout)) if (o.type === "tree") each(o.id, o.body);
  }
}

/** One pack's findings: from memory, the state dir, or a pass over its trees. */
async function packFindings(
  store: GitStore,
  idx: string,
  index: PackIndex,
  cacheDir: string | undefined,
): Promise<PackFindings> {
  const key = `${basename(idx, ".idx")}.${RULES_KEY}`;
  const memo = packMemo.get(key);
  if (memo) return memo;
  const file = cacheDir ? join(cacheDir, "packs", `${key}.json`) : undefined;
  if (file) {
    try {
      const cached = JSON.parse(readFileSync(file, "utf8")) as PackFindings;
      if (Array.isArray(cached.named) && Array.isArray(cached.credentialTrees)) {
        packMemo.set(key, cached);
        return cached;
      }
    } catch {
      // Not there yet, or unreadable: found again.
    }
  }
  const trees: string[] = [];
  let chunk: string[] = [];
  const check = async () => {
    const { stdout } = await runGit(
      store,
      ["cat-file", "--batch-check=%(objectname) %(objecttype)"],
      new TextEncoder().encode(chunk.join("\n") + "\n"),
    );
    for (const line of new TextDecoder().decode(stdout).split("\n")) {
      if (line.endsWith(" tree")) trees.push(line.slice(0, line.indexOf(" ")));
    }
    chunk = [];
  };
  for (const id of index.all()) {
    chunk.push(id);
    if (chunk.length >= CHECK_BATCH) await check();
  }
  if (chunk.length > 0) await check();
  const found: PackFindings = { named: [], credentialTrees: [] };
  await readTrees(store, trees, (_id, body) => {
    for (const e of treeEntries(body, store.format)) {
      // Every secret-looking name, whatever the user allows: the allowance applies at use.
      if (secretEntry(e.mode, e.name, [])) found.named.push([e.id, e.name]);
      else if (e.mode === "40000" && isCredentialName(e.name)) {
        found.credentialTrees.push([e.id, e.name]);
      }
    }
  });
  packMemo.set(key, found);
  if (file) {
    mkdirSync(join(cacheDir!, "packs"), { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(found));
    renameSync(tmp, file);
  }
  return found;
}

/** Every file blob below the trees `roots` (credential stores): id -> path shown. */
async function blobsBelow(
  store: GitStore,
  roots: readonly [string, string][],
  into: Named,
): Promise<void> {
  let pending = roots.map(([id, name]) => ({ id, path: name }));
  const seen = new Set<string>();
  while (pending.length > 0) {
    const byId = new Map(pending.filter((p) => !seen.has(p.id)).map((p) => [p.id, p.path]));
    for (const id of byId.keys()) seen.add(id);
    const next: { id: string; path: string }[] = [];
    await readTrees(store, [...byId.keys()], (id, body) => {
      for (const e of treeEntries(body, store.format)) {
        const path = `${byId.get(id)}/${e.name}`;
        if (e.mode === "40000") next.push({ id: e.id, path });
        else if (FILE_MODES.has(e.mode) && !into.has(e.id)) into.set(e.id, path);
      }
    });
    pending = next;
  }
}

/** The blob ids of the secret files' content now: id -> path. */
async function contentIds(format: ObjectFormat, files: readonly string[]): Promise<Named> {
  const out: Named = new Map();
  for (const file of files) {
    try {
      const info = await stat(file);
      if (!info.isFile() || info.size > MAX_HASHED_BYTES) continue;
      const handle = await open(file, "r");
      try {
        out.set(blobId(await handle.readFile(), format), file);
      } finally {
        await handle.close();
      }
    } catch {
      // Gone or unreadable: nothing of it to look for.
    }
  }
  return out;
}

/** The secrets of one store. */
export async function storeSecrets(
  store: GitStore,
  options: GitSecretOptions,
): Promise<StoreSecrets> {
  // What the answer depends on, cheaply: a turn in an unchanged repository (the usual case:
  // delegates cannot write `.git`) costs a few stat calls and folder reads.
  const loose = await looseIds(store, MAX_LOOSE);
  const packs = await packFiles(store);
  const contents = options.contents ?? new SecretContents(options.secretFiles);
  const key = fingerprint(store, loose.ids, packs, options, contents);
  const memo = storeMemo.get(store.gitDir);
  if (memo && memo.key === key && (!memo.result.view || existsSync(memo.result.view))) {
    return memo.result;
  }
  const result = await findStoreSecrets(store, options, loose, packs, contents);
  storeMemo.set(store.gitDir, { key, result });
  return result;
}

/** The last answer per git dir, with what it depended on. */
const storeMemo = new Map<string, { key: string; result: StoreSecrets }>();

/** A digest of everything storeSecrets reads: the index, the objects' names, the secret files. */
function fingerprint(
  store: GitStore,
  looseIds: readonly string[],
  packs: readonly { pack: string }[],
  options: GitSecretOptions,
  contents: SecretContents,
): string {
  const hash = createHash("sha256");
  hash.update(`${statKey(join(store.gitDir, "index"))}\0`);
  hash.update(`${looseIds.join(",")}\0${packs.map((p) => basename(p.pack)).join(",")}\0`);
  hash.update(`${contents.key()}\0`);
  hash.update(`${options.allow.join("\0")}\0${options.cacheDir ?? ""}`);
  return hash.digest("hex");
}

async function findStoreSecrets(
  store: GitStore,
  options: GitSecretOptions,
  loose: { ids: string[]; over: boolean },
  packs: readonly { pack: string; idx: string }[],
  contents: SecretContents,
): Promise<StoreSecrets> {
  const { allow } = options;
  const named: Named = await indexSecrets(store, allow);
  const owners = new Map<string, string>();
  const result: StoreSecrets = {
    store,
    loose: [],
    packs: [],
    hiddenPacks: 0,
    cruftPacks: 0,
    owners,
  };
  const hidePack = (p: { pack: string; idx: string }, owner: string) => {
    const base = p.pack.slice(0, -".pack".length);
    const siblings = [".mtimes", ".rev", ".bitmap"].map((e) => base + e).filter(existsSync);
    for (const f of [p.pack, p.idx, ...siblings]) {
      result.packs.push(f);
      owners.set(f, owner);
    }
    result.hiddenPacks++;
  };

  // Loose objects: trees read (they name blobs), blobs kept for the orphan rule.
  const looseBlobs: string[] = [];
  const namedByTree = new Set<string>(named.keys());
  const credentialTrees: [string, string][] = [];
  for (const id of loose.ids) {
    const path = loosePath(store, id);
    const type = looseType(path);
    if (type === "blob") looseBlobs.push(id);
    else if (type === "tree") {
      const tree = await readLoose(path, MAX_TREE_BYTES);
      for (const e of tree ? treeEntries(tree.body, store.format) : []) {
        namedByTree.add(e.id);
        if (secretEntry(e.mode, e.name, allow)) named.set(e.id, e.name);
        else if (e.mode === "40000" && isCredentialName(e.name)) {
          credentialTrees.push([e.id, e.name]);
        }
      }
    }
  }

  // Packs: each one's trees, found once.
  const indexes: { pack: string; idx: string; index: PackIndex }[] = [];
  let packed = 0;
  let unreadable: string | undefined;
  for (const p of packs) {
    // A cruft pack (git gc --cruft, the default since git 2.43) holds only unreachable
    // objects, named or not, which no git command needs: hidden whole, like loose orphans.
    if (existsSync(`${p.pack.slice(0, -".pack".length)}.mtimes`)) {
      hidePack(p, "unreachable objects (a cruft pack)");
      result.cruftPacks++;
      continue;
    }
    try {
      const index = PackIndex.read(p.idx, store.format);
      indexes.push({ ...p, index });
      packed += index.count;
    } catch (e) {
      unreadable ??= (e as Error).message;
      hidePack(p, "a pack whose index could not be read");
    }
  }
  if (packed > MAX_SEARCHED_OBJECTS) {
    result.unsearched = `${formatCount(packed)} packed objects, over the ` +
      `${formatCount(MAX_SEARCHED_OBJECTS)} whose history is searched`;
  }
  for (const { idx, index } of result.unsearched ? [] : indexes) {
    const found = await packFindings(store, idx, index, options.cacheDir);
    for (const [id, name] of found.named) {
      if (!named.has(id) && (isSecretFileName(name, allow) || isCredentialName(name))) {
        named.set(id, name);
      }
    }
    credentialTrees.push(...found.credentialTrees);
  }
  if (credentialTrees.length > 0) await blobsBelow(store, credentialTrees, named);
  for (const [id, path] of await contents.ids(store.format)) {
    if (!named.has(id)) named.set(id, path);
  }

  // Loose ones hidden one by one: the secret ones and the unnamed ones.
  for (const id of looseBlobs) {
    const owner = named.get(id) ?? (namedByTree.has(id) ? undefined : "an unnamed blob");
    if (owner === undefined) continue;
    const path = loosePath(store, id);
    result.loose.push(path);
    owners.set(path, owner);
  }
  if (loose.over) {
    result.incomplete = `${store.objectsDir} holds over ${formatCount(MAX_LOOSE)} ` +
      "loose objects, too many to look through for secret files' content (git gc packs them)";
  }

  // Packs holding a secret: a view without them, or the packs hidden.
  const secretIds = [...named.keys()];
  const holding = indexes.filter(({ index }) => secretIds.some((id) => index.has(id)));
  const hiddenIds = secretIds.filter((id) => holding.some(({ index }) => index.has(id)));
  for (const h of holding) {
    const names = hiddenIds.filter((id) => h.index.has(id)).map((id) => named.get(id)!);
    for (const f of [h.pack, h.idx]) owners.set(f, names.join(", "));
  }
  if (holding.length > 0) {
    const bytes = (await Promise.all(indexes.map((i) => stat(i.pack).then((s) => s.size))))
      .reduce((a, b) => a + b, 0);
    const viewable = options.cacheDir !== undefined && unreadable === undefined &&
      packed <= MAX_VIEW_OBJECTS && bytes <= MAX_VIEW_BYTES;
    const view = viewable
      ? await packView(store, indexes, new Set(hiddenIds), options.cacheDir!).catch(() => undefined)
      : undefined;
    if (view) result.view = view;
    else for (const h of holding) hidePack(h, owners.get(h.pack) ?? "");
  }
  const note = noteOf(result, hiddenIds.length, unreadable);
  if (note) result.note = note;
  return result;
}

/** The reply's line for one store, when anything was hidden. */
function noteOf(
  r: StoreSecrets,
  packedSecrets: number,
  unreadable: string | undefined,
): string | undefined {
  if (r.loose.length === 0 && r.packs.length === 0 && !r.view) return undefined;
  const where = r.store.commonDir;
  const names = [...new Set([...r.owners.values()])].slice(0, 4).join(", ");
  const parts: string[] = [];
  if (r.loose.length > 0) parts.push(`${r.loose.length} loose object(s)`);
  if (r.view) parts.push(`${packedSecrets} packed object(s) (git reads a copy without them)`);
  if (r.cruftPacks > 0) parts.push(`${r.cruftPacks} cruft pack(s) of unreachable objects`);
  const whole = r.hiddenPacks - r.cruftPacks;
  if (whole > 0) {
    parts.push(
      `${whole} pack(s) whole, so git cannot read the history in them` +
        (unreadable ? ` (${unreadable})` : ""),
    );
  }
  return `git objects hidden from commands in ${where}: ${parts.join("; ")}; they hold ${names}. ` +
    "To drop unreachable ones: git reflog expire --expire-unreachable=now --all && " +
    "git gc --prune=now";
}

/**
 * A folder that can stand for `objects/pack`: one pack of every object of the store's packs
 * except `hidden`, built with `git pack-objects` and kept in `cacheDir` under a name made of
 * the packs and the hidden ids (the same store and secrets reuse it).
 */
async function packView(
  store: GitStore,
  indexes: readonly { idx: string; index: PackIndex }[],
  hidden: ReadonlySet<string>,
  cacheDir: string,
): Promise<string> {
  const key = createHash("sha256")
    .update(indexes.map((i) => basename(i.idx)).sort().join("\n"))
    .update("\0")
    .update([...hidden].sort().join("\n"))
    .digest("hex").slice(0, 32);
  const storeKey = createHash("sha256").update(store.objectsDir).digest("hex").slice(0, 16);
  const dir = join(cacheDir, "views", storeKey, key);
  const complete = join(dir, "complete");
  if (existsSync(complete)) {
    // Its time says when it was last used (see removeStaleViews).
    writeFileSync(complete, "");
    return join(dir, "pack");
  }
  removeStaleViews(dirname(dir));
  rmSync(dir, { recursive: true, force: true });
  // Readable by anyone who reaches it: the state dir around it keeps other users out, and a
  // jailed delegate of a server run as root is nobody on the host.
  mkdirSync(join(dir, "pack"), { recursive: true, mode: 0o755 });
  chmodSync(join(dir, "pack"), 0o755);
  const ids: string[] = [];
  const seen = new Set<string>();
  for (const { index } of indexes) {
    for (const id of index.all()) {
      if (!hidden.has(id) && !seen.has(id)) {
        seen.add(id);
        ids.push(id);
      }
    }
  }
  await runGit(
    store,
    ["pack-objects", "-q", join(dir, "pack", "pack")],
    new TextEncoder().encode(ids.join("\n") + "\n"),
  );
  writeFileSync(join(dir, "complete"), "");
  return join(dir, "pack");
}

/** A view unused this long is removed when another view of its store is made. */
const VIEW_KEEP_MS = 24 * 60 * 60 * 1000;

/**
 * Removes the views of one store that no turn used for a day: their packs or secrets changed
 * since. A newer one is kept, since a command of another server may have it mounted.
 */
function removeStaleViews(storeDir: string): void {
  let names: string[];
  try {
    names = readdirSync(storeDir);
  } catch {
    return;
  }
  for (const name of names) {
    const dir = join(storeDir, name);
    // A view without its marker is a build under way, or one that died: given an hour.
    const used = [join(dir, "complete"), dir].map((p) => {
      try {
        return statSync(p).mtimeMs;
      } catch {
        return undefined;
      }
    });
    const age = Date.now() - (used[0] ?? used[1] ?? 0);
    if (age < (used[0] === undefined ? 60 * 60 * 1000 : VIEW_KEEP_MS)) continue;
    rmSync(dir, { recursive: true, force: true });
  }
}
