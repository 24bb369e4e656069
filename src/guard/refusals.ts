/**
 * Judging a file by what it is against a turn's GuardIdentities (identities.ts): a
 * write into a host-run file or directory reached under another name, a read of a secret
 * file's content under another name. The native file tools call these with the fstat of the
 * descriptor they opened (and of every directory their walk entered), so no link or rename
 * can change what was judged; `pathIdentityRefusal` looks a path up instead, for a caller that
 * does not open the file itself (a hook that judges another program's tool call).
 */
import { realpath, stat } from "node:fs/promises";
import { basename, dirname, join, relative } from "node:path";
import { type GuardIdentities, identityKey } from "./identities.ts";
import { isInside, isInsideRoots } from "../platform/path_inside.ts";
import { hostRunRefusal, readRefusal } from "./protected_paths.ts";

/** What the checks need of a stat result (node's Stats has it). */
export interface FileIdentity {
  dev: number;
  ino: number;
  nlink: number;
  isFile(): boolean;
}

/** `path` relative to the root holding it, as the model should see it. */
function shown(guard: GuardIdentities, path: string): string {
  const root = guard.roots.find((r) => isInside(r, path));
  if (root === undefined) return path;
  return relative(root, path).split(/[\\/]/).join("/") || ".";
}

/** Inside `dir` or `dir` itself. */
function atOrBelow(dir: string, path: string): boolean {
  return isInside(dir, path);
}

/**
 * Why a file or directory with identity `s` must not be written (or written into), or
 * undefined. When the turn's identities are incomplete every write is refused: a link to a
 * host-run file could lie where the collection did not look.
 */
export function writeIdentityRefusal(
  guard: GuardIdentities,
  s: { dev: number; ino: number },
  /** Where it was reached, for the message. */
  real?: string,
): string | undefined {
  const owner = guard.hostRun.get(identityKey(s));
  if (owner !== undefined) {
    const name = shown(guard, owner);
    const what = real === undefined ? "it" : `"${shown(guard, real)}"`;
    return `${what} is "${name}" under another name (a link or a hard link to it): ` +
      hostRunRefusal(name);
  }
  if (guard.incomplete !== undefined) {
    return "the job's directories could not all be checked for links to the files the host " +
      `runs later (${guard.incomplete}), so writes are refused this turn; start the job ` +
      "with a narrower cwd (the project folder itself), or ask the user to make this change";
  }
  return undefined;
}

/**
 * Why the path `real` (resolved, existing or not) must not be written: it is, or lies below,
 * a path a host-run link leads to (also one that does not exist yet, which a write would
 * create: `CLAUDE.md -> docs/rules.md` before it exists).
 */
export function writePathRefusal(guard: GuardIdentities, real: string): string | undefined {
  const hit = guard.hostRunPaths.find((p) => atOrBelow(p, real));
  if (hit === undefined) return undefined;
  const owner = shown(guard, guard.owners.get(hit) ?? hit);
  return `"${shown(guard, hit)}" is "${owner}" under another name (a link or a hard link to it): ` +
    hostRunRefusal(owner);
}

/**
 * Why a regular file with identity `s` must not be read, or undefined: it holds a secret
 * file's content (a hard link, or the target of a secret-named link). When the identities are
 * incomplete, a file with other hard links is refused: it may be a secret the collection did
 * not reach.
 */
export function readIdentityRefusal(
  guard: GuardIdentities,
  s: FileIdentity,
): string | undefined {
  if (!s.isFile()) return undefined;
  const object = guard.git.identities.get(identityKey(s));
  if (object !== undefined) {
    return `it is a git object that holds the content of a secret file (${object}), and what ` +
      "a delegate reads is sent to its model's provider";
  }
  const secret = guard.secret.get(identityKey(s));
  if (secret !== undefined) {
    const name = shown(guard, secret);
    const why = readRefusal(name) ?? readRefusal(name.toLowerCase()) ??
      `"${basename(secret)}" looks like a secret, and what a delegate reads is sent to its ` +
        "model's provider";
    return `it is the secret file "${name}" under another name (a link or a hard link): ${why}`;
  }
  if (guard.incomplete !== undefined && s.nlink > 1) {
    return `it has ${s.nlink} hard links, and the job's directories could not all be checked ` +
      `for secret files (${guard.incomplete}), so it cannot be told apart from a secret file ` +
      "under another name; start the job with a narrower cwd (the project folder itself)";
  }
  return undefined;
}

/**
 * Looks `path` up and judges it as a read or a write would (a write also by every existing
 * folder on its way from the root, and by the host-run link targets it may create). For
 * callers that judge another program's file access before it happens: the program opens the
 * file later, by name, so this narrows the gap and does not close it.
 */
export async function pathIdentityRefusal(
  guard: GuardIdentities,
  path: string,
  purpose: "read" | "write",
): Promise<string | undefined> {
  if (purpose === "read") {
    const s = await stat(path).catch(() => undefined);
    return s ? readIdentityRefusal(guard, s) : undefined;
  }
  // The existing part of the path, resolved; then what it and every folder above it are.
  let at = path;
  const rest: string[] = [];
  while (!(await stat(at).then(() => true, () => false))) {
    const up = dirname(at);
    if (up === at) return undefined;
    rest.unshift(basename(at));
    at = up;
  }
  const real = await realpath(at).catch(() => at);
  const byPath = writePathRefusal(guard, join(real, ...rest));
  if (byPath !== undefined) return byPath;
  for (let dir = real;; dir = dirname(dir)) {
    const s = await stat(dir).catch(() => undefined);
    const why = s && writeIdentityRefusal(guard, s, dir);
    if (why) return why;
    if (!isInsideRoots(guard.roots, dirname(dir)) || dirname(dir) === dir) return undefined;
  }
}
