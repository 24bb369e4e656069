/**
 * The jail around a whole Claude Code delegate on Linux: `claude -p` itself runs inside
 * bubblewrap, so that its own file tools (Read, Grep, Glob, Edit, Write), which Claude Code's
 * sandbox does not confine, see only what the kernel lets them see. Deny by default: the root
 * is an empty tmpfs; the system (`/usr`, `/etc`, the `/bin` and `/lib` links) is read-only;
 * `$HOME` is an empty tmpfs; `/tmp` is private to the turn; the only host paths are the turn's
 * roots (cwd and add_dirs, writable), the delegates' Claude Code config dir (writable: its
 * sessions and settings) and what the CLI needs to run (read-only). A credential file under
 * `$HOME`, another project, the server's records and, as root, every file only root may read
 * are simply not there, whatever the name a tool asks for (red-team round 2: a Read of
 * `~/.claude/.credentials.json` sent the user's login to the backend).
 *
 * As root the delegate runs as nobody in a user namespace with every capability dropped, and
 * the files under /etc that only root may read are hidden (they would be readable as their
 * owner). The network is the host's: Claude Code must reach its endpoint. Commands that
 * Bash runs get no network from Claude Code's own sandbox, which runs nested inside (see
 * sandbox.ts: `enableWeakerNestedSandbox`, because a second fresh /proc cannot be mounted
 * below bubblewrap's own).
 *
 * Pure: run.ts gathers the inputs and spawns the result.
 */
import { lstatSync, realpathSync, statSync } from "node:fs";
import { readFileHead } from "../../platform/file_ends.ts";
import { isInside } from "../../platform/path_inside.ts";
import { realOrSelf } from "../../platform/raw_fs.ts";
import {
  type HostPathKind,
  identityCheck,
  inspectHostPath,
  type Mask,
  maskArgs,
  type PlannedIdentity,
  systemArgs,
} from "../bwrap_base.ts";
import { dirname, isAbsolute, resolve, sep } from "node:path";
import { HELPER_CAPS, helperPrefix, helperShare } from "../mount_helper.ts";

/** The mounts of `layout` the mount helper can take, and those bubblewrap keeps. */
export function jailHelperShare(layout: JailLayout): ReturnType<typeof helperShare> {
  return helperShare(
    layout.readOnlyInside ?? [],
    layout.masks ?? [],
    (layout.views ?? []).map((v) => v.dest),
  );
}

/** A path hidden inside the jail: an empty file, or an empty read-only directory. */
export type JailMask = Mask;

/** What the jail holds for one turn. All paths absolute and real (symlinks resolved). */
export interface JailLayout {
  /** The turn's working directory: the delegate starts there. */
  cwd: string;
  /** Mounted read-write: the roots (cwd, add_dirs) and the delegates' config dir. */
  writable: readonly string[];
  /** Mounted read-only: the CLI's files, a worktree's repository, resolv.conf's target. */
  readOnly: readonly string[];
  /** Mounted read-only over their place inside a writable dir (host-run paths there). */
  readOnlyInside?: readonly string[];
  /** Hidden inside a writable dir: credential stores, the server's own folders. */
  masks?: readonly JailMask[];
  /**
   * Mounted read-write at another place: the job's cache folder at `$HOME/.cache`; and onto
   * themselves, so that they cannot be renamed: the folders a credential store is known by
   * (protected_paths.ts storeHeads).
   */
  binds?: readonly { source: string; dest: string }[];
  /**
   * Folders bound read-only over another inside the jail: git's `objects/pack` by a view of
   * the store without secret objects (src/guard/git_secrets.ts).
   */
  views?: readonly { source: string; dest: string }[];
  /** `$HOME`: an empty tmpfs, so nothing of the user's is there but what is mounted. */
  home?: string;
  /** Running as uid 0: run as nobody in a user namespace, every capability dropped. */
  root: boolean;
  /** Hidden anywhere: as root, the files under /etc only root may read. */
  systemMasks?: readonly JailMask[];
  /** Size of the private /tmp and $HOME, MiB. */
  tmpMb: number;
  /**
   * No network at all (a network namespace of its own): for commands the server runs itself,
   * which have no Claude Code around them whose nested sandbox would take the network away.
   */
  noNetwork?: boolean;
  /**
   * The shell Claude Code runs commands with (`CLAUDE_CODE_SHELL`): a host file mounted
   * read-only at `path` (jail_limits.ts, which sets the commands' rlimits through it).
   */
  shell?: { source: string; path: string; bin?: { source: string; path: string } };
  /**
   * What the paths bound inside the roots (read-only host-run paths, pinned folders) were when
   * the jail was planned, `device:inode` by path: checked inside the jail before the command
   * runs (bwrap_base.ts identityCheck).
   */
  identities?: readonly PlannedIdentity[];
  /**
   * The system's Python that mounts readOnlyInside and the masks instead of bubblewrap, past
   * MOUNT_HELPER_FROM of them (mount_helper.ts); bubblewrap mounts them without it.
   */
  mountHelper?: string;
}

type Inspect = (path: string) => HostPathKind;

function depth(path: string): number {
  return path.split("/").filter((p) => p !== "").length;
}

/** One mount below the system part, placed by depth so that a deeper one lands on top. */
interface Mount {
  path: string;
  /** Later in this order on the same depth: tmpfs before binds before masks. */
  rank: number;
  args: string[];
}

/**
 * bubblewrap's argv that runs `command args...` in the jail. The caller spawns bwrap with
 * the delegate's environment (bwrap passes it on) and stdin.
 */
export function jailArgs(
  layout: JailLayout,
  command: string,
  args: readonly string[],
  inspect: Inspect = inspectHostPath,
): string[] {
  const out = [
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    ...(layout.noNetwork ? ["--unshare-net"] : []),
    "--die-with-parent",
    "--new-session",
    ...systemArgs(layout.root, inspect),
  ];
  const helper = layout.mountHelper ? jailHelperShare(layout) : undefined;
  // After systemArgs' `--cap-drop ALL` as root: the helper drops them before the command.
  if (helper) out.push(...HELPER_CAPS);
  const size = String(layout.tmpMb * 1024 * 1024);
  out.push("--proc", "/proc", "--dev", "/dev", "--size", size, "--tmpfs", "/tmp");
  for (const mask of layout.systemMasks ?? []) out.push(...maskArgs(mask));
  const mounts: Mount[] = [];
  if (layout.home && layout.home !== "/") {
    mounts.push({ path: layout.home, rank: 0, args: ["--size", size, "--tmpfs", layout.home] });
  }
  for (const dir of layout.readOnly) {
    mounts.push({ path: dir, rank: 1, args: ["--ro-bind", dir, dir] });
  }
  for (const dir of layout.writable) {
    mounts.push({ path: dir, rank: 1, args: ["--bind", dir, dir] });
  }
  for (const b of layout.binds ?? []) {
    mounts.push({ path: b.dest, rank: 1, args: ["--bind", b.source, b.dest] });
  }
  for (const path of helper?.bwrap.readOnly ?? layout.readOnlyInside ?? []) {
    mounts.push({ path, rank: 2, args: ["--ro-bind", path, path] });
  }
  for (const v of layout.views ?? []) {
    mounts.push({ path: v.dest, rank: 2, args: ["--ro-bind", v.source, v.dest] });
  }
  for (const mask of helper?.bwrap.masks ?? layout.masks ?? []) {
    mounts.push({ path: mask.path, rank: 3, args: maskArgs(mask) });
  }
  // A mount hides what an earlier one put below its path, so shallow ones go first: $HOME's
  // tmpfs before a project inside it, a project before a server folder inside that.
  mounts.sort((a, b) => depth(a.path) - depth(b.path) || a.rank - b.rank);
  for (const m of mounts) out.push(...m.args);
  if (layout.shell) {
    out.push(
      "--ro-bind",
      layout.shell.source,
      layout.shell.path,
      "--setenv",
      "CLAUDE_CODE_SHELL",
      layout.shell.path,
    );
    const bin = layout.shell.bin;
    if (bin) out.push("--ro-bind", bin.source, bin.path);
  }
  out.push("--setenv", "TMPDIR", "/tmp", "--chdir", layout.cwd, "--");
  out.push(
    ...(helper ? helperPrefix(layout.mountHelper!, helper.helper) : []),
    ...identityCheck(layout.identities ?? [], layout.masks ?? [], layout.writable),
    command,
    ...args,
  );
  return out;
}

/**
 * What the CLI at `command` needs to run, read-only: the folder of its real file (the native
 * build is one file; an npm install keeps its vendored tools beside it), and for a script the
 * interpreter its `#!` line names, looked up on `path` for `env` lines.
 */
export function cliFiles(command: string, pathDirs: readonly string[]): string[] {
  const real = realOrSelf(command);
  const out = [dirname(real)];
  const interpreter = shebangOf(real);
  if (interpreter) {
    const name = interpreter.env ? lookup(interpreter.program, pathDirs) : interpreter.program;
    if (name) {
      const target = realOrSelf(name);
      // A system interpreter is already there read-only; one under $HOME (nvm) is not.
      if (!isSystem(target)) out.push(dirname(target));
    }
  }
  return [...new Set(out)].filter((p) => !isSystem(p));
}

/** Whether `path` lies in the system part every jail mounts read-only (`/usr`, `/bin`...). */
export function isSystem(path: string): boolean {
  return ["/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc"].some((top) =>
    path === top || path.startsWith(top + sep)
  );
}

function shebangOf(file: string): { program: string; env: boolean } | undefined {
  // The first line only: the native build is a 400 MB file, read whole on every turn before.
  const head = readFileHead(file, 256)?.text;
  if (head === undefined || !head.startsWith("#!")) return undefined;
  const words = head.slice(2).split("\n")[0]!.trim().split(/\s+/);
  const first = words[0];
  if (!first) return undefined;
  if (first.endsWith("/env")) {
    const program = words.slice(1).find((w) => !w.startsWith("-"));
    return program ? { program, env: true } : undefined;
  }
  return { program: first, env: false };
}

function lookup(name: string, pathDirs: readonly string[]): string | undefined {
  if (isAbsolute(name)) return name;
  for (const dir of pathDirs) {
    const candidate = resolve(dir, name);
    try {
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // Not there.
    }
  }
  return undefined;
}

/**
 * Files under /etc that name a place outside it which the system needs for networking: a
 * resolv.conf that is a link into /run (systemd-resolved, NetworkManager) would dangle in the
 * jail, and Claude Code could not resolve its endpoint's host name.
 */
export function etcLinkTargets(files: readonly string[] = ["/etc/resolv.conf", "/etc/hosts"]) {
  const out: string[] = [];
  for (const file of files) {
    try {
      if (!lstatSync(file).isSymbolicLink()) continue;
      const target = realpathSync(file);
      if (!target.startsWith("/etc/") && !isSystem(target)) out.push(target);
    } catch {
      // Missing or dangling on the host too.
    }
  }
  return out;
}

/** `paths` without those inside another one of them. */
export function outermost(paths: readonly string[]): string[] {
  const sorted = [...new Set(paths)].sort((a, b) => depth(a) - depth(b));
  const out: string[] = [];
  for (const p of sorted) if (!out.some((o) => isInside(o, p))) out.push(p);
  return out;
}
