/**
 * Opening files beneath a set of root directories, so that neither a symlink nor a directory
 * swapped for one while we work (rename(2) with RENAME_EXCHANGE in a loop, from a sandboxed
 * command) can lead outside them. Resolving a path first and opening it later by name has that
 * race: the check and the open look the path up twice. Here a path is walked one component at
 * a time from an opened root, each step relative to the directory reached before (see
 * anchor.ts), and what is finally opened is checked through its own descriptor.
 *
 * Symlinks inside the roots stay usable: they are read through the held directory, resolved
 * lexically, and the walk starts again from the root that holds the target, at most 40 times
 * (Linux's limit). A target outside every root is refused. Before the walk reaches a path (a
 * directory on the way, the name of a symlink, a symlink's target, the file itself) it asks
 * `check`, so a policy sees every name a path goes by, not only the last one.
 */
import { constants, type Stats } from "node:fs";
import { type FileHandle, lstat, mkdir, open, readlink, stat } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import { isInside } from "../path_inside.ts";
import { type Anchor, type HeldDir, systemAnchor } from "./anchor.ts";
import { type BeneathDir, BeneathError, heldDir, type OpenedFile } from "./held_dir.ts";

export type { BeneathDir, BeneathErrorKind, DirEntry, OpenedFile } from "./held_dir.ts";
export { BeneathError };

/** Symlinks followed in one resolution, as Linux's MAXSYMLINKS. */
export const MAX_LINK_HOPS = 40;
/** Times an open is tried again when the entry changed between lstat and open. */
const MAX_RETRIES = 8;

const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const O_NONBLOCK = constants.O_NONBLOCK ?? 0;

/** Says why the walk may not reach `real` (a path as resolved so far), or undefined. */
export type BeneathCheck = (real: string, final: boolean) => string | undefined;

export interface BeneathOptions {
  /** Real absolute paths. The delegate must not be able to change their ancestors. */
  roots: readonly string[];
  check?: BeneathCheck;
  /**
   * Says why the walk may not go on through a directory, judged by what it is: called with
   * the stat of every directory held (roots included), whatever name reached it.
   */
  checkDir?: (info: Stats, real: string) => string | undefined;
  /** For tests: how directories are held (default: the system's). */
  anchor?: Anchor;
}

/**
 * read: an existing regular file, read-only. update: existing, read-write (Edit). write:
 * read-write, created with missing parents when absent (Write). create: must not exist yet.
 * Never truncated at open: the caller truncates through the descriptor once it has checked it.
 */
export type OpenMode = "read" | "update" | "write" | "create";

/** The outermost root holding `path`: a walk from there covers nested roots too. */
function outermostRoot(roots: readonly string[], path: string): string | undefined {
  let best: string | undefined;
  for (const root of roots) {
    if (isInside(root, path) && (best === undefined || root.length < best.length)) best = root;
  }
  return best;
}

const parts = (rel: string) => rel.split(/[\\/]/).filter((p) => p !== "" && p !== ".");
const codeOf = (e: unknown) => (e as { code?: unknown }).code;

interface Reached {
  dir: HeldDir;
  /** Undefined when the path is a root itself (or, resolving, lies below a missing directory). */
  name?: string;
  real: string;
  /** lstat of the final entry, undefined when it does not exist. */
  info?: Stats;
}

/**
 * What to do about a missing directory on the way: fail (ENOENT), create it, or (to resolve a
 * path without opening it) take the rest of the path as it is written.
 */
type Missing = "fail" | "create" | "resolve";

/**
 * Walks to the parent of `path` (absolute, lexical) and looks at its last entry, following
 * symlinks by hand. The caller releases `dir`.
 */
async function reach(path: string, options: BeneathOptions, missing: Missing): Promise<Reached> {
  const anchor = options.anchor ?? systemAnchor();
  const refuse = (real: string, final: boolean) => {
    const why = options.check?.(real, final);
    if (why !== undefined) throw new BeneathError("refused", why, real);
  };
  // The directory as held (its descriptor on Linux), so a swap after the walk entered it
  // changes nothing.
  const judge = async (held: HeldDir) => {
    if (!options.checkDir) return;
    const info = held.handle ? await held.handle.stat() : await stat(held.real);
    const why = options.checkDir(info, held.real);
    if (why !== undefined) throw new BeneathError("refused", why, held.real);
  };
  let target = path;
  let hops = 0;
  for (;;) {
    const root = outermostRoot(options.roots, target);
    if (root === undefined) {
      throw new BeneathError("outside", `"${target}" is outside the allowed directories`, target);
    }
    const names = parts(relative(root, target));
    refuse(root, names.length === 0);
    let dir = await anchor.root(root);
    let next: string | undefined;
    try {
      await judge(dir);
      for (let i = 0; i < names.length; i++) {
        const name = names[i]!;
        const last = i === names.length - 1;
        const real = join(dir.real, name);
        refuse(real, last);
        const at = anchor.child(dir, name);
        let info: Stats | undefined;
        try {
          info = await lstat(at);
        } catch (e) {
          if (codeOf(e) !== "ENOENT" || (!last && missing === "fail")) throw e;
        }
        if (info?.isSymbolicLink()) {
          if (++hops > MAX_LINK_HOPS) {
            throw new BeneathError("loop", `too many levels of symbolic links at "${real}"`, real);
          }
          next = join(resolve(dir.real, await readlink(at)), ...names.slice(i + 1));
          break;
        }
        if (last) {
          const reached: Reached = { dir, name, real, ...(info ? { info } : {}) };
          dir = { real: "" }; // handed to the caller
          return reached;
        }
        if (info === undefined && missing === "resolve") {
          let rest = real;
          for (let k = i + 1; k < names.length; k++) {
            rest = join(rest, names[k]!);
            refuse(rest, k === names.length - 1);
          }
          const reached: Reached = { dir, real: rest };
          dir = { real: "" };
          return reached;
        }
        if (info === undefined) {
          await mkdir(at, 0o777).catch((e) => {
            if (codeOf(e) !== "EEXIST") throw e;
          });
        } else if (!info.isDirectory()) {
          throw Object.assign(new Error(`ENOTDIR: not a directory, "${real}"`), {
            code: "ENOTDIR",
          });
        }
        let sub: HeldDir;
        try {
          sub = await anchor.enter(dir, name);
        } catch (e) {
          // Swapped for a symlink (or removed) since the lstat: look at it again.
          const code = codeOf(e);
          if (
            (code === "ELOOP" || code === "ENOTDIR" || code === "ENOENT") && ++hops <= MAX_LINK_HOPS
          ) {
            i--;
            continue;
          }
          throw e;
        }
        await anchor.release(dir);
        dir = sub;
        await judge(dir);
      }
      if (next === undefined) {
        const reached: Reached = { dir, real: root };
        dir = { real: "" };
        return reached;
      }
    } finally {
      await anchor.release(dir);
    }
    target = next;
  }
}

const fsError = (code: string, what: string) =>
  Object.assign(new Error(`${code}: ${what}`), { code });

/** Opens a regular file beneath the roots; see OpenMode. */
export async function openBeneath(
  path: string,
  mode: OpenMode,
  options: BeneathOptions,
): Promise<OpenedFile> {
  const anchor = options.anchor ?? systemAnchor();
  for (let attempt = 0; attempt < MAX_RETRIES; attempt++) {
    const creates = mode === "write" || mode === "create";
    const r = await reach(path, options, creates ? "create" : "fail");
    try {
      if (r.name === undefined || r.info?.isDirectory()) {
        throw new BeneathError("directory", `"${r.real}" is a directory`, r.real);
      }
      if (r.info && !r.info.isFile()) {
        throw new BeneathError("special", `"${r.real}" is not a regular file`, r.real);
      }
      if (r.info && mode === "create") {
        throw new BeneathError("exists", `"${r.real}" exists`, r.real);
      }
      if (!r.info && !creates) throw fsError("ENOENT", `no such file, "${r.real}"`);
      const at = anchor.child(r.dir, r.name);
      const access = mode === "read" ? constants.O_RDONLY : constants.O_RDWR;
      // O_EXCL never follows a symlink and fails on anything already there, so a file
      // created here is new; O_NONBLOCK keeps a FIFO swapped in from blocking the open.
      const flags = r.info
        ? access | O_NOFOLLOW | O_NONBLOCK
        : access | constants.O_CREAT | constants.O_EXCL | O_NOFOLLOW;
      let handle: FileHandle;
      try {
        handle = await open(at, flags, 0o666);
      } catch (e) {
        const code = codeOf(e);
        if (code === "ELOOP" || code === "EEXIST" || (code === "ENOENT" && creates)) continue;
        if (code === "ENXIO") throw new BeneathError("special", `"${r.real}" is a FIFO`, r.real);
        throw e;
      }
      try {
        await anchor.verify(handle, at);
        const stats = await handle.stat();
        if (stats.isDirectory()) {
          throw new BeneathError("directory", `"${r.real}" is a directory`, r.real);
        }
        if (!stats.isFile()) {
          throw new BeneathError("special", `"${r.real}" is not a regular file`, r.real);
        }
        return { handle, real: r.real, created: !r.info, stats };
      } catch (e) {
        await handle.close().catch(() => {});
        if (codeOf(e) === "ELOOP") continue;
        throw e;
      }
    } finally {
      await anchor.release(r.dir);
    }
  }
  throw new BeneathError(
    "raced",
    `"${path}" kept changing while it was opened (a symlink or rename race)`,
    path,
  );
}

/** Resolves `path` beneath the roots without opening it: the path it names, symlinks followed. */
export async function resolveBeneath(path: string, options: BeneathOptions): Promise<string> {
  const anchor = options.anchor ?? systemAnchor();
  const r = await reach(path, options, "resolve");
  await anchor.release(r.dir);
  return r.real;
}

/** Opens `path` beneath the roots as a directory to walk, or as a file to read. */
export async function openEntryBeneath(
  path: string,
  options: BeneathOptions,
): Promise<{ dir: BeneathDir } | { file: OpenedFile }> {
  const anchor = options.anchor ?? systemAnchor();
  for (let attempt = 0; attempt < MAX_RETRIES; attempt++) {
    const r = await reach(path, options, "fail");
    if (r.name !== undefined && !r.info?.isDirectory()) {
      await anchor.release(r.dir);
      return { file: await openBeneath(path, "read", options) };
    }
    if (r.name === undefined) return { dir: heldDir(r.dir, anchor) };
    try {
      return { dir: heldDir(await anchor.enter(r.dir, r.name), anchor) };
    } catch (e) {
      if (codeOf(e) !== "ELOOP" && codeOf(e) !== "ENOTDIR") throw e;
    } finally {
      await anchor.release(r.dir);
    }
  }
  throw new BeneathError("raced", `"${path}" kept changing while it was opened`, path);
}
