/**
 * How a walk beneath a root names and opens the entries of a directory it has reached. This
 * is the only part of the walk (open_beneath.ts) that differs between operating systems.
 *
 * Linux: every directory reached is held open, and its entries are named through
 * `/proc/self/fd/<fd>/<name>`. The kernel resolves that to the directory the descriptor holds,
 * wherever it has been moved since and whatever now stands at its old path, and O_NOFOLLOW
 * covers `<name>`, the only component left to look up. So a directory swapped for a symlink
 * between two steps of the walk cannot redirect it: the same guarantee as openat(2) with
 * O_NOFOLLOW at each step, which node:fs does not offer directly.
 *
 * Elsewhere (macOS, Windows: no /proc/self/fd, and node:fs has no openat): entries are named by
 * path from the walk's resolved directory, and the file finally opened must be the entry that
 * path names (device and inode of the open descriptor equal those of an lstat after the open).
 * That narrows a swap race to a window between two system calls but cannot close it. It is
 * acceptable there because only a delegate that runs commands can swap directories during a
 * walk, and the native engine's Bash has no sandbox on those systems: it is refused unless the
 * user turned the sandbox off, which already lets delegates run unconfined commands.
 */
import { constants, lstatSync } from "node:fs";
import { type FileHandle, lstat, open } from "node:fs/promises";
import { join } from "node:path";
import { isLinux } from "../runtime.ts";

/** A directory the walk has reached: its resolved path, and on Linux its open descriptor. */
export interface HeldDir {
  readonly real: string;
  readonly handle?: FileHandle;
}

export interface Anchor {
  /** True when the kernel keeps every step beneath the held directory (no race window). */
  readonly raceFree: boolean;
  /** Opens a root directory, given as a real path whose ancestors the delegate cannot change. */
  root(real: string): Promise<HeldDir>;
  /** The path naming `name` in `dir`, for lstat, readlink, mkdir and open. */
  child(dir: HeldDir, name: string): string;
  /** The path naming `dir` itself, for readdir. */
  self(dir: HeldDir): string;
  /** Enters the subdirectory `name` of `dir`; fails when it is a symlink. */
  enter(dir: HeldDir, name: string): Promise<HeldDir>;
  /** Throws when `handle`, just opened at child(dir, name), is not the entry there. */
  verify(handle: FileHandle, path: string): Promise<void>;
  release(dir: HeldDir): Promise<void>;
}

const O_DIRECTORY = constants.O_DIRECTORY ?? 0;
const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const DIR_FLAGS = constants.O_RDONLY | O_DIRECTORY | O_NOFOLLOW;

function errno(code: string, message: string): Error {
  return Object.assign(new Error(`${code}: ${message}`), { code });
}

export const procFdAnchor: Anchor = {
  raceFree: true,
  async root(real) {
    return { real, handle: await open(real, DIR_FLAGS) };
  },
  child(dir, name) {
    return `/proc/self/fd/${dir.handle!.fd}/${name}`;
  },
  self(dir) {
    return `/proc/self/fd/${dir.handle!.fd}`;
  },
  async enter(dir, name) {
    return { real: join(dir.real, name), handle: await open(this.child(dir, name), DIR_FLAGS) };
  },
  async verify() {
    // Opened relative to a held directory with O_NOFOLLOW: nothing left to check.
  },
  async release(dir) {
    await dir.handle?.close().catch(() => {});
  },
};

export const pathAnchor: Anchor = {
  raceFree: false,
  async root(real) {
    const info = await lstat(real);
    if (!info.isDirectory()) throw errno("ENOTDIR", `not a directory, "${real}"`);
    return { real };
  },
  child(dir, name) {
    return join(dir.real, name);
  },
  self(dir) {
    return dir.real;
  },
  async enter(dir, name) {
    const path = join(dir.real, name);
    const info = await lstat(path);
    if (info.isSymbolicLink()) throw errno("ELOOP", `symbolic link, "${path}"`);
    if (!info.isDirectory()) throw errno("ENOTDIR", `not a directory, "${path}"`);
    return { real: path };
  },
  async verify(handle, path) {
    const [opened, named] = await Promise.all([
      handle.stat({ bigint: true }),
      lstat(path, { bigint: true }),
    ]);
    if (opened.dev !== named.dev || opened.ino !== named.ino) {
      throw errno("ELOOP", `"${path}" changed while it was opened`);
    }
  },
  async release() {},
};

let chosen: Anchor | undefined;

/**
 * The anchor for this system. On Linux without /proc (a rare container setup) the file tools
 * fail closed rather than fall back to path checks that a sandboxed delegate could race.
 */
export function systemAnchor(): Anchor {
  if (chosen) return chosen;
  if (!isLinux) return (chosen = pathAnchor);
  try {
    lstatSync("/proc/self/fd");
  } catch {
    throw errno(
      "EUNAVAILABLE",
      "/proc/self/fd is not available, so files cannot be opened safely beneath the " +
        "allowed directories; mount /proc for the server",
    );
  }
  return (chosen = procFdAnchor);
}
