/**
 * The protected files of a delegate's directories by what they are (device and inode), not
 * by the names they go by, collected at the start of a turn: a write of `tools/claude/x` when
 * `.claude -> tools/claude`, of `docs/rules.md` when `CLAUDE.md -> docs/rules.md` or when the two are
 * hard links of one file, or a read of `notes.txt` hard-linked to `.env`, passes every rule
 * about names and is caught here. Both engines use it: the native file tools compare the file
 * or directory they opened with these sets, and the sandboxes hide or protect the extra paths
 * it lists (link targets, other hard links) as they do the named ones.
 *
 * Found: every host-run path inside the roots (at the top and nested, by host_run_scan.ts's
 * bounded walk), the real targets of links among them, what lies inside host-run directories
 * that has other hard links or is a link leading elsewhere in the roots, every secret file by
 * name (protected_paths.ts's patterns, less the user's `allowSecretFiles`) with its link
 * target; and, only when one of these files has other hard links, their other names in the
 * roots. Bounded like the scan; whatever stops it early is said in `incomplete` (the sets may
 * miss a file: callers fail closed) or `pathsIncomplete` (the path lists may miss a hard link:
 * a sandbox that protects by path must not run).
 */
import { stat } from "node:fs/promises";
import { basename, join } from "node:path";
import { Collector, identityKey } from "./identity_walk.ts";
import { isInsideRoots } from "../platform/path_inside.ts";
import {
  type HostRunScan,
  SCAN_BOUNDS,
  type ScanBounds,
  scanHostRun,
  type ScanOptions,
} from "./host_run_scan.ts";
import { HOST_RUN_PATHS, isHostRunDir, isSecretFileName } from "./protected_paths.ts";
import { gitStoreOf } from "./git_store.ts";
import { SecretContents, type StoreSecrets, storeSecrets } from "./git_secrets.ts";

export { identityKey };

export interface GuardIdentities {
  /** The roots the sets cover (real paths). */
  roots: readonly string[];
  /** `dev:ino` of host-run files and directories -> the host-run path (absolute) they are. */
  hostRun: ReadonlyMap<string, string>;
  /** `dev:ino` of secret files -> the secret file (absolute) whose content they hold. */
  secret: ReadonlyMap<string, string>;
  /**
   * Paths inside the roots that are host-run without a host-run name: real targets of
   * host-run links (also missing ones, which a write would create: see `hostRunMissing`),
   * links' targets from inside host-run directories, other hard links of host-run files.
   * Absolute, sorted.
   */
  hostRunPaths: string[];
  /** The host-run or secret path each of hostRunPaths and secretPaths is another name of. */
  owners: ReadonlyMap<string, string>;
  /** The missing ones among hostRunPaths, with what they would be (a sandbox's placeholder). */
  hostRunMissing: Array<{ path: string; kind: "file" | "dir" }>;
  /**
   * Regular files inside the roots that hold a secret: secret files by name, real targets of
   * secret-named links, their other hard links. Absolute real paths, sorted.
   */
  secretPaths: string[];
  /** The nested host-run paths (host_run_scan.ts), for a sandbox's read-only mounts. */
  scan: HostRunScan;
  /**
   * Objects in git's stores that hold a secret's content (git_secrets.ts), when asked for
   * (`GuardOptions.gitObjects`): files hidden from commands (loose objects; packs where no
   * view could be made), views mounted over `objects/pack`, `dev:ino` of every such file and
   * pack (the file tools refuse them) with the secret it holds, and the reply's lines.
   */
  git: GitObjects;
  /** Why the identity sets may miss a protected file: callers refuse what they cannot check. */
  incomplete?: string;
  /** Why the path lists may miss one (set whenever `incomplete` is). */
  pathsIncomplete?: string;
}

export interface GuardOptions {
  /** Secret-looking file names the user lets delegates read (`allowSecretFiles`). */
  allowSecretFiles?: readonly string[];
  bounds?: ScanBounds;
  /** Entries looked at inside host-run directories (default HOST_RUN_ENTRIES). */
  maxHostRunEntries?: number;
  /** Files looked at for other hard links (default LINK_SEARCH_FILES). */
  maxLinkSearchFiles?: number;
  /** Lists folders from a change journal's memory (see ScanOptions.list). */
  list?: ScanOptions["list"];
  /**
   * Look in the git repositories of the roots (and `extraGitDirs`) for objects holding a
   * secret's content; `cacheDir` (in the state dir) keeps views and each pack's findings.
   */
  gitObjects?: { cacheDir?: string; extraGitDirs?: readonly string[] };
}

/** What git_secrets.ts found in the stores a turn's commands can read. */
export interface GitObjects {
  /** Loose objects and packs, or a whole `objects` folder that could not be looked through. */
  hidden: string[];
  views: { packDir: string; view: string }[];
  /** `dev:ino` -> what the object holds (`.env`, `an unnamed blob`). */
  identities: ReadonlyMap<string, string>;
  notes: string[];
}

const NO_GIT: GitObjects = { hidden: [], views: [], identities: new Map(), notes: [] };

/**
 * Entries read inside host-run directories. Git's object store, refs and logs are left out
 * (content the host never runs, and the bulk of a `.git`), which leaves a few dozen entries
 * in a repository; editors' and Claude Code's folders hold tens to hundreds.
 */
export const HOST_RUN_ENTRIES = 20_000;
/**
 * Files lstat'ed when looking for other hard links of a protected file: only done when one
 * has them (a link count above 1), which projects rarely do.
 */
export const LINK_SEARCH_FILES = 100_000;

/**
 * The identities and extra paths protecting `roots` (real paths of a turn's working
 * directory and add_dirs). Never throws: what it could not look at is said in `incomplete`.
 */
export async function collectGuardIdentities(
  roots: readonly string[],
  options: GuardOptions = {},
): Promise<GuardIdentities> {
  const allow = options.allowSecretFiles ?? [];
  const c = new Collector(roots, allow, options.maxHostRunEntries ?? HOST_RUN_ENTRIES);
  const scan = await scanHostRun(roots, options.bounds ?? SCAN_BOUNDS, {
    secret: (name) => isSecretFileName(name, allow),
    ...(options.list ? { list: options.list } : {}),
  });
  if (scan.incomplete) c.fail(scan.incomplete);
  const kindOf = (path: string) => isHostRunDir(path) ? "dir" : "file";
  const top = roots.flatMap((root) => HOST_RUN_PATHS.map((name) => join(root, name)));
  for (const path of [...top, ...scan.paths]) await c.hostRunPath(path, path, kindOf(path));
  for (const path of scan.secrets) await c.secretFile(path);
  let pathsIncomplete = c.incomplete;
  if (!pathsIncomplete && c.linked.size > 0) {
    pathsIncomplete = await c.otherLinks(options.maxLinkSearchFiles ?? LINK_SEARCH_FILES);
  }
  // What a host-run name protects already (a hard link's other name inside `.vscode`; a link
  // to a missing file in `.claude`, where no placeholder could be mounted read-only anyway).
  const named = [...top, ...scan.paths];
  for (const path of [...c.hostRunPaths]) {
    if (isInsideRoots(named, path)) c.hostRunPaths.delete(path);
  }
  for (const path of [...c.hostRunMissing.keys()]) {
    if (isInsideRoots(named, path)) c.hostRunMissing.delete(path);
  }
  const git = options.gitObjects
    ? await gitObjects([...top, ...scan.paths], [...c.secretPaths], allow, options.gitObjects)
    : NO_GIT;
  return {
    roots,
    git,
    hostRun: c.hostRun,
    secret: c.secret,
    hostRunPaths: [...c.hostRunPaths].sort(),
    owners: c.owners,
    hostRunMissing: [...c.hostRunMissing].map(([path, kind]) => ({ path, kind })),
    secretPaths: [...c.secretPaths].sort(),
    scan,
    ...(c.incomplete ? { incomplete: c.incomplete } : {}),
    ...(pathsIncomplete ? { pathsIncomplete } : {}),
  };
}

/**
 * The git stores behind the `.git` entries among `hostRun` (folders, or files naming a git dir
 * elsewhere: a worktree's), each once, and what hides their secrets.
 */
async function gitObjects(
  hostRun: readonly string[],
  secretFiles: readonly string[],
  allow: readonly string[],
  options: NonNullable<GuardOptions["gitObjects"]>,
): Promise<GitObjects> {
  const dotGits = [
    ...hostRun.filter((p) => basename(p) === ".git"),
    ...(options.extraGitDirs ?? []),
  ];
  const seen = new Set<string>();
  const out: GitObjects = {
    hidden: [],
    views: [],
    identities: new Map(),
    notes: [],
  };
  const identities = out.identities as Map<string, string>;
  // Read once for all the stores (nested repositories: a hundred of them).
  const contents = new SecretContents(secretFiles);
  for (const dotGit of dotGits) {
    const store = gitStoreOf(dotGit);
    if (!store || seen.has(store.objectsDir)) continue;
    seen.add(store.objectsDir);
    let found: StoreSecrets;
    try {
      found = await storeSecrets(store, {
        secretFiles,
        contents,
        allow,
        ...(options.cacheDir ? { cacheDir: options.cacheDir } : {}),
      });
    } catch (e) {
      // Fail closed, for git alone: commands get no objects of this store at all.
      hideStore(out, store.objectsDir, (e as Error).message.split("\n")[0] ?? "");
      continue;
    }
    if (found.incomplete) {
      hideStore(out, store.objectsDir, found.incomplete);
      continue;
    }
    out.hidden.push(...found.loose, ...found.packs);
    if (found.view) out.views.push({ packDir: `${store.objectsDir}/pack`, view: found.view });
    if (found.note) out.notes.push(found.note);
    for (const [path, owner] of found.owners) {
      const s = await stat(path).catch(() => undefined);
      if (s) identities.set(identityKey(s), owner);
    }
  }
  return out;
}

function hideStore(out: GitObjects, objectsDir: string, why: string): void {
  out.hidden.push(objectsDir);
  out.notes.push(
    `git objects hidden from commands in ${objectsDir}, all of them: they could not be looked ` +
      `through for secret files' content (${why}), so git cannot read this repository here`,
  );
}
