/**
 * Which folders a delegate's commands may read of the user's toolchains, judged by path alone
 * (toolchains.ts looks at the disk): what is already there in every sandbox (the system), what
 * is never opened whole (the home folder, what holds or lies in a credential store or the
 * server's own folders), and where a toolchain keeps its files. Pure, so that every layout can
 * be tested without one on disk.
 */
import { basename, dirname, join, posix } from "node:path";
import { CREDENTIAL_PATHS, HOME_CREDENTIAL_FILES } from "./protected_paths.ts";
import { isInside } from "../platform/path_inside.ts";

/**
 * What every sandbox mounts read-only from the host already (engines/bwrap_base.ts): a PATH
 * entry here needs nothing opened.
 */
export const SYSTEM_TOPS: readonly string[] = [
  "/usr",
  "/bin",
  "/sbin",
  "/lib",
  "/lib32",
  "/lib64",
  "/libx32",
  "/etc",
];

/** The system's PATH inside every sandbox, after the user's opened entries. */
export const SYSTEM_PATH: readonly string[] = [
  "/usr/local/sbin",
  "/usr/local/bin",
  "/usr/sbin",
  "/usr/bin",
  "/sbin",
  "/bin",
];

/** Folders a sandbox makes afresh or that hold other processes' state, never opened. */
const KERNEL_TOPS: readonly string[] = ["/proc", "/sys", "/dev", "/run", "/boot"];

/** Every credential path, relative to the folder that would hold it (a home folder). */
const CREDENTIALS: readonly string[] = [...CREDENTIAL_PATHS, ...HOME_CREDENTIAL_FILES];

/** Folder names of a PATH entry whose parent is an install root (`<root>/bin`). */
const BIN_NAMES: ReadonlySet<string> = new Set(["bin", "sbin"]);

/**
 * Folder names of a PATH entry whose commands are shims that run their tool's own folder:
 * pyenv's and asdf's `shims` call `<root>/libexec` or `<root>/bin`.
 */
const SHIM_NAMES: ReadonlySet<string> = new Set(["shims"]);

export function isSystemPath(path: string): boolean {
  return SYSTEM_TOPS.some((top) => isInside(top, path));
}

/** What a folder or file must not be opened for: its place, the server's, the job's. */
export interface RuleScope {
  /** The delegate's HOME (never opened, nor anything holding it). */
  home?: string;
  /** The server's own folders: never opened, nor what holds or lies in them. */
  serverDirs: readonly string[];
  /** The job's directories (real paths): a folder holding one is not opened (its siblings). */
  roots: readonly string[];
}

/** `path`'s folders above it, nearest first, up to `/`. */
function ancestors(path: string): string[] {
  const out: string[] = [];
  for (let at = dirname(path);; at = dirname(at)) {
    out.push(at);
    if (at === dirname(at)) return out;
  }
}

/**
 * Why `path` (absolute, real) must not be opened read-only to a delegate's commands, or
 * undefined. A credential path counts relative to every folder above `path`, so that the rule
 * holds for any home folder, not only the delegate's: `/root/.cargo` holds
 * `.cargo/credentials.toml` whatever HOME says.
 */
export function openRefusal(path: string, scope: RuleScope): string | undefined {
  if (path === "/") return "it is the root of the file system";
  const top = KERNEL_TOPS.find((t) => isInside(t, path));
  if (top) return `it lies in ${top}, which the sandbox makes afresh or keeps out`;
  if (scope.home && isInside(path, scope.home)) {
    return path === scope.home ? "it is your home folder" : "it holds your home folder";
  }
  for (const above of ancestors(path)) {
    for (const entry of CREDENTIALS) {
      const store = join(above, entry);
      if (isInside(store, path)) return `it lies in a credential store (${store})`;
      if (isInside(path, store)) return `it holds a credential store (${store})`;
    }
  }
  for (const dir of scope.serverDirs) {
    if (isInside(dir, path)) return `it lies in the server's own folder ${dir}`;
    if (isInside(path, dir)) return `it holds the server's own folder ${dir}`;
  }
  for (const root of scope.roots) {
    if (isInside(path, root) && path !== root) {
      return `it holds the job's directory ${root}, and so what lies beside it`;
    }
  }
  return undefined;
}

/** The credential paths a folder would hold at its top (`<folder>/.ssh`, `<folder>/.npmrc`). */
export function credentialsInside(folder: string): string[] {
  return CREDENTIALS.map((entry) => join(folder, entry));
}

/**
 * The install root a PATH entry's commands need besides the entry itself, as the entry's name
 * shows it: the folder above `bin` or `shims`. Whether it is opened is decided by what is in
 * it (toolchains.ts): links that lead there, a `lib` beside `bin`, shims.
 */
export function prefixOf(entry: string): { root: string; shims: boolean } | undefined {
  const name = basename(entry);
  if (!BIN_NAMES.has(name) && !SHIM_NAMES.has(name)) return undefined;
  const root = dirname(entry);
  return root === entry || root === "/" ? undefined : { root, shims: SHIM_NAMES.has(name) };
}

/**
 * The install root of a file a PATH entry's link leads to, outside that entry's own prefix: the
 * folder above the nearest `bin` on its way (a pipx or uv tool's virtual environment
 * `.../venvs/black` for `.../venvs/black/bin/black`, a package's folder for
 * `.../node_modules/npm/bin/npm-cli.js`); undefined when there is none (the file alone is
 * opened then).
 */
export function installRootOf(file: string): string | undefined {
  const parts = file.split(posix.sep);
  for (let i = parts.length - 2; i >= 2; i--) {
    if (BIN_NAMES.has(parts[i]!)) return parts.slice(0, i).join(posix.sep);
  }
  return undefined;
}

/** `paths` without those inside another one of them, in their first order. */
export function outermostPaths(paths: readonly string[]): string[] {
  const unique = [...new Set(paths)];
  return unique.filter((p) => !unique.some((o) => o !== p && isInside(o, p)));
}
