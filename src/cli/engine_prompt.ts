/**
 * What one request of an engine carries and what context it therefore needs, for `doctor`
 * and `doctor --probe`: the claude engine's own estimate (the measured table behind its
 * refusal of a model loaded with too small a context), the native engine's measured prompt.
 */
import { osPlatform } from "../platform/runtime.ts";
import { estimatePromptTokens, requiredContext } from "../engines/claude/context_check.ts";
import { findSandboxTools, planSandbox } from "../engines/claude/sandbox.ts";
import { NATIVE_PROMPT_TOKENS } from "../models/prompt_sizes.ts";
import type { EngineName, Settings } from "../settings/types.ts";

export interface EngineNeed {
  engine: EngineName;
  /** Prompt tokens of every request before the task: system prompt, tools, reminders. */
  promptTokens: number;
  /** The context under which the engine's requests are cut (or, for claude, refused). */
  requiredContext: number;
}

/**
 * The claude engine's need with the settings in force: the claudeTools, the default
 * permission mode, and Claude Code's sandbox where it would be on. The native engine asks
 * Ollama for the context each request needs, so its prompt is its need.
 */
export function engineNeed(
  engine: EngineName,
  s: Settings,
  env: Record<string, string>,
): EngineNeed {
  if (engine === "native") {
    return { engine, promptTokens: NATIVE_PROMPT_TOKENS, requiredContext: NATIVE_PROMPT_TOKENS };
  }
  const sandbox = planSandbox(s.sandbox, findSandboxTools(env), osPlatform).kind === "on";
  const promptTokens = estimatePromptTokens({
    tools: s.claudeTools,
    permissionMode: s.defaultPermissionMode,
    taskChars: 0,
    sandbox,
  });
  return { engine, promptTokens, requiredContext: requiredContext(promptTokens) };
}
