import { lstat, readlink, realpath } from "node:fs/promises";
import { basename, dirname, isAbsolute, relative, resolve, sep } from "node:path";

/** What a file tool does with a path; named in refusals. */
export type PathPurpose = "read" | "write";

/** The roots a path must stay inside; a subset of ToolContext. */
export interface ConfineScope {
  cwd: string;
  roots: readonly string[];
  /** Real paths inside the roots that stay off limits: the server's own settings and records. */
  protect?: readonly string[];
}

/** A path the file tools will not touch. The message is meant for the model. */
export class PathRefused extends Error {
  override name = "PathRefused";
}

/** Symlink hops followed while resolving a path that does not exist yet (Linux allows 40). */
const MAX_LINK_HOPS = 40;

/** True when `path` is `root` or below it; `/a/bc` is not below `/a/b` (prefix trick). */
export function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  if (rel === "") return true;
  if (isAbsolute(rel)) return false; // another drive on Windows
  return rel !== ".." && !rel.startsWith(`..${sep}`);
}

/** True when `path` lies in one of `roots`. */
export function isInsideRoots(roots: readonly string[], path: string): boolean {
  return roots.some((root) => isInside(root, path));
}

/** A real path as the model should see it: relative to cwd when inside it. */
export function displayPath(real: string, cwd: string): string {
  if (!isInside(cwd, real)) return real;
  const rel = relative(cwd, real);
  return rel === "" ? "." : rel.split(sep).join("/");
}

function isMissing(e: unknown): boolean {
  const code = (e as { code?: unknown }).code;
  return code === "ENOENT" || code === "ENOTDIR";
}

/**
 * realpath for a path whose tail may not exist yet: the nearest existing ancestor is
 * resolved and the rest appended. A dangling symlink on the way is followed by hand,
 * since writing through it would create its target wherever it points.
 */
async function realpathLoose(abs: string, hops: number): Promise<string> {
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
  if (hops >= MAX_LINK_HOPS) {
    throw new PathRefused(`too many levels of symbolic links at "${candidate}"`);
  }
  return realpathLoose(resolve(realParent, await readlink(candidate)), hops + 1);
}

/**
 * Resolves a path given by the model to an absolute real path inside one of the roots,
 * or throws PathRefused (issue 3, item 5). Relative paths resolve against cwd; any ".."
 * segment is refused before resolution; symlinks are resolved before the containment
 * check, so a link inside a root that points outside is refused. The Write tool may then
 * create the missing parents: they lie between the real path and its root.
 */
export async function confinePath(
  input: string,
  scope: ConfineScope,
  purpose: PathPurpose,
): Promise<string> {
  const allowed = `the allowed directories (${scope.roots.join(", ")})`;
  const refuse = (why: string) => new PathRefused(`Refused to ${purpose} "${input}": ${why}`);
  const stayInside = `; use a path inside ${allowed}`;
  if (input.trim() === "") throw refuse(`the path is empty${stayInside}`);
  if (input.includes("\0")) throw refuse(`the path contains a NUL byte${stayInside}`);
  if (input.split(/[\\/]/).includes("..")) {
    throw refuse(`".." segments are not allowed${stayInside}`);
  }
  if (scope.roots.length === 0) throw refuse("no directories are allowed");

  const abs = resolve(scope.cwd, input);
  let real: string;
  try {
    real = await realpathLoose(abs, 0);
  } catch (e) {
    const why = e instanceof PathRefused
      ? e.message
      : `cannot resolve it (${(e as Error).message})`;
    throw refuse(why);
  }
  if (isInsideRoots(scope.roots, real)) {
    if (scope.protect && isInsideRoots(scope.protect, real)) {
      throw refuse("it is part of ollama-delegate's own settings or job records");
    }
    return real;
  }
  if (isInsideRoots(scope.roots, abs)) {
    throw refuse(`it resolves through a symlink to "${real}", outside ${allowed}`);
  }
  throw refuse(`it is outside ${allowed}`);
}
