import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import {
  jailCgroupPlan,
  jailShell,
  limitedShellScript,
  processLimitWarning,
} from "../../../src/engines/claude/jail_limits.ts";
import { findPrlimit } from "../../../src/engines/limit_launch.ts";
import { DEFAULT_LIMITS, limitPlan } from "../../../src/engines/sandbox_limits.ts";
import { tempDir } from "../../support/harness.ts";

const MIB = 1024 * 1024;

Deno.test("processLimitWarning: the limit, its parts, how often, and whether Claude Code stopped", () => {
  const limits = { ...DEFAULT_LIMITS, maxProcesses: 64 };
  const reserve = jailCgroupPlan(limits).maxPids - 64;
  assert.equal(
    processLimitWarning(limits, 1, 0),
    `processes: the turn's commands reached the jail's process limit once (${64 + reserve}: ` +
      `sandboxMaxProcesses 64 + ${reserve} for Claude Code), so some of their forks failed; ` +
      "ollama-delegate config --sandbox-max-processes <n> raises it",
  );
  const stopped = processLimitWarning(limits, 7, 134);
  assert.match(stopped, /limit 7 times/);
  assert.match(stopped, /Claude Code, which shares it, could not start a thread then and stopped/);
  assert.doesNotMatch(processLimitWarning(limits, 7, 1), /stopped/);
});

Deno.test("jailCgroupPlan: the user's limits plus Claude Code's own room", () => {
  assert.deepEqual(jailCgroupPlan({ ...DEFAULT_LIMITS, maxMemoryMb: 256, maxProcesses: 64 }, 2), {
    maxPids: 64 + 64 + 2 * 2,
    maxMemoryBytes: (256 + 1024) * MIB,
  });
  // Claude Code's threads grow with the cores.
  assert.equal(jailCgroupPlan(DEFAULT_LIMITS, 32).maxPids, 512 + 64 + 64);
});

Deno.test({
  name:
    "limitedShellScript: every command of the shell it becomes has the rlimits and is the OOM killer's first choice",
  ignore: process.platform !== "linux" || !findPrlimit(),
  fn() {
    const dir = tempDir("od-jail-shell-");
    // The real shell by a name that needs quoting.
    const real = join(dir, "it's sh");
    symlinkSync("/bin/sh", real);
    const shell = join(dir, "bash");
    const limits = { ...DEFAULT_LIMITS, maxMemoryMb: 300, maxFileMb: 3, maxProcesses: 99 };
    const prefix = [findPrlimit()!, ...limitPlan(limits).rlimits(true), "--"];
    writeFileSync(shell, limitedShellScript(prefix, real), { mode: 0o755 });
    const out = execFileSync(shell, [
      "-c",
      'sh -c \'grep -E "^Max (data size|file size|processes|address space)" /proc/self/limits; ' +
      "cat /proc/self/oom_score_adj'",
    ], { encoding: "utf8" });
    assert.match(out, new RegExp(`Max data size\\s+${300 * MIB}\\s+${300 * MIB}`));
    assert.match(out, new RegExp(`Max file size\\s+${3 * MIB}\\s+${3 * MIB}`));
    assert.match(out, /Max processes\s+99\s+99/);
    // A memory cgroup holds the jail, so no RLIMIT_AS.
    assert.match(out, /Max address space\s+unlimited/);
    assert.match(out, /^1000$/m);
  },
});

Deno.test({
  name: "jailShell: the shell Claude Code would pick, where the jail has it",
  ignore: process.platform !== "linux",
  fn() {
    const bash = ["/bin/bash", "/usr/bin/bash"].find((p) => {
      try {
        execFileSync(p, ["-c", "true"]);
        return true;
      } catch {
        return false;
      }
    });
    if (!bash) return;
    assert.equal(jailShell({ SHELL: bash }), bash);
    // A shell the jail does not hold (under $HOME), or one Claude Code does not take (fish).
    assert.equal(jailShell({ SHELL: "/home/u/.nix-profile/bin/bash" }), jailShell({}));
    assert.equal(jailShell({ SHELL: "/usr/bin/fish" }), jailShell({}));
    assert.match(jailShell({})!, /^\/(usr\/)?bin\/(bash|zsh)$/);
  },
});
