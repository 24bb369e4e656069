/**
 * Listing a folder and looking at a path by the bytes of their names (file_names.ts), on both
 * runtimes: Node's node:fs takes and gives a name's bytes as a Buffer; Deno's own calls and its
 * node:fs decode every name as UTF-8, so there the libc calls of posix/inotify.ts are used
 * (Deno on Linux with FFI). Where neither can be had, these say so (`undefined`) instead of
 * guessing: a caller that protects what it finds must then refuse (fail closed), since a name
 * it cannot read is a folder whose host-run files it cannot mount read-only.
 */
import { lstatSync, readdirSync, realpathSync } from "node:fs";
import { decodeFileName, diskPath, hasRawBytes } from "./file_names.ts";
import { linuxFs } from "./posix/inotify.ts";
import { quoteString } from "./plain_text.ts";
import { isDeno } from "./runtime.ts";
import { statsKind } from "./path_facts.ts";

/** What a path itself is (a link not followed). */
export type RawKind = "dir" | "file" | "link" | "other" | "missing";

/** One entry of a folder listed by bytes; `kind` undefined when the listing did not say. */
export interface RawEntry {
  name: string;
  kind: Exclude<RawKind, "missing"> | undefined;
}

/** An error carrying the errno name node:fs gives (`ENOENT`...), for callers that test it. */
function errnoError(dir: string, errno: number): Error {
  const names: Record<number, string> = { 2: "ENOENT", 13: "EACCES", 20: "ENOTDIR" };
  const code = names[errno] ?? `errno ${errno}`;
  return Object.assign(new Error(`${quoteString(dir)} could not be listed (${code})`), { code });
}

/**
 * The entries of `dir`, names decoded by file_names.ts (a byte that is not UTF-8 kept);
 * undefined where this runtime cannot list by bytes. Throws node:fs's errors (with `code`).
 */
export function listDirByBytes(dir: string): RawEntry[] | undefined {
  if (isDeno) {
    const fs = linuxFs();
    if (!fs) return undefined;
    const listed = fs.listDir(dir);
    if (typeof listed === "number") throw errnoError(dir, -listed);
    return listed.map((e) => ({ name: e.name, kind: e.kind === "unknown" ? undefined : e.kind }));
  }
  return readdirSync(diskPath(dir), { encoding: "buffer", withFileTypes: true }).map((e) => {
    return { name: decodeFileName(e.name as unknown as Uint8Array), kind: statsKind(e) };
  });
}

/**
 * `path` with every link on its way resolved, or `path` itself when that cannot be done: gone,
 * or a name that is not UTF-8 (which realpath cannot take; such a path is left as named, and
 * looked at by its bytes).
 */
export function realOrSelf(path: string): string {
  if (hasRawBytes(path)) return path;
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/**
 * What `path` itself is, named by its bytes; undefined where this runtime cannot look at a
 * path whose name is not UTF-8.
 */
export function rawKindOf(path: string): RawKind | undefined {
  if (isDeno) {
    const fs = linuxFs();
    if (!fs) return undefined;
    return fs.lstat(path)?.kind ?? "missing";
  }
  try {
    const info = lstatSync(diskPath(path));
    if (info.isSymbolicLink()) return "link";
    return info.isDirectory() ? "dir" : info.isFile() ? "file" : "other";
  } catch {
    return "missing";
  }
}

/**
 * What `path` and every folder above it are, named by bytes: each one's type and, but for
 * the last when it is a regular file, its `device:inode` ("missing" from the first one gone).
 * Where a path's real path cannot be had by bytes (Deno), this tells the same things: a folder
 * above renamed is missing, a new one has another inode, one swapped for a link is a link.
 * Undefined where this runtime cannot look at such a name.
 */
export function rawLineage(path: string): string | undefined {
  const parts = path.split("/").filter((p) => p !== "");
  const out: string[] = [];
  for (let i = 1; i <= parts.length; i++) {
    const at = `/${parts.slice(0, i).join("/")}`;
    const facts = rawFactsOf(at);
    if (facts === undefined) return undefined;
    if (facts === "missing") return [...out, "missing"].join(" ");
    const last = i === parts.length && facts.kind === "file";
    out.push(last ? facts.kind : `${facts.kind} ${facts.id}`);
  }
  return out.join(" ");
}

function rawFactsOf(
  path: string,
): { kind: Exclude<RawKind, "missing">; id: string } | "missing" | undefined {
  if (isDeno) {
    const fs = linuxFs();
    if (!fs) return undefined;
    const facts = fs.lstat(path);
    return facts ? { kind: facts.kind, id: facts.id } : "missing";
  }
  try {
    const info = lstatSync(diskPath(path));
    return { kind: statsKind(info), id: `${info.dev}:${info.ino}` };
  } catch {
    return "missing";
  }
}
