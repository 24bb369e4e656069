/**
 * What the two bubblewrap layouts share (the native engine's sandbox for one command,
 * native/sandbox/bwrap_args.ts; the claude engine's jail for a whole Claude Code, claude/jail.ts):
 * the system part both mount read-only, who the process runs as when the server is root, how
 * a path is hidden, and the files under /etc that only root may read.
 */
import { randomBytes } from "node:crypto";
import { lstatSync, readlinkSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { concatBytes } from "../platform/bytes.ts";
import { dirNames } from "../platform/dir_names.ts";
import { encodeFileName, hasRawBytes } from "../platform/file_names.ts";
import { quoteString } from "../platform/plain_text.ts";
import { isInsideRoots } from "../platform/path_inside.ts";
import { pathFacts } from "../platform/path_facts.ts";

/** A path hidden inside a sandbox: an empty file, or an empty read-only directory. */
export interface Mask {
  path: string;
  kind: "file" | "dir";
}

/**
 * Secret files, credential stores and git objects one sandbox hides at most (both engines'
 * commands, and verify). Each is a mount, and bubblewrap 0.8 reads its whole mount table for
 * each mount it makes, so its set-up grows with the square of their number
 * (bench/sandbox_masks_bench.ts, quiet: 0.06 s for 100, 0.27 s for 500, 0.67 s for 1,000, 3.02 s
 * for 2,000): past it, commands are refused (the reply says how to narrow the job) rather than
 * slowed to a crawl.
 */
export const MAX_SECRET_MASKS = 500;

/** The uid a delegate runs as inside a sandbox when the server is root: nobody. */
export const NOBODY_UID = 65534;

/** Top-level names that are links into /usr on merged-/usr systems, or real directories. */
const SYSTEM_DIRS = ["bin", "sbin", "lib", "lib32", "lib64", "libx32"];

/** What a top-level system path is on the host. */
export type HostPathKind = "dir" | { link: string } | "missing";

export function inspectHostPath(path: string): HostPathKind {
  try {
    if (lstatSync(path).isSymbolicLink()) return { link: readlinkSync(path) };
    return statSync(path).isDirectory() ? "dir" : "missing";
  } catch {
    return "missing";
  }
}

/**
 * The system, read-only: `/usr`, `/etc` and the `/bin`, `/lib`... links or folders as the host
 * has them (lib64 is mandatory on x86-64, or nothing dynamic runs); as root, a user namespace
 * in which the process is nobody with every capability dropped (uid 0 inside would own every
 * root-owned file it can see).
 */
export function systemArgs(root: boolean, inspect: (p: string) => HostPathKind): string[] {
  const args = ["--ro-bind", "/usr", "/usr", "--ro-bind-try", "/etc", "/etc"];
  if (root) {
    args.push(
      "--unshare-user",
      "--uid",
      String(NOBODY_UID),
      "--gid",
      String(NOBODY_UID),
      "--cap-drop",
      "ALL",
    );
  }
  for (const name of SYSTEM_DIRS) {
    const host = inspect(`/${name}`);
    if (host === "missing") continue;
    if (host === "dir") args.push("--ro-bind", `/${name}`, `/${name}`);
    else args.push("--symlink", host.link, `/${name}`);
  }
  return args;
}

/** bubblewrap's mount arguments that hide `p`: an empty file, or an empty read-only dir. */
export function maskArgs(p: Mask): string[] {
  return p.kind === "file"
    ? ["--ro-bind", "/dev/null", p.path]
    : ["--tmpfs", p.path, "--remount-ro", p.path];
}

/** Entries looked at under /etc before the scan stops; /etc holds a few thousand. */
const ETC_SCAN_LIMIT = 20_000;

let etcMasks: Mask[] | undefined;

/**
 * Files and directories under /etc that other users cannot read (`/etc/shadow`, TLS private
 * keys, sudoers). As root the sandboxed process still has uid 0 on the host, so owner
 * permissions would let it read them; they are hidden instead. Scanned once per process.
 */
export function rootOnlySystemFiles(top = "/etc"): Mask[] {
  if (etcMasks && top === "/etc") return etcMasks;
  const found: Mask[] = [];
  const pending = [top];
  let seen = 0;
  while (pending.length > 0 && seen < ETC_SCAN_LIMIT) {
    const dir = pending.pop()!;
    let names: string[];
    try {
      names = dirNames(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      if (++seen > ETC_SCAN_LIMIT) break;
      const path = join(dir, name);
      let info;
      try {
        info = pathFacts(path);
      } catch {
        continue;
      }
      if (!info) continue;
      const mode = info.mode & 0o7;
      if (info.kind === "dir") {
        if ((mode & 0o5) !== 0o5) found.push({ path, kind: "dir" });
        else pending.push(path);
      } else if (info.kind === "file" && (mode & 0o4) === 0) {
        found.push({ path, kind: "file" });
      }
    }
  }
  if (top === "/etc") etcMasks = found;
  return found;
}

/**
 * How to start bubblewrap with `args`, which may name paths that are not UTF-8 (a host-run
 * file below a folder named `proj\377`, held by the string file_names.ts gives it). A process
 * gets its arguments from Deno's Command and Node's spawn only as UTF-8 text, so such a path
 * cannot be named there: it would be mounted nowhere and stay writable. bubblewrap reads more
 * arguments, NUL-separated and as raw bytes, from a file descriptor (`--args FD`, bwrap(1)):
 * its options then go through a file that a shell opens on fd 3 and removes before it becomes
 * bubblewrap (bubblewrap closes that fd once read: the command inside does not get it). Only
 * done when a path needs it. Throws, saying which path and why, when that cannot be done: the
 * caller must then not run the command (a path it could not mount would stay writable).
 */
export function bwrapCommand(
  bwrap: string,
  args: readonly string[],
): { command: string; args: string[] } {
  if (!args.some(hasRawBytes)) return { command: bwrap, args: [...args] };
  // The last `--` ends bubblewrap's options: what follows is the command, which is run as it
  // is given (only the options can go through the file).
  const end = args.lastIndexOf("--");
  const options = end < 0 ? args : args.slice(0, end);
  const command = end < 0 ? [] : args.slice(end);
  const inCommand = command.find(hasRawBytes);
  if (inCommand !== undefined) {
    throw new Error(
      `the sandbox cannot run a command whose arguments name ${
        quoteString(inCommand)
      }: its name is ` +
        "not UTF-8. Rename the folder to a UTF-8 name",
    );
  }
  const bytes = options.map((a) => encodeFileName(`${a}\0`));
  const file = join(
    tmpdir(),
    `ollama-delegate-bwrap-${process.pid}-${randomBytes(8).toString("hex")}`,
  );
  try {
    writeFileSync(file, concatBytes(bytes, bytes.reduce((n, b) => n + b.length, 0)), {
      flag: "wx",
      mode: 0o600,
    });
  } catch (e) {
    const named = options.find(hasRawBytes)!;
    throw new Error(
      `the sandbox cannot hold ${
        quoteString(named)
      } read-only: its name is not UTF-8, and the file ` +
        `that names it to bubblewrap could not be written (${(e as Error).message}). Free ` +
        "the temporary folder, or rename the folder to a UTF-8 name",
    );
  }
  return {
    command: "/bin/sh",
    args: [
      "-c",
      'exec 3< "$0" || exit 125; rm -f -- "$0"; exec "$@"',
      file,
      bwrap,
      "--args",
      "3",
      ...command,
    ],
  };
}

/** A path a sandbox binds by name, and what it was (`device:inode`) when the mounts were planned. */
export interface PlannedIdentity {
  path: string;
  id: string;
}

/**
 * `device:inode` of `path` itself (a link not followed), as `stat -c %d:%i` prints it; undefined
 * for a name that is not UTF-8 (such a name cannot be handed to the check's shell) or one gone.
 */
export function identityOf(path: string): string | undefined {
  if (hasRawBytes(path)) return undefined;
  try {
    const info = lstatSync(path, { bigint: true });
    return `${info.dev}:${info.ino}`;
  } catch {
    return undefined;
  }
}

/** The identities of `paths` now, for identityCheck (those that cannot be had are left out). */
export function plannedIdentities(paths: readonly string[]): PlannedIdentity[] {
  return paths.flatMap((path) => {
    const id = identityOf(path);
    return id ? [{ path, id }] : [];
  });
}

/**
 * Run inside the sandbox before the command: each path bound by name must still be what the plan
 * found, and each mask must be where it was planned. bubblewrap mounts by path, and a delegate of
 * another job in the same folder could swap a planned folder for a relative link in between: the
 * mount would then land where the link points (a read-only bind showing the user's home, a
 * writable pin making it writable, a mask hiding something else and leaving the store open).
 * The bound paths are compared by `device:inode`; a mask by what it shows (`/dev/null`, or an
 * empty folder), which a link in its place is not; and the folder of each mask by identity too,
 * since a mask makes its path anew where the store was renamed away. On a difference the sandbox
 * exits 125 with a message instead of running anything.
 *
 * The script is written for its counts: the paths are named as `"${2}"`, `"${3}"`, so that each
 * `stat` looks at them alone, and each runs by `exec` in its command substitution. That is one
 * process a kind (two at most) before the command itself, which runs by `exec` too; a script that
 * cut the paths' lines from a `stat` of every argument took three a kind (a subshell, `stat`, and
 * `head` or `sed`) and looked at the command's arguments as well. The system's tools come
 * first, in the substitutions only: the command keeps its PATH. A path gone gives no line.
 */
function identityScript(bound: number, masks: number): string {
  const refs = (from: number, count: number) =>
    Array.from({ length: count }, (_, i) => `"\${${from + i}}"`).join(" ");
  const statOf = (format: string, from: number, count: number) =>
    count === 0
      ? '""'
      : `$(PATH="/usr/bin:/bin:$PATH"; exec stat -c ${format} -- ${refs(from, count)} 2>/dev/null)`;
  return [
    `ids=${statOf("%d:%i", 2, bound)}`,
    `types=${statOf("%F", 2 + bound, masks)}`,
    'got="$ids',
    "--",
    '$types"',
    'if [ "$got" != "$1" ]; then',
    '  echo "ollama-delegate: the sandbox was not set up as planned: a path bound in it was ' +
    'moved or replaced meanwhile (another job in the same folder?)" >&2',
    "  exit 125",
    "fi",
    `shift ${1 + bound + masks}`,
    'exec "$@"',
  ].join("\n");
}

/** What `stat -c %F` says of a mask inside: `/dev/null` bound over a file, a tmpfs folder. */
const MASK_TYPE: Record<Mask["kind"], string> = {
  file: "character special file",
  dir: "directory",
};

/**
 * The command prefix that runs identityScript over `planned` and the masks inside `within`
 * (the writable dirs, where a delegate could move things); none when there is nothing.
 */
export function identityCheck(
  planned: readonly PlannedIdentity[],
  masks: readonly Mask[] = [],
  within: readonly string[] = [],
): string[] {
  const held = masks.filter((m) => !hasRawBytes(m.path) && isInsideRoots(within, m.path));
  if (planned.length === 0 && held.length === 0) return [];
  const want = `${planned.map((p) => p.id).join("\n")}\n--\n${
    held.map((m) => MASK_TYPE[m.kind]).join("\n")
  }`;
  return [
    "/bin/sh",
    "-c",
    identityScript(planned.length, held.length),
    "ollama-delegate-sandbox",
    want,
    ...planned.map((p) => p.path),
    ...held.map((m) => m.path),
  ];
}
