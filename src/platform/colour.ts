/**
 * Colour in the terminal commands' output: one rule for when, and node:util's styleText for
 * how, on Deno and Node alike.
 */
import * as util from "node:util";
import { isTty } from "./runtime.ts";

/** What styleText takes: "bold", "dim", "red", or several of them. */
export type ColourFormat = Parameters<typeof util.styleText>[0];

/**
 * Whether output gets colour. FORCE_COLOR wins, as in Node's own tty rules: any value but
 * "0" or "false" turns colour on, even in a pipe, and those two turn it off. Then NO_COLOR:
 * any non-empty value turns it off (https://no-color.org). Then only a terminal gets colour,
 * and not a dumb one, which would show the escape sequences as text.
 */
export function colourWanted(env: Readonly<Record<string, string | undefined>>, tty: boolean) {
  const force = env.FORCE_COLOR;
  if (force) return force !== "0" && force.toLowerCase() !== "false";
  if (env.NO_COLOR) return false;
  return tty && env.TERM !== "dumb";
}

/** colourWanted for what this process writes to `stream`. */
export function colourOn(
  stream: "stdout" | "stderr",
  env: Readonly<Record<string, string | undefined>>,
): boolean {
  return colourWanted(env, isTty(stream));
}

// Node has styleText from 20.12: on an older Node 20 the text stays plain rather than the
// program failing to load.
const styleText = typeof util.styleText === "function" ? util.styleText : undefined;

/** `text` in `format` when `on`, as it is otherwise. */
export function paint(format: ColourFormat, text: string, on: boolean): string {
  // The rule above has decided: styleText must not judge the stream again.
  return on && styleText ? styleText(format, text, { validateStream: false }) : text;
}
