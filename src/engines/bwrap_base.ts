/**
 * What the two bubblewrap layouts share (the native engine's sandbox for one command,
 * native/sandbox/bwrap_args.ts; the claude engine's jail for a whole Claude Code, claude/jail.ts):
 * the system part both mount read-only, who the process runs as when the server is root, how
 * a path is hidden, and the files under /etc that only root may read.
 */
import { lstatSync, readdirSync, readlinkSync, statSync } from "node:fs";
import { join } from "node:path";

/** A path hidden inside a sandbox: an empty file, or an empty read-only directory. */
export interface Mask {
  path: string;
  kind: "file" | "dir";
}

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
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      if (++seen > ETC_SCAN_LIMIT) break;
      const path = join(dir, name);
      let info;
      try {
        info = lstatSync(path);
      } catch {
        continue;
      }
      if (info.isSymbolicLink()) continue;
      const mode = info.mode & 0o7;
      if (info.isDirectory()) {
        if ((mode & 0o5) !== 0o5) found.push({ path, kind: "dir" });
        else pending.push(path);
      } else if (info.isFile() && (mode & 0o4) === 0) {
        found.push({ path, kind: "file" });
      }
    }
  }
  if (top === "/etc") etcMasks = found;
  return found;
}
