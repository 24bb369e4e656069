/**
 * What a walk beneath the roots hands out (open_beneath.ts): its errors, open files, and directories
 * held open for searches that list and open what is inside them.
 */
import { constants, type Stats } from "node:fs";
import { type FileHandle, lstat, open, readdir } from "node:fs/promises";
import { join } from "node:path";
import type { Anchor, HeldDir } from "./anchor.ts";

const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const O_NONBLOCK = constants.O_NONBLOCK ?? 0;

export type BeneathErrorKind =
  /** A symlink leads outside every root; `target` is where. */
  | "outside"
  /** More than MAX_LINK_HOPS symlinks. */
  | "loop"
  /** `check` refused a path; the message is its reason. */
  | "refused"
  | "directory"
  /** A FIFO, socket or device: never opened for content. */
  | "special"
  /** "create" found the file already there. */
  | "exists"
  /** The entry kept changing under us (a race). */
  | "raced";

/** Why a path could not be opened beneath the roots (fs errors pass through as they are). */
export class BeneathError extends Error {
  override name = "BeneathError";
  constructor(
    readonly kind: BeneathErrorKind,
    message: string,
    /** The resolved path concerned. */
    readonly path: string,
  ) {
    super(message);
  }
}

export interface OpenedFile {
  handle: FileHandle;
  /** The path as resolved beneath the roots. */
  real: string;
  created: boolean;
  /** fstat of the open descriptor. */
  stats: Stats;
}

export interface DirEntry {
  name: string;
  kind: "file" | "dir" | "link" | "other";
}

/** A directory held open beneath the roots, for walks that list and open what is inside. */
export interface BeneathDir {
  readonly real: string;
  list(): Promise<DirEntry[]>;
  /** A subdirectory; symlinks are refused (ELOOP or ENOTDIR). */
  openDir(name: string): Promise<BeneathDir>;
  /** A regular file for reading; symlinks are refused. */
  openFile(name: string): Promise<OpenedFile>;
  /** lstat of an entry. */
  stat(name: string): Promise<Stats>;
  close(): Promise<void>;
}

/** A directory reached by a walk, as a BeneathDir. */
export function heldDir(dir: HeldDir, anchor: Anchor): BeneathDir {
  return {
    real: dir.real,
    async list() {
      const entries = await readdir(anchor.self(dir), { withFileTypes: true });
      return entries.map((e) => ({
        name: e.name,
        kind: e.isFile() ? "file" : e.isDirectory() ? "dir" : e.isSymbolicLink() ? "link" : "other",
      }));
    },
    async openDir(name) {
      return heldDir(await anchor.enter(dir, name), anchor);
    },
    async openFile(name) {
      const real = join(dir.real, name);
      const at = anchor.child(dir, name);
      const handle = await open(at, constants.O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
      try {
        await anchor.verify(handle, at);
        const stats = await handle.stat();
        if (!stats.isFile()) throw new BeneathError("special", `"${real}" is not a file`, real);
        return { handle, real, created: false, stats };
      } catch (e) {
        await handle.close().catch(() => {});
        throw e;
      }
    },
    stat: (name) => lstat(anchor.child(dir, name)),
    close: () => anchor.release(dir),
  };
}
