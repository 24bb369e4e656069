/**
 * `doctor`'s check of the native engine's sandbox: runs a trivial command in it, which proves
 * bubblewrap works on this machine rather than just exists, and says how its limits are
 * enforced here.
 */
import { cgroupSupport } from "../../../platform/posix/limit_cgroup.ts";
import { isLinux, isRoot } from "../../../platform/runtime.ts";
import type { SandboxTrial } from "../../facts.ts";
import { INSTALL_BWRAP, type SandboxMode, shellRunner } from "./shell_runner.ts";
import { addressSpaceMb, DEFAULT_LIMITS, type SandboxLimits, shmMb } from "../../sandbox_limits.ts";
import { runShell } from "./run_shell.ts";
import { findPrlimit } from "../../limit_launch.ts";

/** How the sandbox's limits are enforced on this machine, in words. */
export async function limitsText(limits: SandboxLimits = DEFAULT_LIMITS): Promise<string> {
  const prlimit = findPrlimit();
  const cgroup = await cgroupSupport();
  const mb = `${limits.maxMemoryMb} MiB`;
  const memory = cgroup.memory
    ? `memory: a memory cgroup, ${mb} for the command's processes together` +
      (cgroup.noSwap ? ", no swap" : " (swap not limited: swap accounting is off)")
    : prlimit
    ? `memory: per process only, no memory cgroup can be made here (heap ${mb} by RLIMIT_DATA, ` +
      `address space ${addressSpaceMb(limits)} MiB by RLIMIT_AS, which leaves room for ` +
      `runtimes' reservations but lets shared memory pass ${mb})`
    : "memory: not limited (no memory cgroup can be made here, and prlimit from util-linux " +
      "is missing)";
  const file = prlimit ? "file size: RLIMIT_FSIZE" : "file size: not limited (no prlimit)";
  const processes = cgroup.pids
    ? "processes: a pids cgroup"
    : !isRoot()
    ? (prlimit ? "processes: RLIMIT_NPROC" : "processes: not limited")
    : "processes: not limited (as root RLIMIT_NPROC does not apply and no pids cgroup is " +
      "writable here)";
  return `${processes}; ${memory}; ${file}; /tmp ${limits.tmpMb} MiB and /dev/shm ` +
    `${shmMb(limits)} MiB, the rest read-only`;
}

/** A trivial sandboxed command, for `doctor`: proves bubblewrap works here, not just exists. */
export async function probeSandbox(
  mode: SandboxMode,
  limits: SandboxLimits = DEFAULT_LIMITS,
): Promise<SandboxTrial> {
  const runner = shellRunner(mode, undefined, { limits });
  if (runner.kind === "refused") {
    const { facts, advice } = runner.problem;
    return { ok: false, detail: facts, ...(advice ? { advice } : {}) };
  }
  if (runner.kind === "unconfined") {
    return {
      ok: true,
      unconfined: true,
      detail: `native Bash: sandbox ${runner.why}`,
      // Installing is the way out only where bubblewrap runs and the user did not turn it off.
      ...(mode !== "off" && isLinux ? { advice: INSTALL_BWRAP } : {}),
    };
  }
  const result = await runShell(runner, {
    command: "echo sandbox-ok",
    cwd: "/",
    writable: [],
    timeoutMs: 10_000,
    signal: new AbortController().signal,
    keepChars: 2000,
  });
  if (result.exitCode === 0 && result.output.includes("sandbox-ok")) {
    return {
      ok: true,
      detail: `${runner.bwrap} runs commands (exit 0); ${await limitsText(limits)}`,
    };
  }
  return {
    ok: false,
    detail:
      `${runner.bwrap} cannot start a sandbox (exit ${result.exitCode ?? result.signal}): ${
        result.output.trim().slice(0, 300)
      }. Unprivileged user namespaces may be disabled (sysctl kernel.unprivileged_userns_clone ` +
      `or an AppArmor restriction)`,
    advice: "Allow unprivileged user namespaces (Ubuntu 24.04+: an AppArmor profile for bwrap, " +
      "or sysctl kernel.apparmor_restrict_unprivileged_userns=0), or turn the sandbox off with " +
      "ollama-delegate config --sandbox off",
  };
}
