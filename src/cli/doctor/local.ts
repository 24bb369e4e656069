/**
 * `doctor` checks of this machine: settings files, state dir, Claude Code CLI, sandbox, change
 * journal.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import type { EngineFacts, SandboxPlan, SandboxTrial } from "../../engines/facts.ts";
import { runCommand } from "../../platform/command_run.ts";
import { settleWithin } from "../../platform/sleep.ts";
import { isLinux, osPlatform } from "../../platform/runtime.ts";
import { type LinuxFs, linuxFs } from "../../platform/posix/inotify.ts";
import {
  helperFsWith,
  PYTHON_CANDIDATES,
  systemPython,
} from "../../platform/posix/inotify_helper.ts";
import { formatProblems, type ResolvedSettings } from "../../settings/load.ts";
import type { SandboxSetting } from "../../settings/types.ts";
import { factsText } from "../../errors.ts";
import type { Check } from "./check.ts";

/** `claude --version` of a native build answers in well under a second; a cold npm one in a few. */
const CLAUDE_VERSION_TIMEOUT_MS = 10_000;
const SANDBOX_TIMEOUT_MS = 15_000;

/** Every settings layer readable and every value in it valid. */
export function configCheck(resolved: ResolvedSettings): Check {
  const layers = resolved.layers.filter((l) => l.name !== "default").map((l) => {
    const where = l.path ? ` ${l.path}` : "";
    const keys = l.keys.length > 0 ? ` (${l.keys.join(", ")})` : "";
    return `${l.name}${where}: ${l.status}${keys}`;
  });
  const details = {
    layers: resolved.layers.map((l) => ({
      name: l.name,
      ...(l.path ? { path: l.path } : {}),
      status: l.status,
      keys: l.keys,
      ...(l.error ? { error: l.error } : {}),
    })),
    problems: resolved.problems,
  };
  if (resolved.problems.length === 0) {
    return {
      id: "config",
      title: "Settings",
      status: "pass",
      summary: `every settings layer is valid (user: ${statusOf(resolved, "user")}, project: ${
        statusOf(resolved, "project")
      }, env: ${statusOf(resolved, "env")})`,
      details,
      lines: layers,
    };
  }
  const files = [...new Set(resolved.problems.map((p) => p.where))];
  const lines = formatProblems(resolved.problems);
  return {
    id: "config",
    title: "Settings",
    status: "fail",
    summary: lines.length === 1
      ? lines[0]!
      : `${lines.length} settings not used, from ${files.join(", ")}`,
    hint: `Fix or remove what is named above (the server ignores it and uses the layer below); ` +
      `ollama-delegate config shows every layer and can write valid values`,
    details,
    ...(lines.length > 1 ? { lines } : {}),
  };
}

function statusOf(resolved: ResolvedSettings, name: string): string {
  return resolved.layers.find((l) => l.name === name)?.status ?? "missing";
}

/** The state dir exists (or can be made) and takes a file. */
export function stateDirCheck(stateDir: string): Check {
  const probe = join(stateDir, `.doctor-${process.pid}-${Date.now()}.tmp`);
  try {
    mkdirSync(stateDir, { recursive: true });
    writeFileSync(probe, "doctor\n", { flag: "wx" });
    rmSync(probe);
  } catch (e) {
    rmSync(probe, { force: true });
    return {
      id: "state",
      title: "State dir",
      status: "fail",
      summary: `cannot write in ${stateDir}: ${(e as Error).message}`,
      hint: `Make it writable, or use another folder: ollama-delegate config --state-dir <dir> ` +
        `(or OLLAMA_MCP_STATE_DIR)`,
      details: { path: stateDir },
    };
  }
  return {
    id: "state",
    title: "State dir",
    status: "pass",
    summary: `${stateDir} is writable`,
    details: { path: stateDir },
  };
}

/** Where `claudeBin` resolves on the delegate's PATH, and whether it answers `--version`. */
export async function claudeCheck(
  resolved: ResolvedSettings,
  facts: EngineFacts,
  cwd: string,
): Promise<Check> {
  const s = resolved.settings;
  const childEnv = facts.childEnv?.(s.defaultModel || "doctor") ?? {};
  const bin = facts.binary?.path;
  const base = { id: "claude", title: "Claude Code CLI" };
  if (!bin) {
    return {
      ...base,
      status: "fail",
      summary: /[\\/]/.test(s.claudeBin)
        ? `"${s.claudeBin}" does not exist or is not an executable file`
        : `"${s.claudeBin}" was not found on the delegate's PATH (${childEnv.PATH ?? ""})`,
      hint: `Install Claude Code (npm install -g @anthropic-ai/claude-code, or see ` +
        `https://docs.claude.com/en/docs/claude-code/setup), or set its absolute path: ` +
        `ollama-delegate config --claude-bin <path> (or OLLAMA_MCP_CLAUDE_BIN)`,
      details: { claudeBin: s.claudeBin },
    };
  }
  const run = await runVersion(bin, childEnv, cwd);
  const version = /\d+\.\d+\.\d+\S*/.exec(run.stdout)?.[0];
  if (run.code === 0 && version) {
    return {
      ...base,
      status: "pass",
      summary: `Claude Code ${version} at ${bin}`,
      details: { path: bin, version },
    };
  }
  const output = (run.stderr || run.stdout).trim().slice(-300);
  return {
    ...base,
    status: "fail",
    summary: `${bin} is not runnable: \`--version\` ${run.why}${output ? `: ${output}` : ""}`,
    hint: `Reinstall Claude Code, or point claudeBin at a working one: ` +
      `ollama-delegate config --claude-bin <path>`,
    details: { path: bin, exitCode: run.code },
  };
}

/** `claude --version` prints one line; more than this is not a version. */
const VERSION_MAX_BYTES = 64 * 1024;

interface VersionRun {
  code: number | null;
  stdout: string;
  stderr: string;
  why: string;
}

async function runVersion(
  command: string,
  env: Record<string, string>,
  cwd: string,
): Promise<VersionRun> {
  // runCommand also sweeps a grandchild holding the pipes, so it cannot hold the report.
  const run = await runCommand({
    command,
    args: ["--version"],
    cwd,
    env,
    timeoutMs: CLAUDE_VERSION_TIMEOUT_MS,
    keepChars: 0,
    maxBytes: VERSION_MAX_BYTES,
  });
  const none = { code: null, stdout: "", stderr: "" };
  if (run.notStarted !== undefined) return { ...none, why: `could not start (${run.notStarted})` };
  if (run.timedOut) {
    return { ...none, why: `gave no answer within ${CLAUDE_VERSION_TIMEOUT_MS / 1000} s` };
  }
  const text = (b: Uint8Array | undefined) => (b ? new TextDecoder().decode(b) : "");
  const why = run.exitCode === 0
    ? "printed no version"
    : `exited with ${run.exitCode ?? run.signal}`;
  return { code: run.exitCode, stdout: text(run.stdout), stderr: text(run.stderr), why };
}

/** What `bwrap --version` says ("0.8.0"), or undefined when it says nothing readable. */
export async function bubblewrapVersion(bwrap: string): Promise<string | undefined> {
  const run = await runVersion(bwrap, { PATH: "/usr/bin:/bin" }, "/");
  return /^bubblewrap (\d+\.\d+(?:\.\d+)?)\s*$/m.exec(run.stdout)?.[1];
}

/**
 * What a bubblewrap before 0.13 costs a claude delegate where the jail holds many paths, or
 * undefined from 0.13 on. Before it, bubblewrap sets each mount's flags by reading the whole
 * mount table again (containers/bubblewrap#384; 0.13 sets them with mount_setattr, #756), and
 * Claude Code's sandbox runs it for every command inside a jail that has a mount per host-run
 * path of each nested project. Measured with bench/tree_cost_bench.ts --nested-only.
 */
export function oldBubblewrapNote(version: string | undefined): string | undefined {
  const parts = version?.split(".").map(Number);
  if (!parts || parts.some((n) => !Number.isInteger(n))) return undefined;
  const [major = 0, minor = 0] = parts;
  if (major > 0 || minor >= 13) return undefined;
  return `bubblewrap ${version} reads the whole mount table for each mount it makes: in a ` +
    "repository of nested projects (the jail holds each one's .git, .claude, .vscode, " +
    "CLAUDE.md and .envrc with a mount) every command of a claude delegate costs more, +0.16 s " +
    "with 100 of them against +0.02 s with bubblewrap 0.13 or later";
}

/** How claude delegates are confined here (the jail, Claude Code's sandbox), and if not why. */
export function claudeSandboxCheck(
  mode: SandboxSetting,
  plan: SandboxPlan,
  platform: string = osPlatform,
  /** How the jail holds the sandbox limits here (the engine's `limitsText`). */
  limits?: string,
  /** What the jail's bubblewrap says it is (bubblewrapVersion). */
  bwrapVersion?: string,
): Check {
  const base = { id: "claude.sandbox", title: "claude sandbox" };
  const held = limits ? `; ${limits}` : "";
  if (plan.kind === "on") {
    const { bwrap, socat } = plan.tools;
    const note = oldBubblewrapNote(bwrapVersion);
    return {
      ...base,
      status: "pass",
      summary: `claude delegates run in a bubblewrap jail (${bwrap}), with Claude Code's ` +
        `own sandbox nested inside for Bash (${socat}), where their commands run without an ` +
        `approval in acceptEdits and auto${held}`,
      ...(note ? { lines: [note] } : {}),
      details: {
        mode,
        bwrap,
        socat,
        ...(bwrapVersion ? { bwrapVersion } : {}),
      },
    };
  }
  if (plan.kind === "refused") {
    return {
      ...base,
      status: "fail",
      summary: factsText(plan.problem),
      hint: "Install bubblewrap and socat (apt install bubblewrap socat), or let delegates run " +
        "with what this machine has: ollama-delegate config --sandbox on",
      details: { mode },
    };
  }
  return {
    ...base,
    status: "warn",
    summary: `sandbox ${plan.why}; every claude reply says so, and in acceptEdits and auto ` +
      `commands that are not read-only need allowed_tools${held}`,
    ...(platform === "linux" && mode !== "off"
      ? { hint: "Install bubblewrap and socat (apt install bubblewrap socat) to confine it" }
      : {}),
    details: { mode },
  };
}

/** bubblewrap runs a trivial command (or the user turned the sandbox off). */
export async function sandboxCheck(mode: SandboxSetting, facts: EngineFacts): Promise<Check> {
  const base = { id: "sandbox", title: "Sandbox (bubblewrap)" };
  if (mode === "off") {
    return {
      ...base,
      status: "warn",
      summary: "sandbox is off: the native engine runs Bash unconfined (set by the user)",
      hint: "Turn it back on with ollama-delegate config --sandbox on",
      details: { mode },
    };
  }
  const probe: SandboxTrial = await settleWithin(
    facts.trySandbox?.() ??
      Promise.resolve({ ok: false, detail: "the native engine cannot try its sandbox" }),
    SANDBOX_TIMEOUT_MS,
    { ok: false, detail: "the sandboxed command did not finish" },
  );
  if (probe.ok && probe.unconfined) {
    return {
      ...base,
      status: "warn",
      summary: `${probe.detail}; every native reply says so`,
      ...(probe.advice ? { hint: probe.advice } : {}),
      details: { mode },
    };
  }
  if (probe.ok) return { ...base, status: "pass", summary: probe.detail, details: { mode } };
  return {
    ...base,
    status: "fail",
    summary: probe.detail,
    ...(probe.advice ? { hint: probe.advice } : {}),
    details: { mode },
  };
}

/** What journalCheck looks at (tests give their own). */
export interface JournalFacts {
  linux: boolean;
  /** Deno's libc calls (platform/posix/inotify.ts), where it has them. */
  libc(): LinuxFs | undefined;
  /** The Python Node's route would run its helper with, and the calls through it. */
  python(): string | undefined;
  helper(python: string): LinuxFs & { stop(): void };
}

const JOURNAL_FACTS: JournalFacts = {
  linux: isLinux,
  libc: linuxFs,
  python: systemPython,
  helper: helperFsWith,
};

/**
 * Whether turns keep a change journal here (docs/security.md, "What a turn changed"), or walk
 * the tree for the files they changed: on Node on Linux the journal needs a system Python, and
 * without one a turn in a large tree costs more (issue 34, item 2).
 */
export function journalCheck(facts: JournalFacts = JOURNAL_FACTS): Check {
  const base = { id: "journal", title: "Change journal" };
  const walks = "each turn walks the tree for the files it changed (about +0.7 s a turn at " +
    "100,000 files)";
  if (!facts.linux) {
    return {
      ...base,
      status: "pass",
      summary: `${walks}; a change journal needs Linux`,
      details: { kept: false },
    };
  }
  if (facts.libc()) {
    return {
      ...base,
      status: "pass",
      summary:
        "kept through inotify: a turn costs about the same in a large tree as in an empty one",
      details: { kept: true, through: "libc" },
    };
  }
  const python = facts.python();
  if (python === undefined) {
    return {
      ...base,
      status: "warn",
      summary: `no system python3 (${PYTHON_CANDIDATES.join(", ")}): ${walks}`,
      hint: "Install Python 3 (apt install python3), or run a release binary, which needs none",
      details: { kept: false },
    };
  }
  const fs = facts.helper(python);
  const fd = fs.inotifyInit();
  if (fd < 0) {
    fs.stop();
    return {
      ...base,
      status: "warn",
      summary: `the inotify helper could not be started with ${python} (errno ${-fd}): ${walks}`,
      hint: `Check that ${python} runs (${python} -c "import ctypes")`,
      details: { kept: false, python },
    };
  }
  fs.close(fd);
  fs.stop();
  return {
    ...base,
    status: "pass",
    summary: `kept through inotify, by a helper run with ${python}: a turn costs about the ` +
      "same in a large tree as in an empty one",
    details: { kept: true, through: "python", python },
  };
}
