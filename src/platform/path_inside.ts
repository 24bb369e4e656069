/**
 * Whether a path lies inside a root: the one predicate every confinement decision uses (the
 * guard, both engines' jails, the cgroup finder). Written once because each copy was a place
 * to get a Windows drive or a `..` wrong: a string prefix says `/a/bc` is inside `/a/b`, a
 * `startsWith("..")` says `/a/..b` is outside `/a`, and a `relative` across two drives is an
 * absolute path, not a way up.
 */
import * as nodePath from "node:path";

/** The path functions the predicate needs: `node:path` (the host's), or its posix or win32. */
export type PathApi = Pick<typeof nodePath.posix, "relative" | "isAbsolute" | "sep">;

/**
 * True when `path` is `root` or lies below it, both absolute. Compared by `api.relative`, which
 * normalises `.` and `..` (a name such as `..x` is an entry, not a step up) and, for win32,
 * folds the drive letter's and the names' case as Windows' file systems usually do.
 */
export function isInside(root: string, path: string, api: PathApi = nodePath): boolean {
  // Most callers hand in real paths, which have nothing to normalise: then a prefix up to a
  // `/` says it, without `relative`, which resolves both (the guard and the jails ask this of
  // many pairs of protected paths a turn, in a CPU profile the server's hottest function).
  if (api.sep === "/" && plainPosix(root) && plainPosix(path)) {
    return path === root || root === "/" ||
      (path.startsWith(root) && path.charCodeAt(root.length) === SLASH);
  }
  const rel = api.relative(root, path);
  if (rel === "") return true;
  if (api.isAbsolute(rel)) return false; // another drive or share on Windows
  return rel !== ".." && !rel.startsWith(`..${api.sep}`);
}

const SLASH = 47;
/** A step `relative` would normalise: `//`, a `.` or `..` step, a `/` at the end. */
const NOT_PLAIN = /\/\/|\/\.\.?(?:\/|$)|.\/$/;

/** An absolute POSIX path with nothing to normalise (`/`, `/a/..b`; not `/a/../b`, `/a/`). */
function plainPosix(path: string): boolean {
  return path.charCodeAt(0) === SLASH && !NOT_PLAIN.test(path);
}

/** True when `path` lies in one of `roots`. */
export function isInsideRoots(
  roots: readonly string[],
  path: string,
  api: PathApi = nodePath,
): boolean {
  return roots.some((root) => isInside(root, path, api));
}
