/**
 * Aids for models that lose track of their budget: a countdown as the turn limit nears, a last
 * request without tools so the model has to write its answer, and the text written so far kept
 * (marked as partial) when a job stops before that answer. Small local models otherwise spend
 * every turn on tool calls and end with nothing to show for them.
 */

/** From this many requests left, the last tool result says how many remain. */
export const COUNTDOWN_FROM = 3;

/** The most of a partial result kept: its newest part, with a note of what was cut. */
export const MAX_PARTIAL_CHARS = 20_000;

/**
 * The line added to the last tool result when `remaining` requests are left (undefined while
 * the limit is far). With one left, that request goes without tools and this line is the
 * instruction to answer.
 */
export function countdownLine(remaining: number): string | undefined {
  if (remaining > COUNTDOWN_FROM || remaining < 1) return undefined;
  if (remaining > 1) return `[${remaining} turns remain]`;
  return "[1 turn remains: tools are withdrawn. Write your final answer now: what you did, " +
    "what you verified, and what is left undone]";
}

/**
 * The result of a job that stopped before the model's final answer: what it wrote along the
 * way, newest last, under a first line that says why it stopped. Empty when it wrote nothing.
 */
export function partialText(said: readonly string[], why: string): string {
  const parts = said.map((s) => s.trim()).filter((s) => s !== "");
  if (parts.length === 0) return "";
  let body = parts.join("\n\n");
  let cut = "";
  if (body.length > MAX_PARTIAL_CHARS) {
    cut = `; the first ${body.length - MAX_PARTIAL_CHARS} characters are cut`;
    body = body.slice(body.length - MAX_PARTIAL_CHARS);
  }
  return `[partial: ${why}${cut}]\n\n${body}`;
}
