/**
 * Text a hostile Ollama can send to the terminal commands (`doctor`, `doctor --probe`,
 * `models list`, `models derive`): a model name, a version and an answer that carry terminal
 * escapes (CSI, an OSC 8 link, BEL), a bidi override and a newline that would start a line of
 * its own. What the commands print must show each of them escaped (platform/plain_text.ts).
 */
import assert from "node:assert/strict";

/** A model name with a colour, a hyperlink, a right-to-left override and a forged line. */
export const EVIL_MODEL = "evil\x1b[31mred\x1b]8;;x\x07link\x1b]8;;\x07\u202ecod\nPASS  forged:1b";
/** How the commands show it. */
export const EVIL_SHOWN =
  "evil\\033[31mred\\033]8;;x\\alink\\033]8;;\\a\\342\\200\\256cod\\nPASS  forged:1b";
/** A version string that would set the terminal's title. */
export const EVIL_VERSION = "0.34.1\x1b]0;pwned\x07";
/** A model's answer that would clear the screen and forge a line. */
export const EVIL_SAID = "fine\x1b[2J\u2066\nPASS  all good";

/** Nothing a terminal acts on, and no line the backend started, is in `text`. */
export function assertEscaped(text: string): void {
  // deno-lint-ignore no-control-regex
  const raw = /[\x07\x1b\u202e\u2066]/.exec(text);
  assert.equal(raw, null, `a raw control character in:\n${JSON.stringify(text)}`);
  assert.doesNotMatch(text, /^PASS {2}(forged|all good)/m, text);
}
