/**
 * bubblewrap's command line for one sandboxed command: what is mounted where, who the command
 * runs as and under which limits. Pure: run_shell.ts decides the inputs and runs it.
 */
import { inspectHostPath, maskArgs, NOBODY_UID, systemArgs } from "../../bwrap_base.ts";
import type { Placeholder } from "../../placeholders.ts";
import { DEFAULT_LIMITS, limitPlan, type SandboxLimits } from "../../sandbox_limits.ts";
import type { ProtectedMounts } from "./mounts.ts";

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
}

/** Where the placeholders' exclude file appears inside the sandbox. */
const EXCLUDES_INSIDE = "/tmp/.ollama-delegate-excludes";

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
  const plan = limitPlan(layout.limits ?? DEFAULT_LIMITS);
  const args = [
    "--unshare-all",
    "--die-with-parent",
    "--new-session",
    "--clearenv",
    "--setenv",
    "PATH",
    SANDBOX_PATH,
    "--setenv",
    "HOME",
    "/tmp",
    "--setenv",
    "TMPDIR",
    "/tmp",
    "--setenv",
    "LANG",
    "C.UTF-8",
    ...systemArgs(layout.root === true, inspect),
  ];
  args.push("--proc", "/proc", "--dev", "/dev", ...plan.tmpfs);
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
  // After the binds, so they cover what a writable dir would otherwise expose.
  const mounts = layout.mounts;
  for (const mask of mounts?.masks ?? []) args.push(...maskArgs(mask));
  for (const path of mounts?.readOnly ?? []) args.push("--ro-bind", path, path);
  // git's packs seen through a view without the secret objects: inside `.git`, read-only above.
  for (const v of mounts?.views ?? []) args.push("--ro-bind", v.source, v.dest);
  // A mask inside a read-only folder (a `.env` in `.devcontainer`) again: that bind covered it.
  const readOnly = mounts?.readOnly ?? [];
  for (const mask of mounts?.masks ?? []) {
    if (readOnly.some((dir) => mask.path.startsWith(`${dir}/`))) args.push(...maskArgs(mask));
  }
  for (const placeholder of mounts?.placeholders ?? []) args.push(...maskArgs(placeholder));
  // Last of the mounts: bubblewrap cannot make a mount point in a root that is read-only.
  args.push(...plan.seal);
  args.push("--chdir", layout.cwd, "--", ...innerCommand(layout, command));
  return args;
}
