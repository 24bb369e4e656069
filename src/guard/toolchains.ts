/**
 * The user's toolchains, readable to delegates' commands; their secrets, not (issue 29, item 2).
 * Deny by default hides all of `$HOME` in both sandboxes, so a tool the user's PATH finds under
 * it (nvm's node and npm, rustup's cargo, pyenv's shims, pipx and uv tools in `~/.local/bin`,
 * deno, bun, go) would be "command not found". This finds, for the PATH the server was started
 * with, what to mount read-only at its real path:
 *
 * - each absolute PATH entry outside the system part (which every sandbox has) and outside the
 *   job's directories (writable already);
 * - the install root an entry's commands need: the folder above `bin` when the entry's links
 *   lead into it (nvm: `bin/npm -> ../lib/node_modules/npm/bin/npm-cli.js`), when a `lib` or
 *   `libexec` lies beside `bin` (a Go SDK, a JDK, a Python or Homebrew prefix) or when the entry
 *   is a tool's `shims` (pyenv, asdf); else for each link leading elsewhere the folder above
 *   the `bin` on its way (a pipx or uv tool's environment), else the file alone; and once more
 *   for the links in such a root's own `bin` (a virtual environment's `python`); the
 *   interpreter an absolute `#!` line names, the same way; rustup's toolchains for its proxies;
 * - the package caches a build reads offline (cargo's registry and git checkouts, Go's module
 *   cache, Maven's repository, Gradle's caches);
 * - the folders the user named (`toolchainPaths`).
 *
 * Never opened (toolchain_rules.ts): `/`, the home folder and what holds it, what holds or lies in
 * a credential store (so `~/.cargo` is not opened whole, only `~/.cargo/bin`: it holds
 * `credentials.toml`; nor `~/.local`, which holds the keyring), the server's folders, a folder
 * holding the job's directory. Credential files at the top of an opened folder are hidden, and a
 * file that is a credential file by identity (a hard link of `~/.ssh/id_rsa` in `~/.local/bin`)
 * is hidden wherever the view looks; a link to one is not followed, and leads nowhere inside.
 * Bounded: entries read per folder, `#!` lines read, folders opened.
 */
import type { Stats } from "node:fs";
import { lstat, open, readdir, realpath, stat } from "node:fs/promises";
import { dirname, isAbsolute, join } from "node:path";
import { identityKey } from "./identity_walk.ts";
import { isInside } from "./real_paths.ts";
import { credentialIdentities } from "./toolchain_secrets.ts";
import {
  credentialsInside,
  installRootOf,
  isSystemPath,
  openRefusal,
  outermostPaths,
  prefixOf,
  type RuleScope,
  SYSTEM_PATH,
} from "./toolchain_rules.ts";

/** Folders and files opened at most: each is a bubblewrap mount, which slow as they add up. */
export const MAX_OPENED = 64;
/** Entries read in one PATH folder (a Homebrew `bin` holds about a thousand). */
const MAX_ENTRIES = 5_000;
/** `#!` lines read in one view. */
const MAX_HEADS = 2_000;

/** Location variables a toolchain finds itself by: paths, passed when absolute. */
export const TOOLCHAIN_VARS: readonly string[] = [
  "CARGO_HOME",
  "RUSTUP_HOME",
  "GOROOT",
  "GOPATH",
  "GOMODCACHE",
  "JAVA_HOME",
  "PYENV_ROOT",
  "NVM_DIR",
  "VOLTA_HOME",
  "BUN_INSTALL",
  "DENO_INSTALL",
  "PNPM_HOME",
  "SDKMAN_DIR",
  "ASDF_DIR",
  "ASDF_DATA_DIR",
  "MISE_DATA_DIR",
  "HOMEBREW_PREFIX",
  "HOMEBREW_CELLAR",
  "HOMEBREW_REPOSITORY",
];

/** One thing opened read-only, and why. */
export interface OpenedPath {
  /** Real path, mounted at itself. */
  path: string;
  kind: "dir" | "file";
  /** Why, for doctor: "PATH entry", "install root of ...", "cache", "toolchainPaths". */
  why: string;
}

/** What became of one PATH entry. */
export interface PathEntry {
  /** As the server's PATH has it. */
  entry: string;
  state: "opened" | "system" | "job" | "not opened" | "missing" | "relative";
  /** Its real path, where it has one. */
  real?: string;
  /** Why it is not opened. */
  why?: string;
}

export interface ToolchainView {
  /** The delegate's HOME (an empty tmpfs in every sandbox), when the server has one. */
  home?: string;
  /** Mounted read-only at their real paths, outermost only, at most MAX_OPENED. */
  opened: OpenedPath[];
  /** Inside the opened ones: credential files and folders, hidden (real paths). */
  hidden: { path: string; kind: "file" | "dir"; why: string }[];
  /** Each PATH entry, in order. */
  entries: PathEntry[];
  /** What the view would have opened besides, and why it did not. */
  refused: { path: string; why: string }[];
  /** The delegate's PATH: the opened and visible entries in order, then the system's. */
  path: string;
  /** Location variables passed to commands (absolute paths only). */
  env: Record<string, string>;
}

export interface ToolchainOptions {
  /** The server's environment: PATH, HOME and the location variables. */
  env: Record<string, string | undefined>;
  /** The `toolchainPaths` setting (absolute). */
  extra?: readonly string[];
  /** The server's own folders. */
  serverDirs?: readonly string[];
  /** The job's directories (real paths). */
  roots?: readonly string[];
}

async function realOf(path: string): Promise<string | undefined> {
  try {
    return await realpath(path);
  } catch {
    return undefined;
  }
}

async function kindOf(path: string): Promise<"dir" | "file" | undefined> {
  try {
    const s = await stat(path);
    return s.isDirectory() ? "dir" : s.isFile() ? "file" : undefined;
  } catch {
    return undefined;
  }
}

/** The interpreter an absolute `#!` line names (not `env`), or undefined. */
async function shebang(file: string): Promise<string | undefined> {
  let handle;
  try {
    handle = await open(file, "r");
    const buffer = new Uint8Array(256);
    const { bytesRead } = await handle.read(buffer, 0, 256, 0);
    const head = new TextDecoder().decode(buffer.subarray(0, bytesRead));
    if (!head.startsWith("#!")) return undefined;
    const program = head.slice(2).split("\n")[0]!.trim().split(/\s+/)[0] ?? "";
    return isAbsolute(program) && !program.endsWith("/env") ? program : undefined;
  } catch {
    return undefined;
  } finally {
    await handle?.close();
  }
}

/** Builds one view: the state of a walk over PATH and what it found. */
class ViewBuilder {
  readonly opened = new Map<string, OpenedPath>();
  readonly hidden = new Map<string, { kind: "file" | "dir"; why: string }>();
  readonly refused = new Map<string, string>();
  heads = 0;

  constructor(
    readonly scope: RuleScope,
    readonly credentials: ReadonlyMap<string, string>,
  ) {}

  /** Whether commands see `path` already or will: the system, the roots, what is opened. */
  visible(path: string): boolean {
    return isSystemPath(path) || this.scope.roots.some((r) => isInside(r, path)) ||
      [...this.opened.keys()].some((o) => isInside(o, path));
  }

  /** Opens `path` (real) unless a rule refuses it; false when refused. */
  async open(path: string, why: string): Promise<boolean> {
    if (this.visible(path)) return true;
    const refusal = openRefusal(path, this.scope);
    if (refusal) {
      if (!this.refused.has(path)) this.refused.set(path, refusal);
      return false;
    }
    const kind = await kindOf(path);
    if (!kind) return false;
    this.opened.set(path, { path, kind, why });
    return true;
  }

  /** A credential by identity: hidden (a file in an opened folder) and never followed. */
  secretOf(s: Stats): string | undefined {
    return this.credentials.get(identityKey(s));
  }

  /**
   * The entries of `dir` (an opened PATH folder or an install root's `bin`): links leading out
   * are opened where they lead, files holding a credential hidden, absolute `#!` interpreters
   * opened. `prefix` is the root above `dir` that its links may open whole.
   */
  async scan(dir: string, prefix: string | undefined, deeper: boolean): Promise<void> {
    let names: string[];
    try {
      names = (await readdir(dir)).slice(0, MAX_ENTRIES);
    } catch {
      return;
    }
    for (const name of names) {
      const path = join(dir, name);
      let info;
      try {
        info = await lstat(path);
      } catch {
        continue;
      }
      if (info.isSymbolicLink()) await this.followLink(path, dir, prefix, deeper);
      else if (info.isFile()) {
        const secret = this.secretOf(info);
        if (secret) this.hidden.set(path, { kind: "file", why: `a hard link of ${secret}` });
        else if (deeper && (info.mode & 0o111) !== 0) await this.interpreter(path);
      }
    }
  }

  async followLink(link: string, dir: string, prefix: string | undefined, deeper: boolean) {
    const target = await realOf(link);
    if (!target) return;
    const info = await stat(target).catch(() => undefined);
    if (!info) return;
    const secret = this.secretOf(info);
    if (secret) {
      // Not followed: the link leads nowhere inside, as any link out of what is mounted.
      this.refused.set(link, `it is a link to the credential file ${secret}`);
      return;
    }
    if (isInside(dir, target) || this.visible(target)) return;
    let root: string | undefined;
    if (prefix && isInside(prefix, target) && await this.open(prefix, `install root of ${dir}`)) {
      root = prefix;
    } else {
      const above = installRootOf(target);
      if (above && await this.open(above, `where ${link} leads`)) root = above;
      else if (!await this.open(target, `where ${link} leads`)) return;
    }
    if (info.isFile() && (info.mode & 0o111) !== 0) await this.interpreter(target);
    // A virtual environment's `bin/python` links to the interpreter it was made with.
    if (deeper && root && root !== prefix) await this.scan(join(root, "bin"), undefined, false);
  }

  /** The interpreter an absolute `#!` line of `file` names, opened with its install root. */
  async interpreter(file: string): Promise<void> {
    if (this.heads >= MAX_HEADS) return;
    this.heads++;
    const program = await shebang(file);
    const real = program && await realOf(program);
    if (!real || this.visible(real)) return;
    const above = installRootOf(real);
    if (!above || !await this.open(above, `the interpreter of ${file}`)) {
      await this.open(real, `the interpreter of ${file}`);
    }
  }

  /** Credential paths at the top of each opened folder, hidden where they exist. */
  async hideInside(): Promise<void> {
    for (const { path, kind } of this.opened.values()) {
      if (kind !== "dir") continue;
      for (const store of credentialsInside(path)) {
        const found = await kindOf(store);
        const real = found && await realOf(store);
        if (found && real && isInside(path, real)) {
          this.hidden.set(real, { kind: found, why: "a credential file" });
        }
      }
    }
  }
}

/** What of the user's toolchains a delegate's commands may read, and the PATH they get. */
export async function toolchainView(options: ToolchainOptions): Promise<ToolchainView> {
  const env = options.env;
  const home = env.HOME && isAbsolute(env.HOME) ? await realOf(env.HOME) ?? env.HOME : undefined;
  const scope: RuleScope = {
    ...(home ? { home } : {}),
    serverDirs: await Promise.all(
      (options.serverDirs ?? []).map(async (d) => await realOf(d) ?? d),
    ),
    roots: options.roots ?? [],
  };
  const b = new ViewBuilder(scope, home ? await credentialIdentities(home) : new Map());
  const entries: PathEntry[] = [];
  for (const entry of (env.PATH ?? "").split(":")) {
    entries.push(await pathEntry(b, entry));
  }
  await knownHomes(b, env, home, entries);
  for (const path of options.extra ?? []) {
    const real = await realOf(path);
    if (real) await b.open(real, "toolchainPaths");
    else b.refused.set(path, "it does not exist");
  }
  await b.hideInside();
  const all = outermostPaths([...b.opened.keys()]);
  const kept = all.slice(0, MAX_OPENED);
  for (const path of all.slice(MAX_OPENED)) {
    b.refused.set(path, `more than ${MAX_OPENED} folders would be opened`);
  }
  const opened = kept.map((p) => b.opened.get(p)!);
  const shown = (p: string) => kept.some((o) => isInside(o, p));
  for (const e of entries) {
    if (e.state === "opened" && !shown(e.real!)) {
      e.state = "not opened";
      e.why = b.refused.get(e.real!) ?? `more than ${MAX_OPENED} folders would be opened`;
    }
  }
  return {
    ...(home ? { home } : {}),
    opened,
    hidden: [...b.hidden].filter(([p]) => shown(p)).map(([path, h]) => ({ path, ...h })),
    entries,
    refused: [...b.refused].map(([path, why]) => ({ path, why })),
    path: delegatePath(entries),
    env: locationEnv(env),
  };
}

async function pathEntry(b: ViewBuilder, entry: string): Promise<PathEntry> {
  if (!isAbsolute(entry)) return { entry, state: "relative" };
  const real = await realOf(entry);
  if (!real || await kindOf(real) !== "dir") return { entry, state: "missing" };
  if (isSystemPath(real)) return { entry, state: "system", real };
  if (b.scope.roots.some((r) => isInside(r, real))) return { entry, state: "job", real };
  if (!await b.open(real, "PATH entry")) {
    return { entry, state: "not opened", real, why: b.refused.get(real)! };
  }
  const prefix = prefixOf(real);
  const root = prefix && !b.visible(prefix.root) ? prefix.root : undefined;
  // A prefix whose `bin` needs its `lib` (a Go SDK, a JDK, Python, Homebrew), or whose shims
  // run its own commands: opened whole, unless a rule refuses it.
  if (root && (prefix!.shims || await hasLib(root))) await b.open(root, `install root of ${real}`);
  await b.scan(real, root, true);
  return { entry, state: "opened", real };
}

async function hasLib(root: string): Promise<boolean> {
  for (const name of ["lib", "lib64", "libexec"]) {
    if (await kindOf(join(root, name)) === "dir") return true;
  }
  return false;
}

/**
 * What a toolchain needs that no link shows: rustup's toolchains, which the proxies in
 * `~/.cargo/bin` run (rust-lang.github.io/rustup/concepts/proxies.html), and the package
 * caches builds read offline.
 */
async function knownHomes(
  b: ViewBuilder,
  env: Record<string, string | undefined>,
  home: string | undefined,
  entries: readonly PathEntry[],
): Promise<void> {
  const at = (name: string, fallback: string | undefined) => {
    const value = env[name];
    return value && isAbsolute(value) ? value : fallback;
  };
  const cargoHome = at("CARGO_HOME", home && join(home, ".cargo"));
  for (const e of entries) {
    if (e.state !== "opened" || await kindOf(join(e.real!, "rustup")) !== "file") continue;
    const rustupHome = at("RUSTUP_HOME", home && join(home, ".rustup"));
    const real = rustupHome && await realOf(rustupHome);
    if (real) await b.open(real, `rustup's toolchains, which ${e.real} runs`);
  }
  const gradleHome = at("GRADLE_USER_HOME", home && join(home, ".gradle"));
  const gopath = at("GOPATH", home && join(home, "go"))?.split(":")[0];
  const caches = [
    cargoHome && join(cargoHome, "registry"),
    cargoHome && join(cargoHome, "git"),
    at("GOMODCACHE", gopath && join(gopath, "pkg", "mod")),
    home && join(home, ".m2", "repository"),
    gradleHome && join(gradleHome, "caches"),
  ];
  for (const cache of caches) {
    const real = cache && await realOf(cache);
    if (real && await kindOf(real) === "dir") await b.open(real, "package cache (read-only)");
  }
}

/** The opened and visible entries in their order (real paths), then the system's. */
function delegatePath(entries: readonly PathEntry[]): string {
  const out: string[] = [];
  for (const e of entries) {
    if (e.state === "system" || e.state === "job") out.push(e.entry);
    else if (e.state === "opened") out.push(e.real!);
  }
  for (const dir of SYSTEM_PATH) out.push(dir);
  return [...new Set(out)].join(":");
}

function locationEnv(env: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of TOOLCHAIN_VARS) {
    const value = env[name];
    if (value && isAbsolute(value) && !value.includes("\n")) out[name] = value;
  }
  return out;
}

/** Where a job's writable caches appear inside every sandbox: `$HOME/.cache`. */
export function cacheDest(home: string | undefined): string {
  return join(home ?? "/tmp", ".cache");
}

/**
 * The variables that send the caches builds write to `$HOME/.cache`, a folder of the job's
 * own (the engines mount it there): Go's build cache, npm's, pip's, uv's, yarn's, bun's, and
 * Gradle's user home, which reads the user's dependency cache read-only through
 * GRADLE_RO_DEP_CACHE when that is opened (docs.gradle.org, "Dependency caching": sharing a
 * read-only dependency cache).
 */
export function cacheEnv(view: Pick<ToolchainView, "home" | "opened">): Record<string, string> {
  const base = cacheDest(view.home);
  const gradle = view.opened.find((o) =>
    o.why.startsWith("package cache") &&
    o.path.endsWith("/caches") && dirname(o.path).endsWith(".gradle")
  );
  return {
    XDG_CACHE_HOME: base,
    GOCACHE: join(base, "go-build"),
    npm_config_cache: join(base, "npm"),
    PIP_CACHE_DIR: join(base, "pip"),
    UV_CACHE_DIR: join(base, "uv"),
    YARN_CACHE_FOLDER: join(base, "yarn"),
    BUN_INSTALL_CACHE_DIR: join(base, "bun"),
    GRADLE_USER_HOME: join(base, "gradle"),
    ...(gradle ? { GRADLE_RO_DEP_CACHE: gradle.path } : {}),
  };
}

/** The folder of a job's writable caches, inside its job folder. */
export const JOB_CACHE_DIR = "cache";
