/**
 * What the sandbox mounts over a delegate's writable directories so that the protected paths
 * (src/guard/protected_paths.ts) hold inside it too: host-run paths read-only, also when
 * they do not exist yet; credential stores and the server's own directories hidden; and, when
 * the server runs as root, the system files that only root may read.
 */
import { lstatSync, readdirSync, realpathSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import {
  CREDENTIAL_PATHS,
  HOST_RUN_DIRS,
  HOST_RUN_PATHS,
  PLACEHOLDER_NAMES,
  storeHeads,
} from "../../../guard/protected_paths.ts";
import { isInside, isInsideRoots } from "../../../platform/path_inside.ts";
import { hasRawBytes } from "../../../platform/file_names.ts";
import { rawKindOf, realOrSelf } from "../../../platform/raw_fs.ts";
import type { Placeholder, PlaceholderKind } from "../../mount_placeholders.ts";
import { plannedIdentities, type PlannedIdentity } from "../../bwrap_base.ts";

/** Paths found below the top of the writable dirs that the sandbox also protects. */
export interface NestedPaths {
  /** Made read-only: nested `.git` folders and files. */
  readOnly?: readonly string[];
  /** Hidden: credential stores inside the project. */
  hidden?: readonly string[];
  /**
   * Secret files (src/guard/identities.ts's `secretPaths`: by name, link targets, other hard
   * links): shown as empty files, unless the user allowed their names.
   */
  secrets?: readonly string[];
  /** Host-run link targets that do not exist yet: empty read-only placeholders. */
  missing?: readonly Placeholder[];
  /**
   * Git's objects that hold a secret's content (src/guard/git_secrets.ts): loose objects and
   * packs hidden, or a whole `objects` folder; views mounted over `objects/pack`.
   */
  git?: { hidden: readonly string[]; views: readonly { packDir: string; view: string }[] };
}

export interface ProtectedMounts {
  /** Existing paths bound read-only onto themselves. */
  readOnly: string[];
  /** Missing host-run paths: an empty read-only file or directory is mounted there. */
  placeholders: Placeholder[];
  /** Existing paths hidden: an empty file (/dev/null) or an empty read-only directory. */
  masks: Placeholder[];
  /**
   * Missing host-run paths left without a placeholder (see PLACEHOLDER_NAMES): one a command
   * creates is moved out of the project when it ends (planted.ts).
   */
  unheld: string[];
  /** Folders bound read-only over another (git's `objects/pack` by a view without secrets). */
  views?: { source: string; dest: string }[];
  /**
   * Folders bound writable onto themselves, so that a command cannot rename them: those a
   * hidden credential store of several parts is known by (protected_paths.ts storeHeads).
   */
  pins?: string[];
  /** `readOnly` and `pins` as they were when planned (bwrap_base.ts identityCheck). */
  identities?: PlannedIdentity[];
}

type Kind = PlaceholderKind | "link" | "missing";

function kindOf(path: string): Kind {
  // A name that is not UTF-8 is looked at by its bytes (host_run_scan.ts refuses to go on where
  // that cannot be done), and named to bubblewrap by them too (bwrap_base.ts `bwrapCommand`).
  if (hasRawBytes(path)) {
    const kind = rawKindOf(path);
    if (kind === undefined || kind === "missing") return "missing";
    return kind === "other" ? "file" : kind;
  }
  try {
    const info = lstatSync(path);
    if (info.isSymbolicLink()) return "link";
    return info.isDirectory() ? "dir" : "file";
  } catch {
    return "missing";
  }
}

/** The real path of a symlink's target when it lies in a writable dir; else undefined. */
function linkTargetInside(path: string, writable: readonly string[]): Placeholder | undefined {
  try {
    const real = realpathSync(path);
    if (!isInsideRoots(writable, real)) return undefined;
    return { path: real, kind: statSync(real).isDirectory() ? "dir" : "file" };
  } catch {
    return undefined;
  }
}

/**
 * The mounts that protect `writable`. `nested` adds paths found deeper (a nested `.git`,
 * a credential directory inside the project) to be treated like their top-level kind.
 */
export function protectedMounts(
  writable: readonly string[],
  nested: NestedPaths = {},
  /** The server's own directories: hidden when they lie in a writable dir, also if missing. */
  serverDirs: readonly string[] = [],
): ProtectedMounts {
  const out: ProtectedMounts = {
    readOnly: [],
    placeholders: [],
    masks: [],
    unheld: [],
  };
  const seen = new Set<string>();
  const once = (path: string) => !seen.has(path) && (seen.add(path), true);
  // First, so that a secret that is also host-run (`.envrc`) is masked, not bound read-only
  // (a read-only bind after the mask would show the file again); /dev/null bound read-only
  // keeps it unwritable as well.
  for (const path of nested.secrets ?? []) {
    if (kindOf(path) === "file" && once(path)) out.masks.push({ path, kind: "file" });
  }
  // Credential stores found deeper, before the nested host-run paths for the same reason.
  for (const path of nested.hidden ?? []) {
    const kind = kindOf(path);
    if (once(path) && (kind === "dir" || kind === "file")) out.masks.push({ path, kind });
  }
  for (const path of nested.git?.hidden ?? []) {
    const kind = kindOf(path);
    if ((kind === "file" || kind === "dir") && once(path)) out.masks.push({ path, kind });
  }
  for (const { packDir, view } of nested.git?.views ?? []) {
    if (kindOf(packDir) === "dir" && kindOf(view) === "dir") {
      (out.views ??= []).push({ source: view, dest: packDir });
    }
  }
  for (const root of writable) {
    // Credential stores first: one that is also host-run (`.npmrc`) is hidden, not bound
    // read-only, which would show it (a mask is read-only itself).
    // A missing one is left to the host-run rules below (a placeholder for a missing `.npmrc`).
    for (const entry of CREDENTIAL_PATHS) {
      const path = join(root, entry);
      const kind = kindOf(path);
      if (seen.has(path) || kind === "missing") continue;
      seen.add(path);
      if (kind === "dir" || kind === "file") {
        // By its real path, as the read-only binds are: through a linked folder (`.config ->
        // cfg`), `cfg/gh` is the same store, and a bind of it (a host-run link's target) must
        // be known to lie in the mask.
        const real = realOrSelf(path);
        if (real === path || once(real)) out.masks.push({ path: real, kind });
      } else if (kind === "link") {
        const target = linkTargetInside(path, writable);
        if (target && once(target.path)) out.masks.push(target);
      }
    }
    for (const name of HOST_RUN_PATHS) {
      const path = join(root, name);
      if (!once(path)) continue;
      const kind = kindOf(path);
      if (kind === "missing" && !PLACEHOLDER_NAMES.has(name)) out.unheld.push(path);
      else if (kind === "missing") {
        out.placeholders.push({ path, kind: HOST_RUN_DIRS.has(name) ? "dir" : "file" });
      } else if (kind === "link") {
        // A link cannot be mounted over (mount follows it): its target is made read-only
        // when it is writable here, and the link itself is watched (see hostRunState).
        const target = linkTargetInside(path, writable);
        if (target && once(target.path)) out.readOnly.push(target.path);
      } else {
        out.readOnly.push(path);
      }
    }
  }
  for (const placeholder of nested.missing ?? []) {
    // A host-run link leading where nothing is yet (`CLAUDE.md -> docs/rules.md`): the command
    // must not create it there, as it must not create a missing `.envrc`. Before the
    // read-only paths, which list it too (and skip it, missing).
    const top = highestMissing(placeholder.path, writable);
    if (top !== undefined && once(top)) {
      out.placeholders.push(top === placeholder.path ? placeholder : { path: top, kind: "dir" });
    }
  }
  for (const path of nested.readOnly ?? []) {
    if (!once(path)) continue;
    const kind = kindOf(path);
    if (kind === "dir" || kind === "file") out.readOnly.push(path);
    else if (kind === "link") {
      // As at the top: the link's target is made read-only when it is writable here.
      const target = linkTargetInside(path, writable);
      if (target && once(target.path)) out.readOnly.push(target.path);
    }
  }
  for (const path of serverDirs) {
    if (!isInsideRoots(writable, path) || writable.includes(path)) continue;
    const kind = kindOf(path);
    if (kind === "dir" || kind === "file") {
      if (once(path)) out.masks.push({ path, kind });
      continue;
    }
    // Missing: a delegate must not create it (a claudeConfigDir it made would hand the next
    // Claude Code delegate its settings).
    const top = highestMissing(path, writable);
    if (top !== undefined && once(top)) out.placeholders.push({ path: top, kind: "dir" });
  }
  // What a mask hides is read-only and out of sight already: a read-only bind or placeholder
  // inside it (a host-run link into a store, `sub/CLAUDE.md -> ../.docker/x.json`, which a
  // delegate can plant) would ask bubblewrap for a mount point in the mask's read-only folder,
  // and every later command there would fail.
  // So would a mask or view inside it (a secret file or git object in a store, a secret-named
  // link into one), which it hides already.
  const folders = out.masks.filter((m) => m.kind === "dir");
  const inMask = (path: string) => folders.some((m) => m.path !== path && isInside(m.path, path));
  out.readOnly = out.readOnly.filter((p) => !inMask(p));
  out.placeholders = out.placeholders.filter((p) => !inMask(p.path));
  out.masks = out.masks.filter((m) => !inMask(m.path));
  if (out.views) out.views = out.views.filter((v) => !inMask(v.dest));
  // Not where a read-only bind or a mask holds the folder already: a writable bind would open
  // it up again. Only strictly inside a writable dir: one cannot be renamed anyway (a mount
  // point), and a folder above it (`~/.config` of a job in `~/.config/helm`) must stay out.
  // Shallow first, as they are mounted.
  const held = [...out.readOnly, ...out.masks.map((m) => m.path)];
  for (const mask of [...out.masks]) {
    for (const head of storeHeads(mask.path)) {
      if (!writable.some((w) => w !== head && isInside(w, head))) continue;
      if (held.some((h) => isInside(h, head))) continue;
      if (kindOf(head) === "dir" && once(head)) (out.pins ??= []).push(head);
    }
  }
  out.pins?.sort((a, b) => a.split("/").length - b.split("/").length);
  // What the paths bound by name are now, and the folder of each mask in a writable dir (a
  // mask makes its path anew where it is gone: the store renamed away with its folder would be
  // left open), checked inside the sandbox (bwrap_base.ts identityCheck): one swapped for a link
  // meanwhile would move its mount.
  // Not a folder a view is mounted over (git's `objects/pack`): inside, that is the view.
  const maskFolders = out.masks.map((m) => dirname(m.path)).filter((d) =>
    isInsideRoots(writable, d) && !(out.views ?? []).some((v) => isInside(v.dest, d))
  );
  const identities = plannedIdentities([
    ...new Set([...out.readOnly, ...(out.pins ?? []), ...maskFolders]),
  ]);
  if (identities.length > 0) out.identities = identities;
  return out;
}

/**
 * The highest missing folder on the way to the missing `path` inside `writable` (or `path`
 * itself when its folder exists): the placeholder goes there, so that no empty parents are
 * left behind on the host. Undefined when `path` exists.
 */
function highestMissing(path: string, writable: readonly string[]): string | undefined {
  if (kindOf(path) !== "missing") return undefined;
  let top = path;
  while (kindOf(dirname(top)) === "missing" && isInsideRoots(writable, dirname(top))) {
    top = dirname(top);
  }
  return top;
}

export { rootOnlySystemFiles } from "../../bwrap_base.ts";

/**
 * A cheap fingerprint of every host-run path in `roots`, to notice one that was created or
 * replaced (a symlink in such a place can be swapped for a file: mounts follow links). An
 * empty file or directory counts as absent: it may be another sandbox's mount point. Content
 * is not compared: these paths are read-only inside, and the user may edit them meanwhile.
 */
export function hostRunState(roots: readonly string[]): Map<string, string> {
  const state = new Map<string, string>();
  for (const root of roots) {
    for (const name of HOST_RUN_PATHS) {
      const path = join(root, name);
      let sig = "absent";
      try {
        const info = lstatSync(path);
        const empty = info.isDirectory()
          ? readdirSync(path).length === 0
          : info.isFile() && info.size === 0;
        if (!empty) sig = `${info.ino}:${info.mode & 0o170000}`;
      } catch {
        // Missing.
      }
      state.set(path, sig);
    }
  }
  return state;
}

/** Paths whose fingerprint differs between two states. */
export function changedHostRunPaths(
  before: ReadonlyMap<string, string>,
  after: ReadonlyMap<string, string>,
): string[] {
  return [...after].filter(([path, sig]) => before.get(path) !== sig).map(([path]) => path);
}
