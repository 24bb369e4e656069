/**
 * What one request of an engine carries and what context it therefore needs, for `doctor`
 * and `doctor --probe`: the claude engine's own estimate (the measured table behind its
 * refusal of a model loaded with too small a context), the native engine's measured prompt.
 */
import { osPlatform } from "../platform/runtime.ts";
import { estimatePromptTokens, requiredContext } from "../engines/claude/context_check.ts";
import { findSandboxTools, planSandbox } from "../engines/claude/sandbox.ts";
import { NATIVE_PROMPT_TOKENS, OLLAMA_SMALLEST_DEFAULT_CONTEXT } from "../models/prompt_sizes.ts";
import type { Check } from "./doctor_check.ts";
import { type EngineName, LEAN_CLAUDE_TOOLS, type Settings } from "../settings/types.ts";

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
  const lean = s.claudeHarness === "lean";
  const promptTokens = estimatePromptTokens({
    tools: lean ? s.claudeTools.filter((t) => LEAN_CLAUDE_TOOLS.includes(t)) : s.claudeTools,
    lean,
    permissionMode: s.defaultPermissionMode,
    taskChars: 0,
    sandbox,
  });
  return { engine, promptTokens, requiredContext: requiredContext(promptTokens) };
}

/**
 * `doctor`'s "Request size" line: what one request of each engine carries with the settings
 * in force, and whether a local model loaded with Ollama's smallest default context (4,096
 * tokens, GPUs under 24 GiB) holds it. A warning when the claude engine's does not.
 */
export function requestSizeCheck(s: Settings, env: Record<string, string>): Check {
  const claude = engineNeed("claude", s, env);
  const native = engineNeed("native", s, env);
  const sandbox = planSandbox(s.sandbox, findSandboxTools(env), osPlatform).kind === "on";
  const harness = `${s.claudeHarness} harness, Claude Code's sandbox ${sandbox ? "on" : "off"}`;
  const fits = claude.requiredContext <= OLLAMA_SMALLEST_DEFAULT_CONTEXT;
  const summary = `claude: about ${claude.promptTokens} tokens a request (${harness}); ` +
    `native: about ${native.promptTokens}; ` +
    (fits
      ? `both fit a model loaded with Ollama's default ${OLLAMA_SMALLEST_DEFAULT_CONTEXT} tokens`
      : `a model loaded with Ollama's default ${OLLAMA_SMALLEST_DEFAULT_CONTEXT} tokens cannot ` +
        `hold the claude engine's ${claude.requiredContext}`);
  return {
    id: "requests",
    title: "Request size",
    status: fits ? "pass" : "warn",
    summary,
    ...(fits ? {} : {
      hint: s.claudeHarness === "full"
        ? "Use the lean harness (ollama-delegate config --claude-harness lean), load models " +
          "with more context (ollama-delegate models derive <model> --ctx 64k), or use engine " +
          '"native"'
        : "Load models with more context (ollama-delegate models derive <model> --ctx 64k), " +
          'or use engine "native"',
    }),
    details: {
      claudeHarness: s.claudeHarness,
      claudeSandbox: sandbox,
      claudePromptTokens: claude.promptTokens,
      claudeRequiredContext: claude.requiredContext,
      nativePromptTokens: native.promptTokens,
    },
  };
}
