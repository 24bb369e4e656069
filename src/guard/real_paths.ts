/**
 * Where a path lies, before any file is opened: inside a root or not (without the prefix
 * trick), how the model should see it, and where it resolves when its tail does not exist
 * yet. The server's own directories are compared as written and as resolved.
 */
import { lstat, readlink, realpath } from "node:fs/promises";
import { basename, dirname, relative, resolve, sep } from "node:path";
import { isInside } from "../platform/path_inside.ts";

/** A real path as the model should see it: relative to cwd when inside it. */
export function displayPath(real: string, cwd: string): string {
  if (!isInside(cwd, real)) return real;
  const rel = relative(cwd, real);
  return rel === "" ? "." : rel.split(sep).join("/");
}

/** Symlink hops followed while resolving a path outside the roots (Linux allows 40). */
const MAX_LINK_HOPS = 40;

function isMissing(e: unknown): boolean {
  const code = (e as { code?: unknown }).code;
  return code === "ENOENT" || code === "ENOTDIR";
}

/**
 * realpath for a path whose tail may not exist yet: the nearest existing ancestor is resolved
 * and the rest appended, a dangling symlink on the way followed by hand.
 */
export async function realpathLoose(abs: string, hops = 0): Promise<string> {
  try {
    return await realpath(abs);
  } catch (e) {
    if (!isMissing(e)) throw e;
  }
  const parent = dirname(abs);
  if (parent === abs) return abs;
  const realParent = await realpathLoose(parent, hops);
  const candidate = resolve(realParent, basename(abs));
  let isLink = false;
  try {
    isLink = (await lstat(candidate)).isSymbolicLink();
  } catch (e) {
    if (!isMissing(e)) throw e;
  }
  if (!isLink) return candidate;
  if (hops >= MAX_LINK_HOPS) throw new Error(`too many levels of symbolic links at "${candidate}"`);
  return realpathLoose(resolve(realParent, await readlink(candidate)), hops + 1);
}

/**
 * The server's own directories as the file tools compare them: each as written and as it
 * resolves, also when it does not exist yet, so a directory created later is protected too.
 */
export async function protectedPaths(paths: readonly string[]): Promise<string[]> {
  const out = new Set<string>();
  for (const path of paths) {
    const abs = resolve(path);
    out.add(abs);
    out.add(await realpathLoose(abs).catch(() => abs));
  }
  return [...out];
}
