/**
 * bubblewrap's command line for one sandboxed command: what is mounted where, who the command
 * runs as and under which limits. Pure: run_shell.ts decides the inputs and runs it.
 */
import {
  identityCheck,
  inspectHostPath,
  maskArgs,
  NOBODY_UID,
  systemArgs,
} from "../../bwrap_base.ts";
import type { Placeholder } from "../../mount_placeholders.ts";
import { HELPER_CAPS, helperPrefix, helperShare } from "../../mount_helper.ts";
import { DEFAULT_LIMITS, limitPlan, type SandboxLimits } from "../../sandbox_limits.ts";
import type { ProtectedMounts } from "./mounts.ts";
import { cacheDest, cacheEnv, type ToolchainView } from "../../../guard/toolchains.ts";

/** PATH inside the sandbox: the system's, which is read-only there. */
export const SANDBOX_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/** The uid a command runs as inside the sandbox when the server is root: nobody. */
export const SANDBOX_UID = NOBODY_UID;

export interface SandboxLayout {
  /** The job's working directory (real path); the command starts there. */
  cwd: string;
  /** Directories mounted read-write: cwd and add_dirs (real paths). */
  writable: readonly string[];
  /** Running as uid 0: run as nobody in a user namespace, every capability dropped. */
  root?: boolean;
  /** What protects the writable dirs (read-only host-run paths, hidden credentials). */
  mounts?: ProtectedMounts;
  /** Extra paths hidden anywhere (root-only files under /etc when running as root). */
  systemMasks?: readonly Placeholder[];
  /** The defaults when absent (/tmp and /dev/shm are sized in any case). */
  limits?: SandboxLimits;
  /** A memory cgroup holds the command: no RLIMIT_AS fallback (see limits.ts). */
  memoryCgroup?: boolean;
  /** prlimit inside the sandbox, when the host has it; without it no rlimits are set. */
  prlimit?: string;
  /**
   * A host file of git exclude patterns for the placeholders, so that `git status` inside
   * does not list a dozen empty mount points as untracked files.
   */
  gitExcludes?: string;
  /**
   * The user's toolchains (src/guard/toolchains.ts): `$HOME` an empty tmpfs at the user's
   * home path, the opened folders read-only on it at their real paths with the credential
   * files in them hidden, the job's cache folder writable at `$HOME/.cache`, and the PATH and
   * variables that find them. Without it: HOME is /tmp and PATH the system's.
   */
  toolchains?: SandboxToolchains;
  /**
   * The system's Python that mounts the read-only paths instead of bubblewrap, past
   * MOUNT_HELPER_FROM of them (mount_helper.ts); bubblewrap mounts them without it.
   */
  mountHelper?: string;
}

/** What of the user's toolchains one command gets (see SandboxLayout.toolchains). */
export interface SandboxToolchains {
  view: ToolchainView;
  /** The job's folder of writable caches (host path), mounted at `$HOME/.cache`. */
  cacheDir?: string;
}

/** Where the placeholders' exclude file appears inside the sandbox. */
const EXCLUDES_INSIDE = "/tmp/.ollama-delegate-excludes";

/** The mounts of `layout` the mount helper can take, and those bubblewrap keeps. */
export function sandboxHelperShare(layout: SandboxLayout): ReturnType<typeof helperShare> {
  const mounts = layout.mounts;
  return helperShare(
    mounts?.readOnly ?? [],
    mounts?.masks ?? [],
    (mounts?.views ?? []).map((v) => v.dest),
  );
}

/** The command line run inside: rlimits first when prlimit is there. */
function innerCommand(layout: SandboxLayout, command: string): string[] {
  const shell = ["/bin/sh", "-c", command];
  const limits = layout.limits;
  if (!limits || !layout.prlimit) return shell;
  const rlimits = limitPlan(limits).rlimits(layout.memoryCgroup ?? false);
  return [layout.prlimit, ...rlimits, "--", ...shell];
}

/**
 * bubblewrap's argv for one command. The root is an empty tmpfs, read-only once everything is
 * mounted; the system is mounted read-only; `/tmp` and `/dev/shm` are fresh sized tmpfs, so
 * `/tmp` and `$HOME` writes vanish with the command.
 */
export function bwrapArgs(
  layout: SandboxLayout,
  command: string,
  inspect: (path: string) => "dir" | { link: string } | "missing" = inspectHostPath,
): string[] {
  const limits = layout.limits ?? DEFAULT_LIMITS;
  const plan = limitPlan(limits);
  const tools = layout.toolchains;
  const home = tools?.view.home ?? "/tmp";
  const args = [
    "--unshare-all",
    "--die-with-parent",
    "--new-session",
    "--clearenv",
    "--setenv",
    "PATH",
    tools?.view.path ?? SANDBOX_PATH,
    "--setenv",
    "HOME",
    home,
    "--setenv",
    "TMPDIR",
    "/tmp",
    "--setenv",
    "LANG",
    "C.UTF-8",
    ...(tools ? setenvArgs({ ...tools.view.env, ...cacheEnv(tools.view) }) : []),
    ...systemArgs(layout.root === true, inspect),
  ];
  const helper = layout.mountHelper ? sandboxHelperShare(layout) : undefined;
  // After systemArgs' `--cap-drop ALL` as root: the helper drops them before the command.
  if (helper) args.push(...HELPER_CAPS);
  args.push("--proc", "/proc", "--dev", "/dev", ...plan.tmpfs);
  // Before the writable dirs, which may lie below HOME (a project in `~/code`).
  if (tools) args.push(...toolchainArgs(tools, limits.tmpMb));
  if (layout.gitExcludes && (layout.mounts?.placeholders.length ?? 0) > 0) {
    args.push(
      "--ro-bind",
      layout.gitExcludes,
      EXCLUDES_INSIDE,
      "--setenv",
      "GIT_CONFIG_COUNT",
      "1",
      "--setenv",
      "GIT_CONFIG_KEY_0",
      "core.excludesFile",
      "--setenv",
      "GIT_CONFIG_VALUE_0",
      EXCLUDES_INSIDE,
    );
  }
  for (const mask of layout.systemMasks ?? []) args.push(...maskArgs(mask));
  for (const dir of layout.writable) args.push("--bind", dir, dir);
  const mounts = layout.mounts;
  // Inside the writable dirs and around the stores' masks: the folders a store is known by.
  for (const pin of mounts?.pins ?? []) args.push("--bind", pin, pin);
  // After the binds, so they cover what a writable dir would otherwise expose.
  for (const mask of helper?.bwrap.masks ?? mounts?.masks ?? []) args.push(...maskArgs(mask));
  for (const path of helper?.bwrap.readOnly ?? mounts?.readOnly ?? []) {
    args.push("--ro-bind", path, path);
  }
  // git's packs seen through a view without the secret objects: inside `.git`, read-only above.
  for (const v of mounts?.views ?? []) args.push("--ro-bind", v.source, v.dest);
  // A mask inside a read-only folder (a `.env` in `.devcontainer`) again: that bind covered it.
  const readOnly = helper?.bwrap.readOnly ?? mounts?.readOnly ?? [];
  for (const mask of helper?.bwrap.masks ?? mounts?.masks ?? []) {
    if (readOnly.some((dir) => mask.path.startsWith(`${dir}/`))) args.push(...maskArgs(mask));
  }
  for (const placeholder of mounts?.placeholders ?? []) args.push(...maskArgs(placeholder));
  // Last of the mounts: bubblewrap cannot make a mount point in a root that is read-only.
  args.push(...plan.seal);
  args.push(
    "--chdir",
    layout.cwd,
    "--",
    ...(helper ? helperPrefix(layout.mountHelper!, helper.helper) : []),
    ...identityCheck(
      mounts?.identities ?? [],
      [...(mounts?.masks ?? []), ...(mounts?.placeholders ?? [])],
      layout.writable,
    ),
    ...innerCommand(layout, command),
  );
  return args;
}

function setenvArgs(env: Record<string, string>): string[] {
  return Object.entries(env).flatMap(([name, value]) => ["--setenv", name, value]);
}

/**
 * `$HOME` as a sized empty tmpfs, then, shallow first, the opened toolchains read-only, the
 * credential files in them hidden, and the job's caches writable at `$HOME/.cache`.
 */
function toolchainArgs(tools: SandboxToolchains, tmpMb: number): string[] {
  const { view, cacheDir } = tools;
  const out: string[] = [];
  const home = view.home;
  if (home && home !== "/" && home !== "/tmp") {
    out.push("--size", String(tmpMb * 1024 * 1024), "--tmpfs", home);
  }
  const mounts: { path: string; rank: number; args: string[] }[] = [];
  for (const o of view.opened) {
    mounts.push({ path: o.path, rank: 0, args: ["--ro-bind", o.path, o.path] });
  }
  if (cacheDir) {
    const dest = cacheDest(home);
    mounts.push({ path: dest, rank: 0, args: ["--bind", cacheDir, dest] });
  }
  for (const h of view.hidden) mounts.push({ path: h.path, rank: 1, args: maskArgs(h) });
  const depth = (p: string) => p.split("/").length;
  mounts.sort((a, b) => depth(a.path) - depth(b.path) || a.rank - b.rank);
  for (const m of mounts) out.push(...m.args);
  return out;
}
