/**
 * How the native engine's shell commands run: on Linux in bubblewrap (an empty root with the
 * system read-only, only the job's directories writable, no network, no inherited
 * environment). Where bubblewrap cannot be had, commands run unconfined and every reply says
 * so (`sandbox: off (...)`), unless the user set `sandbox: "required"`, which refuses them. This file decides which, and finds
 * bubblewrap; run_shell.ts runs a command, watch.ts keeps the turn's protected paths
 * in place, probe.ts is `doctor`'s check.
 */
import process from "node:process";
import type { FailureParts } from "../../../errors.ts";
import type { NestedPaths } from "./mounts.ts";
import type { HostRunWatch } from "./watch.ts";
import type { SandboxToolchains } from "./bwrap_args.ts";
import { isLinux } from "../../../platform/runtime.ts";
import { which } from "../../../platform/which.ts";
import type { SandboxSetting } from "../../../settings/types.ts";
import type { SandboxLimits } from "../../sandbox_limits.ts";

export type SandboxMode = SandboxSetting;

/** What installs bubblewrap, on the distributions most users run. */
export const INSTALL_BWRAP = "Install bubblewrap (Debian/Ubuntu: apt install bubblewrap; " +
  "Fedora: dnf install bubblewrap; Arch: pacman -S bubblewrap)";

export const INSTALL_BWRAP_HINT = `${INSTALL_BWRAP}, or allow unconfined commands with ` +
  "`ollama-delegate config --sandbox on`";

/** bubblewrap, with what a job's commands are limited to. */
export interface BwrapRunner {
  kind: "bwrap";
  bwrap: string;
  limits?: SandboxLimits;
  /** Where users of placeholder mount points register (see engines/mount_placeholders.ts). */
  runDir?: string;
  /** Set by the engine once it has walked the job's directories. */
  nested?: NestedPaths;
  /** Where credential stores are remembered by identity (guard/known_stores.ts). */
  storesDir?: string;
  /**
   * The nested host-run paths found in `key` (the writable dirs) at the turn's first command,
   * and what every protected path inside them was then (`watched`): kept for the turn, never
   * scanned again. `moved` is set, for the rest of the turn, once one of them changed.
   */
  hostRun?: HostRunWatch;
  /**
   * The user's toolchains, readable to the turn's commands, and the job's cache folder (set
   * by the engine for each turn and check: src/guard/toolchains.ts).
   */
  toolchains?: SandboxToolchains;
  /**
   * The credential stores the turn's commands were kept from, by real path (guard/hidden_list.ts
   * hiddenByReal), added to as each command's sandbox is set up: the reply's `hidden:` line.
   */
  hiddenSeen?: Map<string, string>;
}

/** Where the shell runs, or why it cannot. */
export type ShellRunner =
  | BwrapRunner
  /**
   * No sandbox: `why` is the reply's `sandbox:` text, "off (<reason>)", built from `reason`,
   * which a check's evidence shows alone ("unconfined: <reason>").
   */
  | { kind: "unconfined"; why: string; reason: string }
  /** The sandbox setting is "required" and cannot be met: the parts of the refusal. */
  | { kind: "refused"; problem: FailureParts };

let found: { path: string | undefined } | undefined;

/**
 * Finds bubblewrap, system locations first and only then the server's PATH (which may
 * include a directory a delegate can write), once per process.
 */
export function findBwrap(
  env: Record<string, string | undefined> = process.env,
): string | undefined {
  found ??= {
    path: which("bwrap", { PATH: "/usr/bin:/bin:/usr/local/bin" }, "/") ??
      which("bwrap", { PATH: env.PATH ?? "" }, "/"),
  };
  return found.path;
}

/** Decides how the Bash tool runs under `mode` on this machine. */
export function shellRunner(
  mode: SandboxMode,
  bwrap: string | undefined = findBwrap(),
  options: { limits?: SandboxLimits; runDir?: string } = {},
): ShellRunner {
  if (mode === "off") return unconfined("the sandbox setting is off");
  let missing: { reason: string; refused: FailureParts } | undefined;
  if (!isLinux) {
    missing = {
      reason: `the native engine's sandbox, bubblewrap, exists only on Linux; this is ` +
        `${process.platform}: commands run as you`,
      refused: {
        facts: "Bash is refused: the native engine's sandbox (bubblewrap) exists only on " +
          'Linux, and the sandbox setting is "required"',
        advice: "To let delegates run commands unconfined on this machine, the user can run " +
          "`ollama-delegate config --sandbox on`",
      },
    };
  } else if (!bwrap) {
    missing = {
      reason: "bubblewrap is missing, so commands run as you: apt install bubblewrap, " +
        "dnf install bubblewrap, pacman -S bubblewrap",
      refused: {
        facts: `Bash is refused: bubblewrap (bwrap) is not installed, and the sandbox setting ` +
          `is "required"`,
        advice: INSTALL_BWRAP_HINT,
      },
    };
  }
  if (!missing) return { kind: "bwrap", bwrap: bwrap!, ...options };
  // One rule for both engines: where the sandbox cannot be had, commands still run, and every
  // reply says so (`sandbox:`); "required" refuses them instead.
  return mode === "required"
    ? { kind: "refused", problem: missing.refused }
    : unconfined(missing.reason);
}

function unconfined(reason: string): Extract<ShellRunner, { kind: "unconfined" }> {
  return { kind: "unconfined", why: `off (${reason})`, reason };
}
