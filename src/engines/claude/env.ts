import { allowlistedEnv } from "../../platform/env.ts";
import { isWindows } from "../../platform/runtime.ts";
import { searchPath } from "../../platform/which.ts";
import type { ClaudeSandboxSettings } from "./sandbox.ts";

/** Inputs for a delegate's environment. */
export interface ClaudeEnvInput {
  parentEnv: Record<string, string | undefined>;
  baseUrl: string;
  model: string;
  claudeConfigDir: string;
  /** An entry every process of the turn inherits, so that all of them can be found. */
  marker?: { name: string; value: string };
  /** Claude Code's minimal mode (`--bare`), which takes its key from ANTHROPIC_API_KEY only. */
  lean?: boolean;
  /** What every request of the turn carries besides (EndpointExtras). */
  extras?: EndpointExtras;
}

/**
 * What a turn's requests carry besides the endpoint and model: the session's headers, which
 * gateways route by (backends/session_headers.ts), as ANTHROPIC_CUSTOM_HEADERS takes them.
 */
export interface EndpointExtras {
  customHeaders?: string;
}

/**
 * Git settings for every git command a delegate runs, Claude Code's own included: a
 * repository's `.git/config` and `.git/hooks` may have been planted by an earlier delegate,
 * and `core.fsmonitor` runs its command at every `git status`, hooks at commit. Entries of
 * GIT_CONFIG_COUNT / GIT_CONFIG_KEY_<n> / GIT_CONFIG_VALUE_<n> count as given with `git -c`,
 * above every config file (git-config(1), ENVIRONMENT). A hooks path that is not a directory
 * holds no hooks.
 */
export const GIT_SAFETY_ENV: Readonly<Record<string, string>> = {
  GIT_CONFIG_COUNT: "2",
  GIT_CONFIG_KEY_0: "core.fsmonitor",
  GIT_CONFIG_VALUE_0: "false",
  GIT_CONFIG_KEY_1: "core.hooksPath",
  GIT_CONFIG_VALUE_1: "/dev/null",
};

/**
 * Values that point Claude Code at Ollama and keep it quiet. They go into the child's
 * environment and, through `pinnedSettings`, into `--settings`, because Claude Code applies
 * the `env` block of user and project settings.json over its own environment
 * (ollama/ollama#16097) and only flag settings outrank those files.
 */
export function ollamaValues(
  baseUrl: string,
  model: string,
  lean = false,
  extras: EndpointExtras = {},
): Record<string, string> {
  return {
    ANTHROPIC_BASE_URL: baseUrl,
    ANTHROPIC_AUTH_TOKEN: "ollama",
    // Empty, so Claude Code sends no x-api-key header (apiKeySource "none"); in its minimal
    // mode (`--bare`) the key is the only credential it reads, and Ollama ignores its value.
    ANTHROPIC_API_KEY: lean ? "ollama" : "",
    // Ours only: a settings file's headers could send the requests elsewhere's credentials.
    ANTHROPIC_CUSTOM_HEADERS: extras.customHeaders ?? "",
    ANTHROPIC_MODEL: model,
    ANTHROPIC_DEFAULT_OPUS_MODEL: model,
    ANTHROPIC_DEFAULT_SONNET_MODEL: model,
    ANTHROPIC_DEFAULT_HAIKU_MODEL: model,
    ANTHROPIC_DEFAULT_FABLE_MODEL: model,
    ANTHROPIC_SMALL_FAST_MODEL: model,
    CLAUDE_CODE_SUBAGENT_MODEL: model,
    // A settings file could switch the provider to Bedrock, Vertex or Foundry and with it
    // to the user's cloud credentials.
    CLAUDE_CODE_USE_BEDROCK: "0",
    CLAUDE_CODE_USE_VERTEX: "0",
    CLAUDE_CODE_USE_FOUNDRY: "0",
    CLAUDE_CODE_ATTRIBUTION_HEADER: "0",
    CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_FEEDBACK_COMMAND: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_TELEMETRY: "1",
    DISABLE_ERROR_REPORTING: "1",
    // The lean harness's prompt has no git section, yet Claude Code 2.1.332 still gathers one at
    // start (git status, log, config user.name, ...: six git processes, and `git status` reads
    // the whole tree); this setting is what turns that off. The full harness keeps Claude
    // Code's git instructions and status.
    ...(lean ? { CLAUDE_CODE_DISABLE_GIT_INSTRUCTIONS: "1" } : {}),
  };
}

/**
 * The complete environment of a delegate: the allowlist with only the absolute PATH entries,
 * then the Ollama values, the git settings and the turn's marker.
 */
export function claudeChildEnv(
  input: ClaudeEnvInput,
  windows: boolean = isWindows,
): Record<string, string> {
  const inherited = allowlistedEnv(input.parentEnv, windows);
  // A relative PATH entry (`node_modules/.bin`, `.`, an empty one) would make Claude Code,
  // its Bash tool and everything they start look commands up in the job's working
  // directory, where a delegate can plant them.
  const pathKey = Object.keys(inherited).find((k) =>
    windows ? k.toUpperCase() === "PATH" : k === "PATH"
  );
  if (pathKey !== undefined) {
    inherited[pathKey] = searchPath(inherited, windows).join(windows ? ";" : ":");
  }
  return {
    ...inherited,
    ...ollamaValues(input.baseUrl, input.model, input.lean, input.extras),
    // The delegate's own config home: the user's hooks, plugins, MCP servers and login
    // in ~/.claude stay out of delegated runs.
    CLAUDE_CONFIG_DIR: input.claudeConfigDir,
    ...GIT_SAFETY_ENV,
    ...(input.marker ? { [input.marker.name]: input.marker.value } : {}),
  };
}

/**
 * The environment of a verification command the server runs after a claude turn: the
 * delegate's allowlist (only absolute PATH entries) and the git settings, without the values
 * that point Claude Code at its endpoint, which a test command has no use for.
 */
export function verifyEnv(
  parentEnv: Record<string, string | undefined>,
  windows: boolean = isWindows,
): Record<string, string> {
  const inherited = allowlistedEnv(parentEnv, windows);
  if (inherited.PATH !== undefined) {
    inherited.PATH = searchPath(inherited, windows).join(windows ? ";" : ":");
  }
  return { ...inherited, ...GIT_SAFETY_ENV };
}

/**
 * The `--settings` JSON that pins model and endpoint, the deny rules of its file tools
 * (file_rules.ts), and Claude Code's sandbox when it is on. These are the only settings a
 * delegate gets: argv.ts loads no settings file.
 */
export function pinnedSettings(
  baseUrl: string,
  model: string,
  sandbox?: ClaudeSandboxSettings,
  denyRules: readonly string[] = [],
  lean = false,
  extras: EndpointExtras = {},
): string {
  return JSON.stringify({
    model,
    env: ollamaValues(baseUrl, model, lean, extras),
    ...(denyRules.length > 0 ? { permissions: { deny: denyRules } } : {}),
    ...(sandbox ? { sandbox } : {}),
  });
}
