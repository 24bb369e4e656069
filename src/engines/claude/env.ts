import { allowlistedEnv } from "../../platform/env.ts";

/** Inputs for a delegate's environment. */
export interface ClaudeEnvInput {
  parentEnv: Record<string, string | undefined>;
  baseUrl: string;
  model: string;
  claudeConfigDir: string;
}

/**
 * Values that point Claude Code at Ollama and keep it quiet. They go into the child's
 * environment and, through `pinnedSettings`, into `--settings`, because Claude Code applies
 * the `env` block of user and project settings.json over its own environment
 * (ollama/ollama#16097) and only flag settings outrank those files.
 */
export function ollamaValues(baseUrl: string, model: string): Record<string, string> {
  return {
    ANTHROPIC_BASE_URL: baseUrl,
    ANTHROPIC_AUTH_TOKEN: "ollama",
    // Empty, so Claude Code sends no x-api-key header (apiKeySource "none").
    ANTHROPIC_API_KEY: "",
    ANTHROPIC_CUSTOM_HEADERS: "",
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
  };
}

/** The complete environment of a delegate: the allowlist, then the Ollama values. */
export function claudeChildEnv(input: ClaudeEnvInput): Record<string, string> {
  return {
    ...allowlistedEnv(input.parentEnv),
    ...ollamaValues(input.baseUrl, input.model),
    // The delegate's own config home: the user's hooks, plugins, MCP servers and login
    // in ~/.claude stay out of delegated runs (weakness 5).
    CLAUDE_CONFIG_DIR: input.claudeConfigDir,
  };
}

/** The `--settings` JSON that pins model and endpoint above user and project settings. */
export function pinnedSettings(baseUrl: string, model: string): string {
  return JSON.stringify({ model, env: ollamaValues(baseUrl, model) });
}
