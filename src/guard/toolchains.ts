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
 * `credentials.toml`; nor `~/.local`, which holds the keyring; nor a folder with an `.ssh` or
 * `.npmrc` of its own, anyone's home), the server's folders, a folder holding the job's
 * directory. A file that is a credential file by identity (a hard link of `~/.ssh/id_rsa` in
 * `~/.local/bin`) is hidden wherever the view looks; a link to one is not followed, and leads
 * nowhere inside.
 * Bounded: entries read per folder, `#!` lines read, folders opened.
 */
import { isAbsolute, join } from "node:path";
import { isInside } from "../platform/path_inside.ts";
import { credentialIdentities } from "./toolchain_secrets.ts";
import {
  isSystemPath,
  outermostPaths,
  prefixOf,
  type RuleScope,
  SYSTEM_PATH,
} from "./toolchain_rules.ts";
import { locationEnv } from "./toolchain_env.ts";
import { kindOf, type OpenedPath, realOf, ViewBuilder } from "./toolchain_walk.ts";

export type { OpenedPath };
export { cacheDest, cacheEnv, closedNote, JOB_CACHE_DIR, TOOLCHAIN_VARS } from "./toolchain_env.ts";

/** Folders and files opened at most: each is a bubblewrap mount, which slow as they add up. */
export const MAX_OPENED = 64;

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
  const held = [...b.opened.keys()].some((o) => o !== real && isInside(o, real));
  await b.scan(real, root, true, !held);
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
    if (real && await kindOf(real) === "dir") await b.open(real, "a package cache builds read");
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
