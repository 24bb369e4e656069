/**
 * The one estimate of tokens in text this program makes: characters / 4, the usual rule of
 * thumb for English and code under the tokenizers of the models it runs, and the one the
 * project's Ollama emulator applies. Real counts differ by model, which is why every budget
 * built on it keeps a margin.
 */

/** Characters a token is taken to hold. */
export const CHARS_PER_TOKEN = 4;

/** The tokens `chars` characters of text come to, rounded up. */
export function estimateTokens(chars: number): number {
  return Math.ceil(chars / CHARS_PER_TOKEN);
}

/**
 * The largest context a model is taken to have when nothing reliable says otherwise: 2^20
 * tokens, the largest context open models are served with today (the native engine's reasoning
 * is in engines/native/context/budget.ts, which believes a backend's claim up to this).
 */
export const LARGEST_CONTEXT_TOKENS = 1_048_576;
