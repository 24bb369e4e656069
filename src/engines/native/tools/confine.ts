/**
 * Where the file tools may go, and the one way they open what they touch. A path the model
 * gives is opened beneath the roots by src/platform/beneath.ts (no symlink or rename race can
 * lead outside them), and every name it goes by on the way is held to the policy: the server's
 * own directories, credential stores, host-run paths (for writes), secret files (for reads) and
 * the user's path rules, on the path as resolved as well as on the path as written.
 */
import { lstat, readlink, realpath } from "node:fs/promises";
import { basename, dirname, isAbsolute, relative, resolve, sep } from "node:path";
import {
  type BeneathCheck,
  type BeneathDir,
  BeneathError,
  openBeneath,
  type OpenedFile,
  openEntryBeneath,
  type OpenMode,
  resolveBeneath,
} from "../../../platform/beneath.ts";
import { isWindows } from "../../../platform/runtime.ts";
import {
  credentialRefusal,
  HOST_RUN_PATHS,
  readRefusal,
  writeRefusal,
} from "../../protected_paths.ts";
import { fsErrorText, PathRefused, ToolFailure } from "./fields.ts";

export { PathRefused };

/** What a file tool does with a path; named in refusals. `list` is a walk that shows names. */
export type PathPurpose = "read" | "write" | "list";

/** The roots a path must stay inside and the policy held to every path; a subset of ToolContext. */
export interface ConfineScope {
  cwd: string;
  roots: readonly string[];
  /** Paths inside the roots that stay off limits: the server's own settings and records. */
  protect?: readonly string[];
  /** Secret-looking file names the user lets the file tools read (`allowSecretFiles`). */
  allowSecretFiles?: readonly string[];
  /**
   * The user's path rules (`Read(secrets/**)`...) applied to a path as resolved: why `tool`
   * may not reach the real path, or undefined. `final` is false for directories on the way.
   */
  pathRefusal?(tool: string, real: string, final: boolean): string | undefined;
}

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

const OWN_FILES = "it is part of ollama-delegate's own settings or job records";

/**
 * A relative path as a case-insensitive filesystem (macOS, Windows, casefolded ext4) would
 * match it: `.GIT/config` is `.git/config` there, and Windows drops trailing dots and spaces
 * (`.git./config`). Refusing the folded name on a case-sensitive system costs only odd names.
 */
function folded(rel: string): string[] {
  return rel.split(/[\\/]/).filter((p) => p !== "" && p !== ".")
    .map((p) => p.toLowerCase().replace(/[. ]+$/, "") || p);
}

function hostRunFolded(rel: string): string | undefined {
  const parts = folded(rel);
  const entry = HOST_RUN_PATHS.find((e) => {
    const want = folded(e);
    return want.length <= parts.length && want.every((p, i) => parts[i] === p);
  });
  return entry === undefined ? undefined : writeRefusal(entry);
}

/** Why `rel` (relative to a root) must not be written, read (a file) or entered. */
function refusalIn(rel: string, purpose: PathPurpose, final: boolean, allow: readonly string[]) {
  // An NTFS stream (`.envrc:x`, `.git:$DATA`) names the file before the colon.
  if (isWindows && rel.includes(":")) return `"${rel}" names an NTFS stream, which is refused`;
  const fold = folded(rel).join("/");
  if (purpose === "write") {
    return writeRefusal(rel) ?? hostRunFolded(rel) ?? credentialRefusal(fold);
  }
  if (purpose === "read" && final) {
    return readRefusal(rel, allow) ??
      readRefusal(fold, allow.map((a) => a.toLowerCase()));
  }
  return credentialRefusal(rel) ?? credentialRefusal(fold);
}

/** Inside one of the server's directories, in any case (see folded). */
function isProtected(protect: readonly string[], real: string): boolean {
  const lower = real.toLowerCase();
  return protect.some((p) => isInside(p, real) || isInside(p.toLowerCase(), lower));
}

/**
 * The policy held to every path a walk reaches (directories on the way with final=false): the
 * server's own directories; credential stores; for writes, host-run paths; for reads of a file,
 * secret files; then the user's path rules.
 */
export function pathPolicy(scope: ConfineScope, purpose: PathPurpose, tool: string): BeneathCheck {
  return (real, final) => {
    if (scope.protect && isProtected(scope.protect, real)) return OWN_FILES;
    for (const root of scope.roots) {
      if (!isInside(root, real)) continue;
      const why = refusalIn(relative(root, real), purpose, final, scope.allowSecretFiles ?? []);
      if (why !== undefined) return why;
    }
    return scope.pathRefusal?.(tool, real, final);
  };
}

/** Why a file reached by a walk must not be read (a secret file), or undefined. */
export function secretRefusal(scope: ConfineScope, real: string): string | undefined {
  for (const root of scope.roots) {
    if (!isInside(root, real)) continue;
    const why = refusalIn(relative(root, real), "read", true, scope.allowSecretFiles ?? []);
    if (why !== undefined) return why;
  }
  return undefined;
}

function verbPurpose(purpose: PathPurpose): string {
  return purpose === "list" ? "read" : purpose;
}

/**
 * The absolute path `input` names, lexically inside a root. Relative paths resolve against
 * cwd; any ".." segment is refused before anything is looked up. An absolute path outside the
 * roots that resolves into one (a symlinked home, macOS's /tmp) is taken as it resolves.
 */
async function lexicalTarget(
  input: string,
  scope: ConfineScope,
  purpose: PathPurpose,
): Promise<string> {
  const allowed = `the allowed directories (${scope.roots.join(", ")})`;
  const refuse = (why: string) =>
    new PathRefused(`Refused to ${verbPurpose(purpose)} "${input}": ${why}`);
  const stayInside = `; use a path inside ${allowed}`;
  if (input.trim() === "") throw refuse(`the path is empty${stayInside}`);
  if (input.includes("\0")) throw refuse(`the path contains a NUL byte${stayInside}`);
  if (input.split(/[\\/]/).includes("..")) {
    throw refuse(`".." segments are not allowed${stayInside}`);
  }
  if (scope.roots.length === 0) throw refuse("no directories are allowed");
  const abs = resolve(scope.cwd, input);
  if (isInsideRoots(scope.roots, abs)) return abs;
  const real = await realpathLoose(abs).catch(() => abs);
  if (isInsideRoots(scope.roots, real)) return real;
  throw refuse(`it is outside ${allowed}`);
}

/** A walk's failure as the model should read it: a refusal, or why the file could not be used. */
function explain(
  e: unknown,
  input: string,
  scope: ConfineScope,
  purpose: PathPurpose,
  verb: string,
) {
  const refused = (why: string) =>
    new PathRefused(`Refused to ${verbPurpose(purpose)} "${input}": ${why}`);
  if (e instanceof BeneathError) {
    switch (e.kind) {
      case "outside":
        return refused(
          `it resolves through a symlink to "${e.path}", outside the allowed directories ` +
            `(${scope.roots.join(", ")})`,
        );
      case "loop":
      case "refused":
        return refused(e.message);
      case "directory":
        return new ToolFailure(
          `Cannot ${verb} "${input}": it is a directory${
            verb === "read" ? "; use Glob to list files" : ""
          }`,
        );
      case "special":
        return new ToolFailure(`Cannot ${verb} "${input}": not a regular file`);
      case "exists":
        return new ToolFailure(`Cannot ${verb} "${input}": it already exists`);
      case "raced":
        return new ToolFailure(
          `Cannot ${verb} "${input}": it kept changing while it was opened (a symlink or ` +
            "rename race); try again",
        );
    }
  }
  if (e instanceof PathRefused || e instanceof ToolFailure) return e;
  return new ToolFailure(`Cannot ${verb}: ${fsErrorText(e, input)}`);
}

export interface OpenHow {
  mode: OpenMode;
  /** The tool whose path rules apply (Read for the one-shot files). */
  tool: string;
  /** For messages: read, write, edit. */
  verb: string;
}

/**
 * Opens the file `input` names for a file tool, or throws PathRefused or ToolFailure with a
 * message for the model. The caller closes the handle.
 */
export async function openConfined(
  input: string,
  scope: ConfineScope,
  how: OpenHow,
): Promise<OpenedFile> {
  const purpose: PathPurpose = how.mode === "read" ? "read" : "write";
  try {
    const target = await lexicalTarget(input, scope, purpose);
    return await openBeneath(target, how.mode, {
      roots: scope.roots,
      check: pathPolicy(scope, purpose, how.tool),
    });
  } catch (e) {
    throw explain(e, input, scope, purpose, how.verb);
  }
}

/**
 * Opens where a search starts: a directory to walk, or a single file. Only credential stores,
 * the server's directories and the user's rules are refused here; a file found is then held to
 * the secret-file rule by the caller (secretRefusal), before anything is read.
 */
export async function openSearchBase(
  input: string,
  scope: ConfineScope,
  tool: string,
): Promise<{ dir: BeneathDir } | { file: OpenedFile }> {
  try {
    const target = await lexicalTarget(input, scope, "list");
    return await openEntryBeneath(target, {
      roots: scope.roots,
      check: pathPolicy(scope, "list", tool),
    });
  } catch (e) {
    throw explain(e, input, scope, "list", "search");
  }
}

/**
 * The path `input` resolves to beneath the roots, symlinks followed by hand and the policy
 * applied, without opening it (for tests and messages; the tools open with openConfined).
 */
export async function confinePath(
  input: string,
  scope: ConfineScope,
  purpose: PathPurpose,
  tool = purpose === "write" ? "Write" : "Read",
): Promise<string> {
  try {
    const target = await lexicalTarget(input, scope, purpose);
    return await resolveBeneath(target, {
      roots: scope.roots,
      check: pathPolicy(scope, purpose, tool),
    });
  } catch (e) {
    throw explain(e, input, scope, purpose, verbPurpose(purpose));
  }
}
