/**
 * The change journal's calls (LinuxFs) where there is no FFI: on Node (the npm package, what
 * `npx ollama-delegate` runs). Node's own watcher cannot stand in (inotify.ts says why: it never
 * asks for IN_CLOSE_WRITE, the only event a write through a shared memory map leaves, and it
 * drops IN_Q_OVERFLOW), so the inotify calls go to a small Python program that makes them
 * through ctypes, and the journal gets the kernel's events whole, as under Deno: the same mask,
 * the overflow event, names as bytes. Listing and lstat are Node's own, by the names' bytes.
 *
 * The calls are synchronous, like the libc ones they stand for (the journal is written against
 * them): a request goes down one FIFO and the answer comes back up another, read without
 * blocking until it is there (Python answers in tens of microseconds). The FIFOs are in a
 * private folder (0700) of the system's /tmp, which no sandbox shows a delegate, removed as soon
 * as both ends are open; the descriptors are close-on-exec, so no delegate inherits them, and
 * each answer repeats its request's number. A process of the user's outside every sandbox could
 * still reach the server's ends through /proc, as it could reach anything of the server's.
 * Python is taken only from the system's folders, run isolated (`-I -S`: no PYTHON* variables,
 * no site packages) with an empty environment.
 *
 * Where no Python is found, or it stops answering (10 s), the calls fail with an errno: the
 * journal is then not kept or stops, and the turn walks the tree instead, as it always did on
 * Node. Fail closed: a dead helper can cost time, never a change unlisted.
 */
import { type ChildProcess, spawn } from "node:child_process";
import {
  closeSync,
  constants,
  type Dirent,
  fstatSync,
  lstatSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  writeSync,
} from "node:fs";
import { constants as osConstants } from "node:os";
import { join } from "node:path";
import { decodeFileName, diskPath, encodeFileName } from "../file_names.ts";
import { isDeno, isLinux } from "../runtime.ts";
import { type DirEntry, type LinuxFs, parseEvents, type PathFacts } from "./inotify.ts";

/** Where Python is looked for: the system's folders only, never the PATH a project can reach. */
export const PYTHON_CANDIDATES = ["/usr/bin/python3", "/usr/local/bin/python3", "/bin/python3"];

/** How long a call may wait for its answer before the helper is given up. */
const ANSWER_MS = 10_000;
/** How long Python may take to start (the server waits, once). */
const START_MS = 3_000;
/**
 * Where the FIFOs are made: the system's /tmp, not TMPDIR (which may lie inside a folder a
 * delegate can write to). Both sandboxes give delegates a /tmp of their own.
 */
const FIFO_FOLDER = "/tmp/od-inotify-";

const EIO = 5;
const EBADF = 9;
const ENOTDIR = 20;
const ENOSYS = 38;

/**
 * The helper: makes both FIFOs, opens them (the request one first, as the server does), says
 * hello, then answers each request `<id u32, op u8, fd i32, arg u32, path length u32, path>`
 * with `<id u32, result i32, data length u32, data>`; the result is -errno on failure. It makes
 * itself not dumpable first (PR_SET_DUMPABLE 0: its /proc entries, its descriptors among them,
 * are then root's). It ends when the server closes its end (the server exited).
 */
const HELPER = String.raw`
import ctypes, os, struct, sys, time
req, resp = sys.argv[1:3]
os.mkfifo(req, 0o600)
os.mkfifo(resp, 0o600)
src = os.open(req, os.O_RDONLY)
dst = os.open(resp, os.O_WRONLY)
libc = ctypes.CDLL(None, use_errno=True)
libc.prctl(4, 0, 0, 0, 0)
libc.inotify_init1.argtypes = [ctypes.c_int]
libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
libc.inotify_rm_watch.argtypes = [ctypes.c_int, ctypes.c_int]
def take(n):
    data = b""
    while len(data) < n:
        more = os.read(src, n - len(data))
        if not more:
            sys.exit(0)
        data += more
    return data
def send(result, data=b""):
    out = struct.pack("<IiI", ask, result, len(data)) + data
    while out:
        out = out[os.write(dst, out):]
def checked(result):
    return result if result >= 0 else -ctypes.get_errno()
def drain(fd):
    chunks, size = [], 0
    while size < (8 << 20):
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            break
        except OSError as e:
            return -e.errno, b""
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return 0, b"".join(chunks)
ask = 0
send(0)
while True:
    ask, op, fd, arg, n = struct.unpack("<IBiII", take(17))
    path = take(n)
    if op == 1:
        send(checked(libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)))
    elif op == 2:
        send(checked(libc.inotify_add_watch(fd, path, arg)))
    elif op == 3:
        libc.inotify_rm_watch(fd, arg)
        send(0)
    elif op == 4:
        send(*drain(fd))
    elif op == 5:
        os.close(fd)
        send(0)
    elif op == 6:
        wds = [checked(libc.inotify_add_watch(fd, p, arg)) for p in path.split(b"\0")]
        send(0, struct.pack("<%di" % len(wds), *wds))
    elif op == 7:
        try:
            send(0, struct.pack("<q", time.clock_gettime_ns(5)))
        except (AttributeError, OSError):
            send(-38)
    else:
        send(-22)
`;

const OP = {
  init: 1,
  addWatch: 2,
  removeWatch: 3,
  read: 4,
  close: 5,
  addWatches: 6,
  /** The kernel's coarse wall clock (CLOCK_REALTIME_COARSE, 5), in ns. */
  coarseNow: 7,
} as const;
/**
 * Paths one addWatches request carries at most, by their bytes: with its head, within PIPE_BUF
 * (4 KiB), so that it fits the smallest pipe a user can be given (8 KiB) in one write.
 */
const BATCH_BYTES = 4096 - 17;

class HelperGone extends Error {}

/** One running helper and the server's ends of its FIFOs. */
class Helper {
  #dead = false;
  /** The last request's id. */
  #next = 0;
  private constructor(
    private readonly child: ChildProcess,
    private readonly requests: number,
    private readonly answers: number,
  ) {}

  /** Starts it with `python`; the helper, or why it could not be started. */
  static start(python: string, answerMs: number): Helper | string {
    let dir: string | undefined;
    let child: ChildProcess | undefined;
    let requests = -1;
    let answers = -1;
    try {
      dir = mkdtempSync(FIFO_FOLDER);
      const req = join(dir, "req");
      const resp = join(dir, "resp");
      child = spawn(python, ["-I", "-S", "-c", HELPER, req, resp], {
        stdio: "ignore",
        env: {},
      });
      child.on("error", () => {}); // not found: the opens below time out and say so
      child.unref();
      const deadline = Date.now() + Math.min(answerMs, START_MS);
      // Opening for writing without blocking succeeds once the helper waits to read.
      while (requests < 0) {
        try {
          requests = openSync(req, constants.O_WRONLY | constants.O_NONBLOCK);
        } catch (e) {
          const code = (e as { code?: string }).code;
          if (code !== "ENOENT" && code !== "ENXIO") throw e;
          if (ended(child.pid)) throw new Error(`${python} ended at once`);
          if (Date.now() > deadline) throw new Error(`${python} did not start in time`);
          pause(1);
        }
      }
      answers = openSync(resp, constants.O_RDONLY | constants.O_NONBLOCK);
      if (!fstatSync(requests).isFIFO() || !fstatSync(answers).isFIFO()) {
        throw new Error("its pipes are not FIFOs");
      }
      const helper = new Helper(child, requests, answers);
      // Until the helper has opened its end, a read finds no writer (0): not an end yet.
      helper.#answer(answerMs, true, 0);
      return helper;
    } catch (e) {
      child?.kill("SIGKILL");
      for (const fd of [requests, answers]) if (fd >= 0) closeQuietly(fd);
      return `the inotify helper could not be started (${(e as Error).message})`;
    } finally {
      // Both ends are open (or it failed): the names go, and nothing else can open them.
      if (dir) rmSync(dir, { recursive: true, force: true });
    }
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Whether it was given up (it stopped answering, or was stopped). */
  get dead(): boolean {
    return this.#dead;
  }

  /** One call; its result and data, or HelperGone when the helper stopped answering. */
  call(op: number, fd: number, arg: number, path?: Uint8Array): { result: number; data: Buffer } {
    if (this.#dead) throw new HelperGone();
    const name = path ?? new Uint8Array(0);
    const id = this.#next = (this.#next + 1) >>> 0;
    const request = Buffer.alloc(17 + name.length);
    request.writeUInt32LE(id, 0);
    request.writeUInt8(op, 4);
    request.writeInt32LE(fd, 5);
    request.writeUInt32LE(arg >>> 0, 9);
    request.writeUInt32LE(name.length, 13);
    request.set(name, 17);
    try {
      // The FIFO does not block: where pipes are small (a user past fs.pipe-user-pages-soft gets
      // 8 KiB), a request may have to wait for room, as an answer waits to be read.
      const deadline = Date.now() + ANSWER_MS;
      for (let sent = 0; sent < request.length;) {
        try {
          sent += writeSync(this.requests, request, sent);
        } catch (e) {
          if ((e as { code?: string }).code !== "EAGAIN") throw e;
          if (Date.now() > deadline) throw new HelperGone("the inotify helper stopped reading");
          pause(0.05);
        }
      }
      return this.#answer(ANSWER_MS, false, id);
    } catch (e) {
      this.stop();
      throw e instanceof HelperGone ? e : new HelperGone((e as Error).message);
    }
  }

  stop(): void {
    if (this.#dead) return;
    this.#dead = true;
    this.child.kill("SIGKILL");
    closeQuietly(this.requests);
    closeQuietly(this.answers);
  }

  /**
   * The answer to request `id` (0: the hello). Each answer repeats its request's id: one that
   * does not is no answer of the helper's to this call, and the helper is given up.
   */
  #answer(answerMs: number, hello: boolean, id: number): { result: number; data: Buffer } {
    const deadline = Date.now() + answerMs;
    const head = this.#exactly(12, deadline, hello);
    if (head.readUInt32LE(0) !== id) throw new HelperGone("an answer out of turn");
    const length = head.readUInt32LE(8);
    return { result: head.readInt32LE(4), data: this.#exactly(length, deadline, false) };
  }

  /** `n` bytes of the answer, read without blocking until they are there. */
  #exactly(n: number, deadline: number, hello: boolean): Buffer {
    const out = Buffer.alloc(n);
    let got = 0;
    let idle = 0;
    while (got < n) {
      let read = -1;
      try {
        read = readSync(this.answers, out, got, n - got, null);
      } catch (e) {
        if ((e as { code?: string }).code !== "EAGAIN") throw e;
      }
      if (read > 0) {
        got += read;
        idle = 0;
        continue;
      }
      if (read === 0 && !hello) throw new HelperGone("the inotify helper ended");
      if (Date.now() > deadline) throw new HelperGone("the inotify helper stopped answering");
      // An answer takes tens of microseconds: spin a little, then sleep in short steps.
      if (++idle > 50) pause(idle > 2000 ? 1 : 0.05);
    }
    return out;
  }
}

/** True when the process `pid` is gone or a zombie (read without waiting for its exit event). */
function ended(pid: number | undefined): boolean {
  if (pid === undefined) return true;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return true;
  }
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));
function pause(ms: number): void {
  Atomics.wait(sleeper, 0, 0, ms);
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // already closed
  }
}

/** The errno number node:fs's error carries by name (EIO when it has none). */
function errnoOf(e: unknown): number {
  const code = (e as { code?: string }).code;
  const errno = code === undefined
    ? undefined
    : (osConstants.errno as Record<string, number>)[code];
  return errno ?? EIO;
}

const kindOf = (e: { isDirectory(): boolean; isFile(): boolean; isSymbolicLink(): boolean }) =>
  e.isDirectory() ? "dir" : e.isFile() ? "file" : e.isSymbolicLink() ? "link" : "other";

/** `device:inode` as inotify.ts writes it from statx: major, minor (glibc's split), inode. */
function identityOf(dev: bigint, ino: bigint): string {
  const major = ((dev >> 8n) & 0xfffn) | ((dev >> 32n) & 0xfffff000n);
  const minor = (dev & 0xffn) | ((dev >> 12n) & 0xffffff00n);
  return `${major}:${minor}:${ino}`;
}

/**
 * How many times a server starts its helper again after one died (killed, out of memory): each
 * later journal then works as before, where the server would otherwise walk every turn. Past it,
 * journals fail to set up and turns walk.
 */
const RESTARTS = 3;

/**
 * The journal's calls through a helper run by `python`, started at the first inotifyInit (a
 * server that keeps no journal starts none), and again at the first inotifyInit after it died
 * (RESTARTS). Exported for tests; callers use helperFs().
 *
 * The inotify instances it hands out are its own numbers, never reused, each kept with the
 * helper that made it: an instance of a dead helper answers EIO for good, and never reaches a
 * later helper's instance of the same descriptor number, whose events it would take. Its
 * journal was invalid from its first EIO; the new one walks what it missed when it opens.
 */
export function helperFsWith(
  python: string,
  answerMs = ANSWER_MS,
): LinuxFs & { stop(): void; pid(): number | undefined } {
  let helper: Helper | string | undefined;
  let restarts = 0;
  const instances = new Map<number, { helper: Helper; fd: number }>();
  let lastInstance = 0;
  const empty = (result: number) => ({ result, data: Buffer.alloc(0) });
  const on = (
    at: { helper: Helper; fd: number },
    op: number,
    arg: number,
    path?: string | Uint8Array,
  ) => {
    try {
      return at.helper.call(op, at.fd, arg, typeof path === "string" ? encodeFileName(path) : path);
    } catch (e) {
      if (!(e instanceof HelperGone)) throw e;
      return empty(-EIO);
    }
  };
  /** The running helper, started (again) when there is none; or why there is none. */
  const running = (): Helper | string => {
    if (helper instanceof Helper && helper.dead && restarts < RESTARTS) {
      restarts++;
      helper = undefined;
    }
    helper ??= Helper.start(python, answerMs);
    return helper;
  };
  const init = (): number => {
    // Twice: a helper that died since its last call is found dead by this one.
    for (let attempt = 0; attempt < 2; attempt++) {
      const h = running();
      if (typeof h === "string") return -ENOSYS;
      const { result } = on({ helper: h, fd: -1 }, OP.init, 0);
      if (result >= 0) {
        instances.set(++lastInstance, { helper: h, fd: result });
        return lastInstance;
      }
      if (!h.dead) return result;
    }
    return -EIO;
  };
  const call = (op: number, fd: number, arg: number, path?: string | Uint8Array) => {
    const at = instances.get(fd);
    return at ? on(at, op, arg, path) : empty(-EBADF);
  };
  return {
    /** Ends the helper (tests; a server's ends with it). */
    stop() {
      if (helper instanceof Helper) helper.stop();
    },
    /** The helper's process, once started (tests). */
    pid: () => helper instanceof Helper ? helper.pid : undefined,
    inotifyInit: init,
    addWatch: (fd, path, mask) => call(OP.addWatch, fd, mask, path).result,
    addWatches(fd, paths, mask) {
      const out: number[] = [];
      for (let at = 0; at < paths.length;) {
        // One request per BATCH_BYTES of paths (at least one path), NUL between them.
        const names: Uint8Array[] = [];
        let bytes = 0;
        while (at < paths.length) {
          const name = encodeFileName(paths[at]!);
          if (names.length > 0 && bytes + name.length + 1 > BATCH_BYTES) break;
          names.push(name);
          bytes += name.length + 1;
          at++;
        }
        const joined = new Uint8Array(bytes - 1);
        let put = 0;
        for (const name of names) {
          joined.set(name, put);
          put += name.length + 1; // the byte after each name stays 0
        }
        const { result, data } = call(OP.addWatches, fd, mask, joined);
        const whole = result >= 0 && data.length === names.length * 4;
        for (let i = 0; i < names.length; i++) {
          out.push(whole ? data.readInt32LE(i * 4) : result < 0 ? result : -EIO);
        }
      }
      return out;
    },
    removeWatch(fd, wd) {
      call(OP.removeWatch, fd, wd);
    },
    readEvents(fd) {
      const { result, data } = call(OP.read, fd, 0);
      return result < 0 ? result : parseEvents(data);
    },
    close(fd) {
      call(OP.close, fd, 0);
      instances.delete(fd);
    },
    listDir: (path) => listFolder(path),
    coarseNowMs() {
      const h = running();
      if (typeof h === "string") return undefined;
      const { result, data } = on({ helper: h, fd: -1 }, OP.coarseNow, 0);
      return result === 0 && data.length === 8
        ? Number(data.readBigInt64LE(0) / 1000n) / 1000
        : undefined;
    },
    changeTimeMs(path) {
      try {
        const info = lstatSync(diskPath(path), { bigint: true });
        return Number(info.ctimeNs / 1000n) / 1000;
      } catch {
        return undefined;
      }
    },
    lstat(path): PathFacts | undefined {
      try {
        const info = lstatSync(diskPath(path), { bigint: true });
        return {
          kind: kindOf(info),
          nlink: Number(info.nlink),
          uid: Number(info.uid),
          id: identityOf(info.dev, info.ino),
        };
      } catch {
        return undefined;
      }
    },
  };
}

type TypedListing = (at: string | Buffer) => Dirent<Buffer>[];
const typedListing: TypedListing = (at) =>
  readdirSync(at, { encoding: "buffer", withFileTypes: true });

/**
 * The entries of the folder at `path`, not through a link (the libc listing opens it with
 * O_NOFOLLOW: the folder is looked at before and after, and one swapped in between is
 * refused), or -errno. Where the file system gives no entry's type (DT_UNKNOWN: ext2 without
 * `filetype`, XFS with `ftype=0`, some NFS and FUSE mounts), Node's typed listing looks each
 * entry up itself and throws for the whole folder when one is gone by then, which a delegate can
 * make happen at will (a link made and removed in a loop); the folder is then listed by name
 * alone, each entry's kind left `unknown` for the caller to look up, as the libc listing does.
 * `typed` is Node's own listing (tests give one that fails as it does there).
 */
export function listFolder(path: string, typed: TypedListing = typedListing): DirEntry[] | number {
  const at = diskPath(path);
  try {
    const before = lstatSync(at, { bigint: true });
    if (!before.isDirectory()) return -ENOTDIR;
    const same = () => {
      const after = statSync(at, { bigint: true });
      return after.ino === before.ino && after.dev === before.dev;
    };
    let entries: DirEntry[];
    try {
      entries = typed(at).map((e) => ({ name: decodeFileName(e.name), kind: kindOf(e) }));
    } catch (e) {
      // Only an entry gone (an unreadable one is the folder's own state, said as it is).
      if ((e as { code?: string }).code !== "ENOENT" || !same()) throw e;
      entries = readdirSync(at, { encoding: "buffer" }).map((name) => ({
        name: decodeFileName(name),
        kind: "unknown" as const,
      }));
    }
    return same() ? entries : -ENOTDIR;
  } catch (e) {
    return -errnoOf(e);
  }
}

let chosen: { fs: LinuxFs | undefined } | undefined;

/**
 * The journal's calls on Node on Linux, when a system Python is there; undefined elsewhere
 * (Deno has inotify.ts's own; other systems keep no journal), and callers walk.
 */
export function helperFs(): LinuxFs | undefined {
  if (!chosen) {
    const python = !isDeno && isLinux ? systemPython() : undefined;
    chosen = { fs: python === undefined ? undefined : helperFsWith(python) };
  }
  return chosen.fs;
}

/** The first of PYTHON_CANDIDATES that is a file, or undefined. */
export function systemPython(): string | undefined {
  return PYTHON_CANDIDATES.find((python) => {
    try {
      return statSync(python).isFile();
    } catch {
      return false;
    }
  });
}
