/**
 * Claude Code's own sandbox for a delegate's Bash tool. On Linux it wraps every command in
 * bubblewrap (writable: the working directory, `--add-dir` directories and its temp dir; no
 * network but through its proxy) and needs `bwrap` and `socat` on its PATH: without socat,
 * Claude Code 2.1.332 refuses to start ("socat not installed") when the sandbox is required.
 *
 * The settings go into the pinned `--settings`, which outrank every settings file, and say:
 * - `failIfUnavailable`: never fall back to running commands unconfined;
 * - `allowUnsandboxedCommands: false`: the model cannot ask to run a command outside it;
 * - `autoAllowBashIfSandboxed` in the editing modes, for a call without `allowed_tools`
 *   (`approvesSandboxedBash`): a command that runs in this sandbox, inside the jail, needs no
 *   approval that nobody could give, as a native delegate's command in its sandbox needs none
 *   (issue 29); otherwise the sandbox confines commands and `allowed_tools` and the permission
 *   mode decide which run;
 * - the paths that the host runs or trusts later, and the server's own files, are read-only
 *   inside every writable directory, also the ones that exist deeper down (a project's `.git`
 *   when cwd is a folder of projects, found by host_run_scan.ts); credential stores and the
 *   server's files are unreadable.
 */
import { type FailureParts } from "../../errors.ts";
import { join } from "node:path";
import { CREDENTIAL_PATHS, HOST_RUN_PATHS } from "../../guard/protected_paths.ts";
import { type HostRunScan, scanHostRun } from "../../guard/host_run_scan.ts";
import { which } from "../../platform/which.ts";
import { isEditingMode, type PermissionMode, type SandboxSetting } from "../../settings/types.ts";
import { ruleToolNames } from "./argv.ts";

/** The `sandbox` block of Claude Code's settings (the keys we set). */
export interface ClaudeSandboxSettings {
  enabled: true;
  failIfUnavailable: true;
  allowUnsandboxedCommands: false;
  /** Claude Code approves a Bash command that runs in this sandbox by itself (see above). */
  autoAllowBashIfSandboxed: boolean;
  /** Set when Claude Code itself runs in our jail (jail.ts), where a fresh /proc cannot be mounted. */
  enableWeakerNestedSandbox?: true;
  /**
   * How deep below the working directory Claude Code's sandbox looks for names it protects
   * (shell and git config files, editor folders, repositories' hooks) before every command;
   * its least, 1, in our jail (see sandboxSettings).
   */
  mandatoryDenySearchDepth?: 1;
  filesystem: {
    denyWrite: string[];
    denyRead: string[];
    allowRead?: string[];
    allowWrite?: string[];
  };
}

export type ClaudeSandboxPlan =
  /** The jail around Claude Code and its own sandbox nested inside for Bash. */
  | { kind: "on"; bwrap: string; socat: string }
  /**
   * The jail only: Claude Code's sandbox cannot run (no socat), so commands keep to the
   * jail's files but have the network. `why` is the reply's `sandbox:` text.
   */
  | { kind: "partial"; bwrap: string; why: string }
  /**
   * Nothing but the permission rules: `why`, "off (<reason>)", says why and what to install;
   * a check's evidence shows the reason alone ("unconfined: <reason>").
   */
  | { kind: "off"; why: string; reason: string }
  | { kind: "refused"; problem: FailureParts };

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

const INSTALL = "apt install bubblewrap socat, dnf install bubblewrap socat, pacman -S " +
  "bubblewrap socat";

/**
 * How a claude delegate is confined under the `sandbox` setting on this machine: the jail and
 * Claude Code's sandbox on Linux with bubblewrap and socat; the jail alone without socat;
 * nothing but the permission rules without bubblewrap or off Linux. Under `on` each of these
 * runs and the reply says how far it was confined; under `required` all but the first are
 * refused, with what to install.
 */
export function planSandbox(
  mode: SandboxSetting,
  tools: SandboxTools,
  platform: string,
): ClaudeSandboxPlan {
  if (mode === "off") return off("the sandbox setting is off");
  let short: ClaudeSandboxPlan;
  if (platform !== "linux") {
    short = off(
      `delegates are confined only on Linux; this is ${platform}: commands run as you, held ` +
        "only by Claude Code's permission mode",
    );
  } else if (!tools.bwrap) {
    short = off(`bubblewrap is missing, so commands and file tools run as you: ${INSTALL}`);
  } else if (!tools.socat) {
    short = {
      kind: "partial",
      bwrap: tools.bwrap,
      why: "partial (socat is missing, so Claude Code's own sandbox cannot run: the jail " +
        "keeps files out of reach, but commands have the network and can change the " +
        "delegates' Claude Code sessions; apt install socat, dnf install socat, pacman -S socat)",
    };
  } else return { kind: "on", bwrap: tools.bwrap, socat: tools.socat };
  if (mode === "required") {
    return {
      kind: "refused",
      problem: {
        action: "Cannot start Claude Code",
        facts: `the sandbox setting is "required" and its sandbox would be ${short.why}`,
        advice: "Install what is missing, or let delegates run with what this machine has: " +
          "ollama-delegate config --sandbox on",
      },
    };
  }
  return short;
}

function off(reason: string): Extract<ClaudeSandboxPlan, { kind: "off" }> {
  return { kind: "off", why: `off (${reason})`, reason };
}

/**
 * The reply's `sandbox:` text for a plan short of "on": its `why`, and in the editing modes
 * (bypassPermissions aside, which approves everything) that commands need `allowed_tools`,
 * since without Claude Code's sandbox in the jail none is approved by itself
 * (`approvesSandboxedBash`). `showsBash`: Bash is among the turn's tools at all.
 */
export function shortPlanText(
  plan: { why: string },
  mode: PermissionMode,
  allowedTools: readonly string[] | undefined,
  showsBash: boolean,
): string {
  if (!showsBash || !isEditingMode(mode) || mode === "bypassPermissions") return plan.why;
  if (wholeBash(allowedTools ?? [])) return plan.why;
  return `${plan.why}; so a command that is not read-only runs only when allowed_tools ` +
    `approves it (["Bash"] for all, or "Bash(npm test)")`;
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
  /** Sandboxed commands run without an approval (`approvesSandboxedBash`). */
  autoAllowBash?: boolean;
  /**
   * Writable to commands besides the roots: the job's cache folder at `$HOME/.cache`, where
   * builds keep their caches (src/guard/toolchains.ts).
   */
  cacheDir?: string;
}

/**
 * Whether Claude Code may run a fully confined Bash command without an approval in a turn of
 * `mode` with these `allowed_tools`: in the editing modes only (measured with Claude Code
 * 2.1.332: with the setting on, `dontAsk` and `manual` ran a command that wrote a file), and
 * only when the call gives no `allowed_tools`, which otherwise say which commands run, as
 * before (`Bash(git *)` only those; `Bash` all, still checked against the file tools' deny
 * rules, which the setting skips for a command's paths: there the jail and the sandbox hold
 * them). A deny rule (`disallowed_tools: ["Bash(rm *)"]`) refuses its commands either way.
 */
export function approvesSandboxedBash(
  mode: PermissionMode,
  allowedTools: readonly string[] | undefined,
): boolean {
  return isEditingMode(mode) && allowedTools === undefined;
}

/** `allowed_tools` approves every command: it names Bash without a pattern. */
function wholeBash(allowedTools: readonly string[]): boolean {
  return ruleToolNames(allowedTools).some((r) => r.name === "Bash" && r.whole);
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
    autoAllowBashIfSandboxed: scope.autoAllowBash === true,
    // Before every command Claude Code's sandbox reads the folders below the working directory
    // to a depth (default 3) and runs rg one deeper, looking for names to hold read-only. In our
    // jail the host-run paths among those names (.git with its hooks and config, .claude,
    // .vscode, .idea, .mcp.json) are read-only mounts at any depth already (jail.ts,
    // withNestedHostRun), which its sandbox inherits; the others (.bashrc, .gitconfig, .zshrc,
    // .profile, .ripgreprc, a nested repository's .gitmodules) run nothing on the host below
    // the top of a project, which depth 1 (its schema's least) still covers. Claude Code
    // 2.1.332 does not hand this setting on to its sandbox (its search still runs
    // `rg --max-depth 4`, issue 34); it is asked for all the same, for a version that does.
    ...(scope.jailed
      ? { enableWeakerNestedSandbox: true as const, mandatoryDenySearchDepth: 1 as const }
      : {}),
    filesystem: {
      denyWrite: unique(denyWrite),
      denyRead: unique(denyRead),
      ...(scope.hiddenExcept ? { allowRead: [scope.hiddenExcept.keep] } : {}),
      ...(scope.cacheDir ? { allowWrite: [scope.cacheDir] } : {}),
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
  /** The scan of `roots` when the caller already made it (src/guard/identities.ts does). */
  done?: HostRunScan,
): Promise<G> {
  if (plan.kind !== "on" && plan.kind !== "partial") return guard;
  const scan = done ?? await scanHostRun(roots);
  const added = scan.incomplete ? [...roots] : scan.paths;
  return { ...guard, readOnly: [...guard.readOnly, ...added] };
}
