/**
 * `doctor`'s check of the native engine's sandbox: runs a trivial command in it, which proves
 * bubblewrap works on this machine rather than just exists, and says how its limits are
 * enforced here.
 */
import { canLimitPidsWithCgroup } from "../../platform/posix/pids_cgroup.ts";
import { isRoot } from "../../platform/runtime.ts";
import { type SandboxMode, shellRunner } from "./sandbox.ts";
import { findPrlimit, runShell } from "./sandbox_run.ts";

/** How the sandbox's limits are enforced on this machine, in words. */
async function limitsText(): Promise<string> {
  const prlimit = findPrlimit();
  const root = isRoot();
  const memory = prlimit
    ? "memory, file size: rlimits"
    : "memory, file size: not limited (prlimit from util-linux is missing)";
  const processes = !root
    ? (prlimit ? "processes: RLIMIT_NPROC" : "processes: not limited")
    : await canLimitPidsWithCgroup()
    ? "processes: a pids cgroup (running as root)"
    : "processes: not limited (as root RLIMIT_NPROC does not apply and no pids cgroup is " +
      "writable here)";
  return `${processes}; ${memory}; /tmp: a sized tmpfs`;
}

/** A trivial sandboxed command, for `doctor`: proves bubblewrap works here, not just exists. */
export async function probeSandbox(
  mode: SandboxMode,
): Promise<{ ok: boolean; detail: string }> {
  const runner = shellRunner(mode);
  if (runner.kind === "refused") return { ok: false, detail: runner.reason };
  if (runner.kind === "unconfined") {
    return { ok: true, detail: "sandbox is off: Bash runs unconfined (set by the user)" };
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
    return { ok: true, detail: `${runner.bwrap} runs commands (exit 0); ${await limitsText()}` };
  }
  return {
    ok: false,
    detail:
      `${runner.bwrap} cannot start a sandbox (exit ${result.exitCode ?? result.signal}): ${
        result.output.trim().slice(0, 300)
      }. Unprivileged user namespaces may be disabled (sysctl kernel.unprivileged_userns_clone ` +
      `or an AppArmor restriction)`,
  };
}
