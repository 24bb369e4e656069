/**
 * How many tokens each engine sends per request before any work is done (its system prompt
 * and tool schemas), and what a typical reply costs. A local model has to read the whole
 * prompt on every turn, so these numbers decide whether a model's context holds an engine's
 * requests (`doctor`) and how long a turn takes on it (`doctor --probe`).
 *
 * Measured as the characters of the prompt in the first request the engine sends (system
 * prompt, messages, tool definitions) divided by 4, with the emulator recording the request
 * (`bench/first_request_bench.ts`); update them here when an engine's prompt changes. The
 * claude engine's numbers live beside its context check (engines/claude/context_check.ts).
 */

/**
 * The native engine's first request on /api/chat as the model reads it: its system prompt, six
 * tool schemas and a one-line task (`deno run -A bench/first_request_bench.ts`, the "prompt"
 * column, as the claude engine's figures are measured).
 */
export const NATIVE_PROMPT_TOKENS = 636;

/**
 * Tokens of files a native one-shot (and a review) puts in its prompt when the model's
 * context length is unknown.
 */
export const DEFAULT_FILES_BUDGET = 100_000;

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
