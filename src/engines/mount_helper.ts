/**
 * Many read-only binds at a cost that grows with their number, not its square. bubblewrap 0.8
 * reads its whole mount table for each mount it makes (bwrap_base.ts MAX_SECRET_MASKS), so a
 * folder of 100 projects, whose `.git`, `.claude`, `.vscode`, `CLAUDE.md` and `.envrc` are
 * each held read-only, took 0.22 to 0.37 s to set up before the delegate started (issue 34).
 *
 * Past MOUNT_HELPER_FROM such binds, bubblewrap makes the others and starts this helper, the
 * system's Python (`-I -S`: no variable, user site or file of the project is read), with two
 * capabilities of the sandbox's user namespace: CAP_SYS_ADMIN to mount, CAP_SETPCAP to drop
 * the bounding set. It takes a mount namespace of its own (bubblewrap's belongs to the user
 * namespace it made first), binds each path onto itself with what is mounted below it (a mask
 * stays a mask) and makes the bind and every mount below it read-only (mount_setattr with
 * AT_RECURSIVE, Linux 5.12: a writable mount below, a pinned folder, is read-only there too,
 * as bubblewrap's bind from the host's side left it; only flags are added, none the kernel
 * locks is cleared). It then drops every
 * capability, bounding and ambient sets included, sets no_new_privs, reads back from
 * /proc/self/status that none is left, and only then becomes the command (the identity check
 * first, bwrap_base.ts). Anything that fails ends the sandbox with 125 before the command
 * runs: nothing is run with a path left writable, nor with a capability. The mounts belong to
 * a namespace the command has no capability in: it cannot undo them, and a namespace it makes
 * below (Claude Code's sandbox) gets them locked.
 *
 * Not used where it cannot be: without a system Python that has ctypes, on a kernel older
 * than 5.12, with a setuid
 * bubblewrap (which refuses `--cap-add` to users), and for names that are not UTF-8 (the
 * command's arguments cannot carry them: bubblewrap mounts those, bwrap_base.ts bwrapCommand).
 */
import { spawnSync } from "node:child_process";
import { realpathSync, statSync } from "node:fs";
import { hasRawBytes } from "../platform/file_names.ts";

/**
 * Read-only binds from which the helper is used. Measured on 2 cores, a sandbox set up and
 * `true` run: bubblewrap alone 16 ms with 16 binds, 23 ms with 64, 43 ms with 128 and 238 ms
 * with 500; with the helper 41, 42, 45 and 54 ms (Python's start is most of it).
 */
export const MOUNT_HELPER_FROM = 128;

/** Where the system's Python is looked for: in the read-only system part of every sandbox. */
const PYTHONS = ["/usr/bin/python3", "/usr/local/bin/python3"];

/** The capabilities bubblewrap leaves the helper, which it drops before the command. */
export const HELPER_CAPS = ["--cap-add", "CAP_SYS_ADMIN", "--cap-add", "CAP_SETPCAP"] as const;

/** The helper; its arguments: the paths, `--`, the command and its arguments. */
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
    check(libc.unshare(0x20000) == 0, "a mount namespace of its own")
    class Attr(ctypes.Structure):
        _fields_ = [(name, ctypes.c_uint64) for name in ("set", "clear", "propagation", "userns")]
    readonly = Attr(1 | 2 | 4, 0, 0, 0)
    for path in argv[1:end]:
        raw = os.fsencode(path)
        check(libc.mount(raw, raw, None, 0x1000 | 0x4000, None) == 0, "binding " + path)
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

let found: string | null | undefined;

/** The system's Python with ctypes, found once per process; undefined without one. */
function systemPython(): string | undefined {
  if (found !== undefined) return found ?? undefined;
  found = null;
  for (const candidate of PYTHONS) {
    try {
      const real = realpathSync(candidate);
      if (!real.startsWith("/usr/") || !statSync(real).isFile()) continue;
      const probe = spawnSync(candidate, ["-I", "-S", "-c", PROBE], {
        stdio: "ignore",
        timeout: 10_000,
        env: {},
      });
      if (probe.status === 0) {
        found = candidate;
        break;
      }
    } catch {
      // Not there.
    }
  }
  return found ?? undefined;
}

/** Whether bubblewrap at `bwrap` is setuid (it then refuses `--cap-add` to users). */
function setuid(bwrap: string): boolean {
  try {
    return (statSync(bwrap).mode & 0o4000) !== 0;
  } catch {
    return true;
  }
}

/**
 * The Python that mounts `readOnly` for a sandbox started through `bwrap`, when there are
 * enough of them for it to pay and it can run; undefined when bubblewrap should mount them.
 */
export function mountHelperFor(
  bwrap: string,
  readOnly: readonly string[],
  from = MOUNT_HELPER_FROM,
): string | undefined {
  if (readOnly.filter((p) => !hasRawBytes(p)).length < from) return undefined;
  if (setuid(bwrap)) return undefined;
  return systemPython();
}

/** The read-only binds split between the helper and bubblewrap (names not UTF-8). */
export function helperShare(readOnly: readonly string[]): { helper: string[]; bwrap: string[] } {
  return {
    helper: readOnly.filter((p) => !hasRawBytes(p)),
    bwrap: readOnly.filter(hasRawBytes),
  };
}

/**
 * The command prefix that runs the helper over `paths` (shallow first: one inside another is
 * mounted onto the outer one); the command and its arguments follow it.
 */
export function helperPrefix(python: string, paths: readonly string[]): string[] {
  const depth = (p: string) => p.split("/").length;
  const sorted = [...paths].sort((a, b) => depth(a) - depth(b));
  return [python, "-I", "-S", "-c", HELPER_SCRIPT, ...sorted, "--"];
}
