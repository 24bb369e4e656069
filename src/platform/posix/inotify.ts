/**
 * Linux's inotify(7) and a directory listing by getdents64(2), called through Deno's FFI:
 * the change journal (engines/tree/journal.ts) watches every folder of a delegate's
 * directories and lists new ones as they appear.
 *
 * Only under Deno on Linux (the source run with `-A`, and the compiled binaries, which have
 * every permission). Node has no FFI, and its own watcher (`fs.watch`, libuv) cannot stand in
 * (issue 34, item 2; seen on Node 20.20): it does not ask for IN_CLOSE_WRITE, the only event a
 * write through a shared memory map leaves (inotify(7): mmap writes raise no IN_MODIFY), and
 * such a write gave it no event at all; and it drops IN_Q_OVERFLOW (libuv finds no watcher for
 * its wd of -1), so 20,001 files made while the event loop was busy gave 16,384 events
 * (`fs.inotify.max_queued_events`) and no error. Neither miss shows in the files' folders; only
 * a stat of every file finds them, which is the walk. So there `linuxFs()` is undefined: the
 * journal's inotify calls go to a Python helper instead (inotify_helper.ts), and where there is
 * none callers walk the tree (engines/tree/snapshot.ts).
 */
import { readFileSync } from "node:fs";
import { decodeFileName, encodeFileName } from "../file_names.ts";
import { isDeno, isLinux } from "../runtime.ts";

export const IN_MODIFY = 0x2;
export const IN_ATTRIB = 0x4;
export const IN_CLOSE_WRITE = 0x8;
export const IN_MOVED_FROM = 0x40;
export const IN_MOVED_TO = 0x80;
export const IN_CREATE = 0x100;
export const IN_DELETE = 0x200;
export const IN_DELETE_SELF = 0x400;
export const IN_MOVE_SELF = 0x800;
export const IN_UNMOUNT = 0x2000;
export const IN_Q_OVERFLOW = 0x4000;
export const IN_IGNORED = 0x8000;
export const IN_ONLYDIR = 0x1000000;
export const IN_DONT_FOLLOW = 0x2000000;
export const IN_ISDIR = 0x40000000;

const IN_NONBLOCK = 0o4000;
const IN_CLOEXEC = 0o2000000;
const O_RDONLY_DIRECTORY_NOFOLLOW_CLOEXEC = 0o200000 | 0o400000 | 0o2000000;
const EAGAIN = 11;
const AT_FDCWD = -100;
const AT_SYMLINK_NOFOLLOW = 0x100;
/** STATX_BASIC_STATS: type, mode, links, owner, inode, times, size. */
const STATX_BASIC = 0x7ff;
/** Where `struct statx` (linux/stat.h) keeps what is read of it. */
const STX = {
  nlink: 16,
  uid: 20,
  mode: 28,
  ino: 32,
  size: 40,
  ctime: 96,
  mtime: 112,
  devMajor: 136,
  devMinor: 140,
};
const S_IFMT = 0o170000;
const S_IF: Record<number, PathFacts["kind"]> = {
  0o040000: "dir",
  0o100000: "file",
  0o120000: "link",
};

/**
 * One inotify event; `name` is empty for an event on the watched directory itself. Names are
 * read as file_names.ts reads them: a name that is not UTF-8 keeps its bytes.
 */
export interface RawEvent {
  wd: number;
  mask: number;
  name: string;
}

/** One directory entry, typed by getdents64's d_type (`unknown` where the filesystem says). */
export interface DirEntry {
  name: string;
  kind: "dir" | "file" | "link" | "other" | "unknown";
}

/** What lstat(2) says of a path (a link is not followed). */
export interface PathFacts {
  kind: Exclude<DirEntry["kind"], "unknown">;
  nlink: number;
  uid: number;
  /** `device:inode`. */
  id: string;
}

/** The calls the journal makes; errors come back as negative errno values, never thrown. */
export interface LinuxFs {
  /** A non-blocking inotify instance, or -errno. */
  inotifyInit(): number;
  /** The watch descriptor for `path`, or -errno. */
  addWatch(fd: number, path: string, mask: number): number;
  /**
   * What addWatch would give for each of `paths`, asked at once: where each call costs a
   * round trip (the Node route's helper), a folder's subfolders are watched in one.
   */
  addWatches?(fd: number, paths: readonly string[], mask: number): number[];
  removeWatch(fd: number, wd: number): void;
  /** The events queued now (empty when none), or -errno. */
  readEvents(fd: number): RawEvent[] | number;
  close(fd: number): void;
  /** The entries of the directory at `path` (a link there is not followed), or -errno. */
  listDir(path: string): DirEntry[] | number;
  /**
   * The change time (ctime, ms) of `path` itself (a link is not followed), or undefined when
   * it cannot be read. Deno's own stat gives it only to the second.
   */
  changeTimeMs(path: string): number | undefined;
  /**
   * What `path` itself is, or undefined when it cannot be read. Through libc, because Deno's
   * own calls cannot name a file whose name is not UTF-8.
   */
  lstat(path: string): PathFacts | undefined;
  /**
   * What `path` is (a link followed when `follow`) as node:fs's Stats gives it, or -errno;
   * never throws. Only through libc's statx: elsewhere callers ask node:fs.
   */
  facts?(path: string, follow: boolean): StatFacts | number;
  /**
   * Now (ms), on the kernel's coarse wall clock (CLOCK_REALTIME_COARSE): the clock it stamps
   * change times with. Date.now() runs ahead of it by up to a tick, and by far more while the
   * CPU that keeps time is held up (a loaded virtual machine): a change made after Date.now()
   * was read can carry an earlier change time. Undefined when it cannot be read.
   */
  coarseNowMs?(): number | undefined;
}

/** What stat(2) says of a path, in node:fs's terms (`dev` as st_dev, as Stats gives it). */
export interface StatFacts {
  kind: PathFacts["kind"];
  dev: number;
  ino: number;
  nlink: number;
  /** st_mode: the file type and permission bits. */
  mode: number;
  uid: number;
  size: number;
  /** Modification and change times, in milliseconds with their fraction, as Stats has them. */
  mtimeMs: number;
  ctimeMs: number;
}

/** clockid_t of the kernel's coarse wall clock (linux/time.h). */
const CLOCK_REALTIME_COARSE = 5;

const SYMBOLS = {
  inotify_init1: { parameters: ["i32"], result: "i32" },
  inotify_add_watch: { parameters: ["i32", "buffer", "u32"], result: "i32" },
  inotify_rm_watch: { parameters: ["i32", "i32"], result: "i32" },
  read: { parameters: ["i32", "buffer", "usize"], result: "isize" },
  open: { parameters: ["buffer", "i32"], result: "i32" },
  close: { parameters: ["i32"], result: "i32" },
  getdents64: { parameters: ["i32", "buffer", "usize"], result: "isize", optional: true },
  statx: { parameters: ["i32", "buffer", "i32", "u32", "buffer"], result: "i32", optional: true },
  clock_gettime: { parameters: ["i32", "buffer"], result: "i32", optional: true },
  __errno_location: { parameters: [], result: "pointer" },
} as const;

type Lib = Deno.DynamicLibrary<typeof SYMBOLS>["symbols"];

/** glibc, then musl's names. */
const LIBC_NAMES = ["libc.so.6", "libc.musl-x86_64.so.1", "libc.musl-aarch64.so.1", "libc.so"];

let loaded: { fs: LinuxFs | undefined } | undefined;

/** The user's limit of inotify watches (fs.inotify.max_user_watches), when it can be read. */
export function maxUserWatches(): number | undefined {
  try {
    const value = Number(readFileSync("/proc/sys/fs/inotify/max_user_watches", "utf8").trim());
    return Number.isSafeInteger(value) && value > 0 ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The calls, or undefined where they cannot be made (not Linux, not Deno, no libc found). */
export function linuxFs(): LinuxFs | undefined {
  loaded ??= { fs: isDeno && isLinux ? load() : undefined };
  return loaded.fs;
}

function load(): LinuxFs | undefined {
  for (const name of LIBC_NAMES) {
    try {
      return bind(Deno.dlopen(name, SYMBOLS).symbols);
    } catch {
      // Not this name, or no FFI permission: try the next, then go without.
    }
  }
  return undefined;
}

/** The events in `bytes`, as read(2) gives them from an inotify descriptor (whole ones only). */
export function parseEvents(bytes: Uint8Array): RawEvent[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: RawEvent[] = [];
  for (let at = 0; at + 16 <= bytes.length;) {
    const len = view.getUint32(at + 12, true);
    let end = at + 16;
    while (end < at + 16 + len && end < bytes.length && bytes[end] !== 0) end++;
    out.push({
      wd: view.getInt32(at, true),
      mask: view.getUint32(at + 4, true),
      name: decodeFileName(bytes.subarray(at + 16, end)),
    });
    at += 16 + len;
  }
  return out;
}

/** A NUL-terminated copy of `path` for a C call, with the bytes of a name that is not UTF-8. */
const cPath = (path: string) => encodeFileName(`${path}\0`);

const D_TYPES: Record<number, DirEntry["kind"]> = { 4: "dir", 8: "file", 10: "link", 0: "unknown" };

function bind(lib: Lib): LinuxFs {
  const errno = () => new Deno.UnsafePointerView(lib.__errno_location()!).getInt32();
  const eventBuf = new Uint8Array(64 * 1024);
  const direntBuf = new Uint8Array(64 * 1024);
  const dirents = new DataView(direntBuf.buffer);
  const statBuf = new Uint8Array(256);
  const timespec = new BigInt64Array(2);
  const stat = new DataView(statBuf.buffer);
  const statx = (path: string, follow = false) =>
    lib.statx!(AT_FDCWD, cPath(path), follow ? 0 : AT_SYMLINK_NOFOLLOW, STATX_BASIC, statBuf) >=
      0;
  const timeMs = (at: number) =>
    Number(stat.getBigInt64(at, true)) * 1000 + stat.getUint32(at + 8, true) / 1e6;
  const fs: LinuxFs = {
    coarseNowMs() {
      // struct timespec on a 64-bit system: seconds, then nanoseconds.
      if (!lib.clock_gettime || lib.clock_gettime(CLOCK_REALTIME_COARSE, timespec) !== 0) {
        return undefined;
      }
      return Number(timespec[0]!) * 1000 + Number(timespec[1]!) / 1e6;
    },
    changeTimeMs(path) {
      if (!lib.statx) {
        try {
          return Deno.lstatSync(path).ctime?.getTime();
        } catch {
          return undefined;
        }
      }
      if (!statx(path)) return undefined;
      return timeMs(STX.ctime);
    },
    lstat(path) {
      if (!lib.statx) return lstatWithDeno(path);
      if (!statx(path)) return undefined;
      return {
        kind: S_IF[stat.getUint16(STX.mode, true) & S_IFMT] ?? "other",
        nlink: stat.getUint32(STX.nlink, true),
        uid: stat.getUint32(STX.uid, true),
        id: `${stat.getUint32(STX.devMajor, true)}:${stat.getUint32(STX.devMinor, true)}:${
          stat.getBigUint64(STX.ino, true)
        }`,
      };
    },
    inotifyInit() {
      const fd = lib.inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
      return fd < 0 ? -errno() : fd;
    },
    addWatch(fd, path, mask) {
      const wd = lib.inotify_add_watch(fd, cPath(path), mask);
      return wd < 0 ? -errno() : wd;
    },
    removeWatch(fd, wd) {
      lib.inotify_rm_watch(fd, wd);
    },
    readEvents(fd) {
      const out: RawEvent[] = [];
      // A read returns whole events only; the buffer holds hundreds of them.
      for (;;) {
        const got = Number(lib.read(fd, eventBuf, BigInt(eventBuf.length)));
        if (got < 0) {
          const e = errno();
          return e === EAGAIN ? out : -e;
        }
        if (got === 0) return out;
        out.push(...parseEvents(eventBuf.subarray(0, got)));
      }
    },
    close(fd) {
      lib.close(fd);
    },
    listDir(path) {
      if (!lib.getdents64) return listWithDeno(path);
      const fd = lib.open(cPath(path), O_RDONLY_DIRECTORY_NOFOLLOW_CLOEXEC);
      if (fd < 0) return -errno();
      const out: DirEntry[] = [];
      try {
        for (;;) {
          const got = Number(lib.getdents64(fd, direntBuf, BigInt(direntBuf.length)));
          if (got < 0) return -errno();
          if (got === 0) return out;
          // struct linux_dirent64: ino u64, off s64, reclen u16, type u8, name (NUL-ended).
          for (let at = 0; at < got;) {
            const reclen = dirents.getUint16(at + 16, true);
            const type = direntBuf[at + 18]!;
            let end = at + 19;
            while (end < at + reclen && direntBuf[end] !== 0) end++;
            const bytes = direntBuf.subarray(at + 19, end);
            at += reclen;
            // "." and "..": skipped by their bytes, before any decoding.
            if (
              bytes[0] === 0x2e && (bytes.length === 1 || (bytes.length === 2 && bytes[1] === 0x2e))
            ) {
              continue;
            }
            out.push({ name: decodeFileName(bytes), kind: D_TYPES[type] ?? "other" });
          }
        }
      } finally {
        lib.close(fd);
      }
    },
  };
  if (lib.statx) {
    fs.facts = (path, follow) => {
      if (!statx(path, follow)) return -errno();
      const mode = stat.getUint16(STX.mode, true);
      const major = BigInt(stat.getUint32(STX.devMajor, true));
      const minor = BigInt(stat.getUint32(STX.devMinor, true));
      return {
        kind: S_IF[mode & S_IFMT] ?? "other",
        // glibc's makedev, as st_dev holds it.
        dev: Number(
          ((major & 0xfffff000n) << 32n) | ((major & 0xfffn) << 8n) |
            ((minor & 0xffffff00n) << 12n) | (minor & 0xffn),
        ),
        ino: Number(stat.getBigUint64(STX.ino, true)),
        nlink: stat.getUint32(STX.nlink, true),
        mode,
        uid: stat.getUint32(STX.uid, true),
        size: Number(stat.getBigUint64(STX.size, true)),
        mtimeMs: timeMs(STX.mtime),
        ctimeMs: timeMs(STX.ctime),
      };
    };
  }
  return fs;
}

/** Where libc has no statx (glibc before 2.28): Deno's own (it cannot name every file). */
function lstatWithDeno(path: string): PathFacts | undefined {
  try {
    const info = Deno.lstatSync(path);
    return {
      kind: info.isDirectory ? "dir" : info.isFile ? "file" : info.isSymlink ? "link" : "other",
      nlink: info.nlink ?? 1,
      uid: info.uid ?? -1,
      id: `${info.dev}:${info.ino}`,
    };
  } catch {
    return undefined;
  }
}

/** Where libc has no getdents64 (glibc before 2.30): Deno's own listing. */
function listWithDeno(path: string): DirEntry[] | number {
  try {
    if (Deno.lstatSync(path).isSymlink) return -20; // ENOTDIR, as O_NOFOLLOW gives
    return [...Deno.readDirSync(path)].map((e) => ({
      name: e.name,
      kind: e.isDirectory ? "dir" : e.isFile ? "file" : e.isSymlink ? "link" : "other",
    }));
  } catch (e) {
    const code = (e as { code?: string }).code;
    return code === "ENOENT" ? -2 : code === "EACCES" ? -13 : code === "ENOTDIR" ? -20 : -5;
  }
}
