/**
 * Which directories a delegate may work in: its cwd and every `add_dirs` entry, for both
 * engines. A delegate reads what lies in its directories and sends it to its model's
 * provider, and may change it: a job in `$HOME` read `~/.ssh/id_rsa` and
 * `~/.claude/.credentials.json`, a job in `/` could reach the whole host. Paths are judged by
 * their real path, so a symlink to `$HOME` is `$HOME`.
 *
 * Refused, in this order:
 * - system: `/`, the top-level system directories themselves and every directory holding
 *   one; below /proc, /sys, /dev, /boot, /etc, /usr and the bin/lib directories as well.
 *   Below shared ones (/tmp, /srv, /opt, /home...) a project directory is fine.
 * - home: `$HOME`, every directory holding it, and other users' home directories themselves.
 * - credentials: a credential store (`~/.ssh`, `~/.aws`...) or anything below one.
 * - workspace roots: when the user set `workspaceRoots`, anything outside all of them.
 */
import { realpath } from "node:fs/promises";
import { homedir } from "node:os";
import { posix, win32 } from "node:path";
import process from "node:process";
import { CREDENTIAL_PATHS } from "./protected_paths.ts";
import { isWindows } from "../platform/runtime.ts";
import { isInside } from "../platform/path_inside.ts";
import { realOrSelf } from "../platform/raw_fs.ts";

export type WorkdirRule = "system" | "home" | "credentials" | "workspace-roots";

/** The user's policy for working directories. */
export interface WorkdirPolicy {
  /** The server user's home directory. */
  home: string;
  /** When non-empty, every directory must lie inside (or be) one of these. */
  workspaceRoots: readonly string[];
}

/** Why a directory was refused. Data only: callers word the advice for their reader. */
export interface WorkdirRefusal {
  /** The path as given, made absolute. */
  path: string;
  /** The path with every symlink resolved: what was judged. */
  real: string;
  rule: WorkdirRule;
  /** Why, as a clause that follows `Cannot use cwd "x": ` (names the rule's reason). */
  reason: string;
}

/** A path flavour: the algorithms below run for both on any OS, so both can be tested. */
export interface PathFlavor {
  path: typeof posix;
  /** Comparison key: case-folded where the file system usually folds case. */
  key: (p: string) => string;
  /** Refused with everything below them. */
  systemTrees: readonly string[];
  /** Refused themselves (and every directory holding them); what lies below is fine. */
  systemDirs: readonly string[];
  /** Directories whose direct children are users' home directories. */
  homeParents: readonly string[];
}

/** Linux and macOS (on macOS /etc, /tmp and /var are symlinks into /private). */
export const POSIX_FLAVOR: PathFlavor = {
  path: posix,
  key: (p) => p,
  systemTrees: [
    "/proc",
    "/sys",
    "/dev",
    "/boot",
    "/etc",
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/System",
    "/private/etc",
  ],
  systemDirs: [
    "/var",
    "/var/lib",
    "/var/log",
    "/var/cache",
    "/var/spool",
    "/var/mail",
    "/var/tmp",
    "/run",
    "/run/user",
    "/tmp",
    "/opt",
    "/srv",
    "/mnt",
    "/media",
    "/home",
    "/root",
    "/snap",
    "/nix",
    "/lost+found",
    "/Applications",
    "/Library",
    "/Users",
    "/Volumes",
    "/private",
    "/private/tmp",
    "/private/var",
  ],
  homeParents: ["/home", "/Users"],
};

/** Windows: drive roots, the system folder, the program folders and the users folder. */
export function windowsFlavor(systemRoot = "C:\\Windows"): PathFlavor {
  const drive = win32.parse(systemRoot).root.replace(/\\$/, "") || "C:";
  return {
    path: win32 as unknown as typeof posix,
    key: (p) => p.toLowerCase(),
    systemTrees: [systemRoot],
    systemDirs: [
      `${drive}\\Program Files`,
      `${drive}\\Program Files (x86)`,
      `${drive}\\ProgramData`,
      `${drive}\\Users`,
    ],
    homeParents: [`${drive}\\Users`],
  };
}

function hostFlavor(): PathFlavor {
  return isWindows ? windowsFlavor(process.env.SystemRoot ?? "C:\\Windows") : POSIX_FLAVOR;
}

/** True when `inner` is `outer` or lies below it (both absolute and normalised). */
const within = (flavor: PathFlavor, inner: string, outer: string) =>
  isInside(flavor.key(outer), flavor.key(inner), flavor.path);

const isRoot = (flavor: PathFlavor, p: string) => flavor.path.parse(p).root === p;

/**
 * Why the real path `real` must not be a delegate's directory, or undefined. `home` and
 * `roots` must be real paths too. Pure, for both flavours.
 */
export function refusalOf(
  real: string,
  context: { home: string; roots: readonly string[] },
  flavor: PathFlavor = hostFlavor(),
): Omit<WorkdirRefusal, "path" | "real"> | undefined {
  const p = flavor.path.normalize(real);
  if (isRoot(flavor, p)) {
    return {
      rule: "system",
      reason: `"${p}" is the root of the file system and holds every system directory`,
    };
  }
  const tree = flavor.systemTrees.find((d) => within(flavor, p, d));
  if (tree !== undefined) {
    return {
      rule: "system",
      reason: `it lies in the system directory "${tree}", which holds the host's own ` +
        `programs, configuration or devices`,
    };
  }
  const same = (a: string, b: string) => flavor.key(a) === flavor.key(b);
  const dir = flavor.systemDirs.find((d) => same(p, d));
  if (dir !== undefined) {
    return {
      rule: "system",
      reason: `"${dir}" is a system directory shared by the whole host; a project directory ` +
        `below it is fine`,
    };
  }
  const held = [...flavor.systemTrees, ...flavor.systemDirs].find((d) => within(flavor, d, p));
  if (held !== undefined) {
    return { rule: "system", reason: `it holds the system directory "${held}"` };
  }
  const home = flavor.path.normalize(context.home);
  if (same(p, home)) {
    return {
      rule: "home",
      reason: "it is your home directory, where your keys and credentials live " +
        "(~/.ssh, ~/.aws, ~/.claude...)",
    };
  }
  if (within(flavor, home, p)) {
    return {
      rule: "home",
      reason: `it holds your home directory "${home}", where your keys and credentials live`,
    };
  }
  const parent = flavor.path.dirname(p);
  if (flavor.homeParents.some((h) => same(parent, h))) {
    return { rule: "home", reason: "it is a user's home directory, where their keys live" };
  }
  const store = credentialStore(flavor, p);
  if (store !== undefined) {
    return {
      rule: "credentials",
      reason: `"${store}" is a credential store (${CREDENTIAL_STORE_EXAMPLES}), which ` +
        "delegates never see",
    };
  }
  if (context.roots.length > 0 && !context.roots.some((r) => within(flavor, p, r))) {
    return {
      rule: "workspace-roots",
      reason: `it is outside the workspace roots the user allows (${context.roots.join(", ")})`,
    };
  }
  return undefined;
}

const CREDENTIAL_STORE_EXAMPLES = "~/.ssh, ~/.aws, ~/.ollama-mcp...";

/** The credential store (CREDENTIAL_PATHS) that `p` is or lies in, or undefined. */
function credentialStore(flavor: PathFlavor, p: string): string | undefined {
  const root = flavor.path.parse(p).root;
  const parts = p.slice(root.length).split(/[\\/]/).filter((s) => s !== "");
  for (let i = 0; i < parts.length; i++) {
    for (const entry of CREDENTIAL_PATHS) {
      const e = entry.split("/");
      const hit = e.length <= parts.length - i &&
        e.every((name, j) => flavor.key(parts[i + j]!) === flavor.key(name));
      if (hit) return flavor.path.join(root, ...parts.slice(0, i + e.length));
    }
  }
  return undefined;
}

/** The policy with `home` and every root resolved to real paths, once per check. */
export function realContext(policy: WorkdirPolicy): { home: string; roots: string[] } {
  return {
    home: realOrSelf(policy.home),
    roots: policy.workspaceRoots.map(realOrSelf),
  };
}

/**
 * Judges one existing directory by its real path. Returns the real path to use, or the
 * refusal. Throws (ENOENT...) when the path cannot be resolved.
 */
export async function judgeWorkdir(
  path: string,
  policy: WorkdirPolicy,
): Promise<{ real: string; refusal?: undefined } | { real: string; refusal: WorkdirRefusal }> {
  const real = await realpath(path);
  const found = refusalOf(real, realContext(policy));
  return found ? { real, refusal: { path, real, ...found } } : { real };
}

/** The policy of this process when a caller has none: its home and no workspace roots. */
export function defaultWorkdirPolicy(): WorkdirPolicy {
  return { home: homedir(), workspaceRoots: [] };
}

/** Names a refusal's rule for people: "the system directory rule"... */
export function ruleName(rule: WorkdirRule): string {
  switch (rule) {
    case "system":
      return "the system directory rule";
    case "home":
      return "the home directory rule";
    case "credentials":
      return "the credential store rule";
    case "workspace-roots":
      return "the workspace roots rule (workspaceRoots)";
  }
}
