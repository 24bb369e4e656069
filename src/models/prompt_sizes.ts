/**
 * How many tokens each engine sends per request before any work is done (its system prompt
 * and tool schemas), and what a typical reply costs. A local model has to read the whole
 * prompt on every turn, so these numbers decide whether a model's context holds an engine's
 * requests (`doctor`) and how long a turn takes on it (`doctor --probe`).
 *
 * Measured as the characters of the first request the engine sends divided by 4, with the
 * emulator recording the request; update them here when an engine's prompt changes.
 */
import { DEFAULT_CLAUDE_TOOLS, type EngineName } from "../settings/fields.ts";

/**
 * Claude Code 2.1.332 with `--tools Bash,Read,Edit,Write,Glob,Grep` (the default claudeTools):
 * about 19k characters. With its whole tool set (Agent, Skill, Workflow... as when `--tools`
 * is not passed) the same request is about 48k characters: CLAUDE_FULL_PROMPT_TOKENS.
 */
export const CLAUDE_LEAN_PROMPT_TOKENS = 4_800;
export const CLAUDE_FULL_PROMPT_TOKENS = 12_000;

/** The native engine's system prompt and its six tool schemas: about 2.6k characters. */
export const NATIVE_PROMPT_TOKENS = 650;

/**
 * A turn's reply as time estimates assume it: one tool call with its reasoning, or a short
 * answer. Thinking models write more.
 */
export const TYPICAL_REPLY_TOKENS = 250;

/**
 * The smallest context Ollama gives a model that sets none (no Modelfile num_ctx, no
 * OLLAMA_CONTEXT_LENGTH): 4096 on machines under 24 GiB of VRAM (docs/context-length.mdx).
 */
export const OLLAMA_SMALLEST_DEFAULT_CONTEXT = 4_096;

/**
 * The prompt tokens one request of `engine` carries. A claude tool list within the default
 * six is the lean prompt; any other list may name Claude Code's heavy tools, so the full
 * prompt is assumed.
 */
export function enginePromptTokens(
  engine: EngineName,
  claudeTools: readonly string[] = DEFAULT_CLAUDE_TOOLS,
): number {
  if (engine === "native") return NATIVE_PROMPT_TOKENS;
  const lean = claudeTools.every((t) => DEFAULT_CLAUDE_TOOLS.includes(t));
  return lean ? CLAUDE_LEAN_PROMPT_TOKENS : CLAUDE_FULL_PROMPT_TOKENS;
}
