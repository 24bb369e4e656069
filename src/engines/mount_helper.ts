/**
 * Many read-only binds and masks at a cost that grows with their number, not its square.
 * bubblewrap 0.8 reads its whole mount table for each mount it makes (bwrap_base.ts
 * MAX_SECRET_MASKS), so a folder of 100 projects, whose `.git`, `.claude`, `.vscode`,
 * `CLAUDE.md` and `.envrc` are each held read-only and whose secret `.envrc`s are hidden, took
 * 0.26 to 0.42 s to set up before the delegate started (issue 34).
 *
 * Past MOUNT_HELPER_FROM of them, bubblewrap makes the others and starts this helper: the
 * system's Python (in the system's folders, which every sandbox mounts read-only; `-I -S`: no variable, user site or file of the project is read) with two
 * capabilities of the sandbox's user namespace, CAP_SYS_ADMIN to mount and CAP_SETPCAP to
 * drop the bounding set. The helper
 *   - takes a mount namespace of its own (bubblewrap's belongs to a user namespace it made
 *     first, in which the helper may not mount);
 *   - binds each read-only path onto itself with what is mounted below it (a mask stays a
 *     mask), and hides each masked path as bwrap_base.ts maskArgs does (/dev/null, an empty
 *     tmpfs);
 *   - makes each of these, and every mount below it, read-only (mount_setattr, recursive,
 *     Linux 5.12): a writable folder bound below one (a pin) is read-only there too, as
 *     bubblewrap's bind from the host's side left it; only flags are added, so none that the
 *     kernel locks is cleared;
 *   - drops every capability, the bounding and ambient sets included, sets no_new_privs, reads
 *     back from /proc/self/status that none is left, and only then becomes the command (the
 *     identity check first, bwrap_base.ts identityCheck).
 * Anything that fails ends the sandbox with 125 before the command runs: nothing runs with a
 * path left writable, a secret shown, or a capability kept. The mounts belong to a namespace
 * the command has no capability in, so it cannot undo them, and in a namespace it makes below
 * (Claude Code's sandbox) they are locked.
 *
 * Not used where it cannot be: without a system Python that has ctypes, on a kernel older than
 * 5.12, with a setuid bubblewrap (which refuses `--cap-add` to users), where a trial sandbox
 * shows it cannot run (a security module denying the capabilities), for names that are not
 * UTF-8 (the command's arguments cannot carry them: bwrap_base.ts bwrapCommand), and for masks
 * in a folder bubblewrap covers with a view. bubblewrap mounts those.
 */
import { statSync } from "node:fs";
import { hasRawBytes } from "../platform/file_names.ts";
import { isInside } from "../platform/path_inside.ts";
import { isRoot } from "../platform/runtime.ts";
import { systemPython } from "../platform/posix/inotify_helper.ts";
import { spawnSyncExact } from "../platform/posix/spawn_sync.ts";
import { inspectHostPath, type Mask, systemArgs } from "./bwrap_base.ts";

/**
 * Read-only binds and masks from which the helper is used. Measured on 2 cores, a sandbox set
 * up and `true` run: bubblewrap alone 16 ms with 16 binds, 23 ms with 64, 43 ms with 128 and
 * 238 ms with 500; with the helper 41, 42, 45 and 54 ms (Python's start is most of it).
 */
export const MOUNT_HELPER_FROM = 128;

/** The capabilities bubblewrap leaves the helper, which it drops before the command. */
export const HELPER_CAPS = ["--cap-add", "CAP_SYS_ADMIN", "--cap-add", "CAP_SETPCAP"] as const;

/**
 * The helper; its arguments: pairs of what and where (`ro <path>`: bound onto itself; `file`
 * or `dir <path>`: hidden, by /dev/null or an empty tmpfs, as bwrap_base.ts maskArgs hides),
 * `--`, the command and its arguments.
 */
export const HELPER_SCRIPT = `
import ctypes, os, sys
def die(what):
    os.write(2, ("ollama-delegate: the sandbox could not be set up: " + what + "\\n").encode("utf-8", "replace"))
    os._exit(125)
try:
    libc = ctypes.CDLL(None, use_errno=True)
    def check(ok, what):
        if not ok:
            die(what + ": " + os.strerror(ctypes.get_errno()))
    argv = sys.argv
    end = argv.index("--")
    ops = argv[1:end]
    check(libc.unshare(0x20000) == 0, "a mount namespace of its own")
    class Attr(ctypes.Structure):
        _fields_ = [(name, ctypes.c_uint64) for name in ("set", "clear", "propagation", "userns")]
    readonly = Attr(1 | 2 | 4, 0, 0, 0)
    for at in range(0, len(ops), 2):
        kind, path = ops[at], ops[at + 1]
        raw = os.fsencode(path)
        if kind == "ro":
            check(libc.mount(raw, raw, None, 0x1000 | 0x4000, None) == 0, "binding " + path)
        elif kind == "file":
            check(libc.mount(b"/dev/null", raw, None, 0x1000, None) == 0, "hiding " + path)
        elif kind == "dir":
            check(libc.mount(b"tmpfs", raw, b"tmpfs", 2 | 4, b"mode=0755") == 0, "hiding " + path)
        else:
            die("unknown mount " + kind)
        check(libc.syscall(ctypes.c_long(442), ctypes.c_long(-100), raw, ctypes.c_long(0x8000),
                           ctypes.byref(readonly), ctypes.c_long(ctypes.sizeof(readonly))) == 0,
              "holding " + path + " read-only")
    with open("/proc/sys/kernel/cap_last_cap") as f:
        last = int(f.read())
    for cap in range(last + 1):
        check(libc.prctl(24, cap, 0, 0, 0) == 0, "dropping capability %d from the bounding set" % cap)
    libc.prctl(47, 4, 0, 0, 0)
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)
    check(libc.capset(header, (ctypes.c_uint32 * 6)()) == 0, "dropping the capabilities")
    check(libc.prctl(38, 1, 0, 0, 0) == 0, "no_new_privs")
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("Cap") and int(line.split()[1], 16) != 0:
                die("a capability was left: " + line.strip())
    os.execv(argv[end + 1], argv[end + 1:])
except BaseException as e:
    die(repr(e))
`;

/** Exits 0 when ctypes loads and the kernel has mount_setattr (an error other than ENOSYS). */
const PROBE = [
  "import ctypes, sys",
  "libc = ctypes.CDLL(None, use_errno=True)",
  "libc.syscall(ctypes.c_long(442), ctypes.c_long(-100), b'/', ctypes.c_long(0), None, ctypes.c_long(0))",
  "sys.exit(3 if ctypes.get_errno() == 38 else 0)",
].join("\n");

let usable: string | null | undefined;

/**
 * The system's Python (inotify_helper.ts systemPython, which the Node journal runs too) when it
 * has ctypes and the kernel has mount_setattr; tried once per process.
 */
function helperPython(): string | undefined {
  if (usable !== undefined) return usable ?? undefined;
  usable = null;
  const python = systemPython();
  if (python !== undefined) {
    try {
      const probe = spawnSyncExact(python, ["-I", "-S", "-c", PROBE], {
        stdio: "ignore",
        timeout: 10_000,
        env: {},
      });
      if (probe.status === 0) usable = python;
    } catch {
      // It does not start: bubblewrap mounts everything.
    }
  }
  return usable ?? undefined;
}

/** Whether bubblewrap at `bwrap` is setuid (it then refuses `--cap-add` to users). */
function setuid(bwrap: string): boolean {
  try {
    return (statSync(bwrap).mode & 0o4000) !== 0;
  } catch {
    return true;
  }
}

/** What the helper mounts: read-only binds, and masks (bwrap_base.ts maskArgs). */
export interface HelperShare {
  readOnly: string[];
  masks: Mask[];
}

/**
 * The mounts the helper can take, and those bubblewrap keeps: names that are not UTF-8, and
 * masks inside a folder bubblewrap binds over from the host afterwards (git's `objects/pack`
 * seen through a view: bubblewrap's bind covers them, a mask made after it would land in the
 * view).
 */
export function helperShare(
  readOnly: readonly string[],
  masks: readonly Mask[] = [],
  views: readonly string[] = [],
): { helper: HelperShare; bwrap: HelperShare } {
  const masked = (m: Mask) => hasRawBytes(m.path) || views.some((v) => isInside(v, m.path));
  return {
    helper: {
      readOnly: readOnly.filter((p) => !hasRawBytes(p)),
      masks: masks.filter((m) => !masked(m)),
    },
    bwrap: { readOnly: readOnly.filter(hasRawBytes), masks: masks.filter(masked) },
  };
}

/**
 * The Python that mounts `share` for a sandbox started through `bwrap`, when there are enough
 * mounts for it to pay and it can run; undefined when bubblewrap should mount them.
 */
export function mountHelperFor(
  bwrap: string,
  share: HelperShare,
  from = MOUNT_HELPER_FROM,
): string | undefined {
  if (share.readOnly.length + share.masks.length < from) return undefined;
  if (setuid(bwrap)) return undefined;
  const python = helperPython();
  return python && works(bwrap, python) ? python : undefined;
}

const tried = new Map<string, boolean>();

/**
 * Whether the helper runs under `bwrap` on this machine, tried once per bubblewrap: a security
 * module may deny the sandbox's capabilities (AppArmor's profile for bubblewrap on some
 * distributions does), and the helper would then end every sandbox with 125 where bubblewrap
 * alone works. A sandbox like the engines' (nobody in a user namespace as root) in which the
 * helper holds /tmp read-only and runs `true`.
 */
function works(bwrap: string, python: string): boolean {
  const known = tried.get(bwrap);
  if (known !== undefined) return known;
  let ok = false;
  try {
    const probe = spawnSyncExact(bwrap, [
      "--unshare-all",
      "--die-with-parent",
      ...systemArgs(isRoot(), inspectHostPath),
      "--proc",
      "/proc",
      "--dev",
      "/dev",
      "--tmpfs",
      "/tmp",
      ...HELPER_CAPS,
      "--",
      ...helperPrefix(python, { readOnly: ["/tmp"], masks: [] }),
      "/bin/true",
    ], { stdio: "ignore", timeout: 10_000, env: { PATH: "/usr/bin:/bin" } });
    ok = probe.status === 0;
  } catch {
    // Could not start: bubblewrap mounts everything.
  }
  tried.set(bwrap, ok);
  return ok;
}

/**
 * The command prefix that runs the helper over `share`; the command and its arguments follow
 * it. Shallow first, as bubblewrap's mounts are ordered; since the helper binds from inside the
 * sandbox with what lies below, a mask inside a read-only folder is there either way.
 */
export function helperPrefix(python: string, share: HelperShare): string[] {
  const ops = [
    ...share.readOnly.map((path) => ({ path, kind: "ro", rank: 0 })),
    ...share.masks.map((m) => ({ path: m.path, kind: m.kind, rank: 1 })),
  ];
  const depth = (p: string) => p.split("/").length;
  ops.sort((a, b) => depth(a.path) - depth(b.path) || a.rank - b.rank);
  return [python, "-I", "-S", "-c", HELPER_SCRIPT, ...ops.flatMap((o) => [o.kind, o.path]), "--"];
}
