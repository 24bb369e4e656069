/**
 * Claude Code's own sandbox for a delegate's Bash tool. On Linux it wraps every command in
 * bubblewrap (writable: the working directory, `--add-dir` directories and its temp dir; no
 * network but through its proxy) and needs `bwrap` and `socat` on its PATH: without socat,
 * Claude Code 2.1.332 refuses to start ("socat not installed") when the sandbox is required.
 *
 * The settings go into the pinned `--settings`, which outrank every settings file, and say:
 * - `failIfUnavailable`: never fall back to running commands unconfined;
 * - `allowUnsandboxedCommands: false`: the model cannot ask to run a command outside it;
 * - `autoAllowBashIfSandboxed: false`: the sandbox confines commands, it does not approve
 *   them; `allowed_tools` and the permission mode decide as before;
 * - the paths that the host runs or trusts later, and the server's own files, are read-only
 *   inside every writable directory, also the ones that exist deeper down (a project's `.git`
 *   when cwd is a folder of projects, found by host_run_scan.ts); credential stores and the
 *   server's files are unreadable.
 */
import { join } from "node:path";
import { CREDENTIAL_PATHS, HOST_RUN_PATHS } from "../protected_paths.ts";
import { type HostRunScan, scanHostRun } from "../host_run_scan.ts";
import { which } from "../../platform/which.ts";

/** The `sandbox` block of Claude Code's settings (the keys we set). */
export interface ClaudeSandboxSettings {
  enabled: true;
  failIfUnavailable: true;
  allowUnsandboxedCommands: false;
  autoAllowBashIfSandboxed: false;
  /** Set when Claude Code itself runs in our jail (jail.ts), where a fresh /proc cannot be mounted. */
  enableWeakerNestedSandbox?: true;
  filesystem: { denyWrite: string[]; denyRead: string[]; allowRead?: string[] };
}

export type ClaudeSandboxPlan =
  | { kind: "on"; bwrap: string; socat: string }
  /** Not turned on: `why` says so for logs and doctor. */
  | { kind: "off"; why: string }
  | { kind: "refused"; reason: string };

/** Where the sandbox's programs are, looked up on the child's PATH as Claude Code does. */
export interface SandboxTools {
  bwrap?: string;
  socat?: string;
}

/** Finds bwrap and socat on the delegate's PATH (absolute entries only, see which.ts). */
export function findSandboxTools(env: Record<string, string>): SandboxTools {
  const bwrap = which("bwrap", env, "/", false);
  const socat = which("socat", env, "/", false);
  return { ...(bwrap ? { bwrap } : {}), ...(socat ? { socat } : {}) };
}

/**
 * Whether a delegate's Bash runs in Claude Code's sandbox. `mode` is the `sandbox` setting;
 * the sandbox is turned on where bubblewrap is present (Linux), and then required.
 */
export function planSandbox(
  mode: "on" | "off",
  tools: SandboxTools,
  platform: string,
): ClaudeSandboxPlan {
  if (mode === "off") return { kind: "off", why: "the sandbox setting is off" };
  if (platform !== "linux") {
    return {
      kind: "off",
      why: `Claude Code's sandbox is only turned on on Linux (this is ${platform})`,
    };
  }
  if (!tools.bwrap) return { kind: "off", why: "bubblewrap (bwrap) is not on the delegate's PATH" };
  if (!tools.socat) {
    return {
      kind: "refused",
      reason: `Cannot start Claude Code with its sandbox: bubblewrap is installed ` +
        `(${tools.bwrap}) but socat, which Claude Code's sandbox also needs on Linux, is not ` +
        `on the delegate's PATH. Install socat (apt install socat, dnf install socat, ` +
        `pacman -S socat), or let delegates' commands run unconfined with ` +
        "`ollama-delegate config --sandbox off`",
    };
  }
  return { kind: "on", bwrap: tools.bwrap, socat: tools.socat };
}

/** Inputs of the sandbox settings for one turn. */
export interface SandboxScope {
  cwd: string;
  addDirs: readonly string[];
  /** The delegate's HOME, where credential stores are. */
  home?: string;
  /** The server's own settings, records and Claude Code config: never read or written. */
  protect: readonly string[];
  /**
   * Read but never written: the repository's `.git` of a job's worktree, which Claude Code
   * itself makes writable when its working directory is a linked worktree.
   */
  readOnly?: readonly string[];
  /**
   * A directory hidden whole except one folder in it (`sandbox.filesystem.allowRead` wins
   * over denyRead): the state dir around a job's worktree, so that job folders made while the
   * turn runs are hidden too.
   */
  hiddenExcept?: { dir: string; keep: string };
  /**
   * Claude Code runs inside our jail (jail.ts): its sandbox nests in it, and `$HOME` there is
   * an empty tmpfs, so no credential store needs naming.
   */
  jailed?: boolean;
}

/** The `sandbox` settings for a turn whose plan is "on". */
export function sandboxSettings(scope: SandboxScope): ClaudeSandboxSettings {
  const roots = [scope.cwd, ...scope.addDirs];
  // In the jail, the host-run paths that exist are read-only mounts already and missing ones
  // are not named: Claude Code's sandbox mounts /dev/null at a named path that does not exist,
  // and a delegate's `ls` would show them (planted.ts moves out what a command creates there).
  const denyWrite = [
    ...(scope.jailed
      ? []
      : roots.flatMap((root) => HOST_RUN_PATHS.map((entry) => join(root, entry)))),
    ...scope.protect,
    ...(scope.readOnly ?? []),
  ];
  const denyRead = [
    ...(scope.home && !scope.jailed
      ? CREDENTIAL_PATHS.map((entry) => join(scope.home!, entry))
      : []),
    ...scope.protect,
    ...(scope.hiddenExcept ? [scope.hiddenExcept.dir] : []),
  ];
  return {
    enabled: true,
    failIfUnavailable: true,
    allowUnsandboxedCommands: false,
    autoAllowBashIfSandboxed: false,
    ...(scope.jailed ? { enableWeakerNestedSandbox: true as const } : {}),
    filesystem: {
      denyWrite: unique(denyWrite),
      denyRead: unique(denyRead),
      ...(scope.hiddenExcept ? { allowRead: [scope.hiddenExcept.keep] } : {}),
    },
  };
}

function unique(paths: string[]): string[] {
  return [...new Set(paths)];
}

/**
 * `guard` with the host-run paths that exist below the top of `roots` added to its read-only
 * paths, when Claude Code's sandbox is on (`plan`). Claude Code's sandbox on Linux takes
 * literal paths, so they are found beforehand by the same bounded scan as the native
 * engine's. When the scan cannot cover the roots (too many or too deep folders), the roots
 * themselves become read-only to commands (fail closed): Bash can still read and run, and the
 * file tools still edit, held by the deny rules, which match any depth by pattern.
 */
export async function withNestedHostRun<G extends { readOnly: string[] }>(
  guard: G,
  plan: ClaudeSandboxPlan,
  roots: readonly string[],
  /** The scan of `roots` when the caller already made it (guard_identities.ts does). */
  done?: HostRunScan,
): Promise<G> {
  if (plan.kind !== "on") return guard;
  const scan = done ?? await scanHostRun(roots);
  const added = scan.incomplete ? [...roots] : scan.paths;
  return { ...guard, readOnly: [...guard.readOnly, ...added] };
}
