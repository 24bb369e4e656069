/**
 * What one request of an engine carries and what context it therefore needs, for `doctor`
 * and `doctor --probe`: the claude engine's own estimate (the measured table behind its
 * refusal of a model loaded with too small a context), the native engine's measured prompt.
 */
import { engineFacts } from "../engines/registry.ts";
import type { EngineFacts } from "../engines/facts.ts";
import { OLLAMA_SMALLEST_DEFAULT_CONTEXT } from "../models/prompt_sizes.ts";
import type { Check } from "./doctor_check.ts";
import { type EngineName, ENGINES, type Settings } from "../settings/types.ts";

export interface EngineNeed {
  engine: EngineName;
  /** Prompt tokens of every request before the task: system prompt, tools, reminders. */
  promptTokens: number;
  /** The context under which the engine's requests are cut (or, for claude, refused). */
  requiredContext: number;
}

/** What each engine a user may choose says about itself with these settings, here. */
export type EnginesFacts = Record<EngineName, EngineFacts>;

/** Asks every engine of settings' ENGINES for its facts (engines/facts.ts). */
export async function enginesFacts(
  settings: Settings,
  env: Record<string, string | undefined>,
  cwd: string,
  platform?: string,
): Promise<EnginesFacts> {
  const setup = { settings, env, serverCwd: cwd, ...(platform ? { platform } : {}) };
  const each = await Promise.all(ENGINES.map((name) => engineFacts(name, setup)));
  return Object.fromEntries(ENGINES.map((name, i) => [name, each[i]!])) as EnginesFacts;
}

/**
 * An engine's need with the settings in force, as the engine estimates it: the claude engine
 * by its claudeTools, harness, default permission mode and Claude Code's sandbox where it
 * would be on; the native engine asks Ollama for the context each request needs, so its prompt
 * is its need.
 */
export function engineNeed(engine: EngineName, facts: EnginesFacts): EngineNeed {
  const { promptTokens, requiredContext } = facts[engine].request;
  return { engine, promptTokens, requiredContext };
}

/**
 * `doctor`'s "Request size" line: what one request of each engine carries with the settings
 * in force, and whether a local model loaded with Ollama's smallest default context (4,096
 * tokens, GPUs under 24 GiB) holds it. A warning when the claude engine's does not.
 */
export function requestSizeCheck(s: Settings, facts: EnginesFacts): Check {
  const claude = engineNeed("claude", facts);
  const native = engineNeed("native", facts);
  const sandbox = facts.claude.sandbox.kind === "on";
  const harness = facts.claude.request.depends;
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
