/**
 * The flags of `ollama-delegate config` that change a setting: which setting each names and
 * how its text becomes the value the setting's schema checks.
 */
import { DURATION_EXAMPLES, parseDuration } from "../platform/duration.ts";
import { ConfigUsageError } from "./config_errors.ts";
import { parseTokenCount } from "./token_count.ts";
import { DEFAULT_CLAUDE_TOOLS, type SettingKey } from "./types.ts";

export const FLAG_TO_KEY = {
  mode: "delegationMode",
  allow: "allowedModels",
  "default-model": "defaultModel",
  residency: "residency",
  "permission-mode": "defaultPermissionMode",
  "base-url": "baseUrl",
  "base-urls": "baseUrls",
  "claude-bin": "claudeBin",
  "state-dir": "stateDir",
  "job-timeout": "jobTimeoutMs",
  "max-concurrent": "maxConcurrent",
  engine: "defaultEngine",
  "default-backend": "defaultBackend",
  isolation: "defaultIsolation",
  sandbox: "sandbox",
  "retain-days": "retainDays",
  "sandbox-max-processes": "sandboxMaxProcesses",
  "sandbox-max-memory": "sandboxMaxMemoryMb",
  "sandbox-max-file": "sandboxMaxFileMb",
  "sandbox-tmp": "sandboxTmpMb",
  "max-context": "maxContext",
  "keep-alive": "keepAlive",
  "claude-tools": "claudeTools",
  "claude-harness": "claudeHarness",
  "review-gate": "reviewGate",
  "gate-severity": "reviewGateSeverity",
  "gate-agreement": "reviewGateAgreement",
  "gate-rounds": "reviewGateRounds",
  "gate-models": "reviewGateModels",
  "gate-timeout": "reviewGateSeconds",
  "orchestrator-price": "orchestratorPrice",
} as const satisfies Record<string, SettingKey>;
export type ChangeFlag = keyof typeof FLAG_TO_KEY;

/** Parses a duration (platform/duration.ts), or plain milliseconds, as jobTimeoutMs counts. */
export function parseDurationMs(text: string): number {
  const ms = parseDuration(text, { bare: "ms" });
  if (ms === undefined) {
    throw new ConfigUsageError(
      `Cannot use job timeout "${text}": write a duration like ${DURATION_EXAMPLES}, or ` +
        `milliseconds`,
    );
  }
  return ms;
}

/** A flag value that removes the setting from the file, so the built-in default applies. */
export const RESET = Symbol("reset");

export function valueForFlag(flag: ChangeFlag, text: string): unknown {
  switch (flag) {
    case "max-context":
      // "64k" as in `models derive --ctx`; anything else goes to the schema for its message.
      return parseTokenCount(text) ?? (/^\s*-?\d+(\.\d+)?\s*$/.test(text) ? Number(text) : text);
    case "keep-alive":
      return text.trim() === "default" ? RESET : text.trim();
    case "claude-tools": {
      if (text.trim() === "default") return RESET;
      const tools = text.split(",").map((t) => t.trim()).filter(Boolean);
      if (tools.length === 0) {
        throw new ConfigUsageError(
          `Cannot use an empty --claude-tools: name tools (e.g. Bash,Read,Edit), or default`,
        );
      }
      for (const tool of tools) {
        // Claude Code matches tool names exactly: "bash" would silently give no shell.
        const meant = DEFAULT_CLAUDE_TOOLS.find((d) => d.toLowerCase() === tool.toLowerCase());
        if (meant && meant !== tool) {
          throw new ConfigUsageError(
            `Cannot use --claude-tools "${tool}": Claude Code's tool names are case-sensitive; ` +
              `write ${meant}`,
          );
        }
      }
      return tools;
    }
    case "gate-models":
      return text.trim() === "default"
        ? RESET
        : text.split(",").map((s) => s.trim()).filter(Boolean);
    case "gate-severity":
      return text.trim().toLowerCase();
    case "orchestrator-price":
      return text.trim() === "default" ? RESET : text.trim();
    case "base-urls":
      // "none" empties the pool: the default Ollama is baseUrl alone again.
      return text.trim() === "none" ? RESET : text.split(",").map((s) => s.trim()).filter(Boolean);
    case "allow":
      return text.trim() === "all" ? [] : text.split(",").map((s) => s.trim()).filter(Boolean);
    case "default-model":
      return text.trim() === "auto" ? "" : text.trim();
    case "default-backend":
      // "ollama" unless a backend of yours has that name: the built-in default, as its absence.
      return text.trim();
    case "job-timeout":
      return parseDurationMs(text);
    case "max-concurrent":
    case "retain-days":
    case "sandbox-max-processes":
    case "sandbox-max-memory":
    case "sandbox-max-file":
    case "sandbox-tmp":
    case "gate-agreement":
    case "gate-rounds":
    case "gate-timeout":
      // Any number goes to the schema, so "1.5" and "-1" get its range message.
      return /^\s*-?\d+(\.\d+)?\s*$/.test(text) ? Number(text) : text;
    default:
      return text;
  }
}

/**
 * `--keep-alive -1`: parseArgs takes "-1" for a flag and refuses; a negative number after a
 * flag that takes a value is that value, as `--keep-alive=-1` would be.
 */
export function joinNegativeValues(argv: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const next = argv[i + 1];
    const name = arg.startsWith("--") && !arg.includes("=") ? arg.slice(2) : "";
    if (name in FLAG_TO_KEY && next !== undefined && /^-\d+(\.\d+)?$/.test(next)) {
      out.push(`${arg}=${next}`);
      i++;
    } else {
      out.push(arg);
    }
  }
  return out;
}
