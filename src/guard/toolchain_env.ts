/**
 * The environment of commands that may read the user's toolchains (toolchains.ts): the
 * location variables toolchains find themselves by, and the variables that send the caches
 * builds write to a folder of the job's own, mounted at `$HOME/.cache`; and the reply's word on
 * PATH folders left closed.
 */
import { dirname, isAbsolute, join } from "node:path";
import { quotePath } from "../platform/plain_text.ts";

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

export function locationEnv(env: Record<string, string | undefined>): Record<string, string> {
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
export function cacheEnv(view: {
  home?: string;
  opened: readonly { path: string; why: string }[];
}): Record<string, string> {
  const base = cacheDest(view.home);
  const gradle = view.opened.find((o) =>
    o.why === "a package cache builds read" &&
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

/**
 * The reply's word on PATH folders left closed (a `warning:` line of the turn), which explains
 * a "command not found"; undefined when every PATH folder is readable.
 */
export function closedNote(view: {
  entries: readonly { entry: string; state: string; why?: string }[];
}): string | undefined {
  const closed = view.entries.filter((e) => e.state === "not opened");
  if (closed.length === 0) return undefined;
  const shown = closed.slice(0, 3).map((e) => `${quotePath(e.entry)} (${e.why})`).join("; ");
  const more = closed.length > 3 ? `; ${closed.length - 3} more` : "";
  return `toolchains: ${closed.length} PATH folder(s) not readable to commands: ${shown}${more}. ` +
    "`ollama-delegate doctor` shows what delegates read; the user can name a folder with " +
    "`ollama-delegate config --toolchain-path <dir>`";
}

/** The folder of a job's writable caches, inside its job folder. */
export const JOB_CACHE_DIR = "cache";
