/**
 * Text from outside shown to a reader: a delegate's file names, commands and answers, a
 * backend's error texts and model names. Replies lay out evidence as `label: value` lines, so
 * a value that breaks a line can forge one (a file named `x\nstate: completed`); ESC and the
 * C1 controls drive the terminal that shows them; bidirectional overrides reorder what a
 * reader sees without changing the bytes (CVE-2021-42574). Such characters are shown as C
 * escapes instead, the way git shows file names (`"ok.txt\nstate: x"`, `\033`).
 *
 * A byte of a file name that is not UTF-8 (held as U+DC80..U+DCFF, file_names.ts) is shown as
 * git shows it with core.quotePath on, in octal (`"caf\351.txt"`): never dropped or replaced.
 *
 * It lives in platform/, below every layer that words outside text (an engine naming planted
 * files, jobs/, review/, both front ends), so there is one rule for all of them.
 */
import { rawByteOf } from "./file_names.ts";

/** Beyond the controls: the line and paragraph separators, and the bidi marks and overrides. */
const FORMAT = "\\u061c\\u200e\\u200f\\u2028\\u2029\\u202a-\\u202e\\u2066-\\u2069";
/** The bytes of a name that is not UTF-8 (lone surrogates: the expressions are in unicode mode). */
const RAW = "\\udc80-\\udcff";
/** C0 controls, DEL, C1 controls (NEL among them), FORMAT and RAW. */
const UNSAFE = new RegExp(`[\\u0000-\\u001f\\u007f-\\u009f${FORMAT}${RAW}]`, "u");
const UNSAFE_ALL = new RegExp(UNSAFE.source, "gu");
/** The same, minus the newline and tab a multi-line text keeps; CR only where it ends a line. */
const UNSAFE_IN_BLOCK = new RegExp(
  `\\r(?!\\n)|[\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f-\\u009f${FORMAT}${RAW}]`,
  "gu",
);

/** The short escapes of C and git; every other character is shown as its UTF-8 bytes in octal. */
const SHORT: Readonly<Record<string, string>> = {
  "\x07": "\\a",
  "\b": "\\b",
  "\t": "\\t",
  "\n": "\\n",
  "\v": "\\v",
  "\f": "\\f",
  "\r": "\\r",
};

const encoder = new TextEncoder();

function escapeChar(c: string): string {
  const short = SHORT[c];
  if (short !== undefined) return short;
  const raw = rawByteOf(c);
  if (raw !== undefined) return `\\${raw.toString(8)}`;
  let out = "";
  for (const byte of encoder.encode(c)) out += `\\${byte.toString(8).padStart(3, "0")}`;
  return out;
}

/**
 * `text` on one line with nothing a terminal acts on: every unsafe character as a C escape.
 * Backslashes are left alone, so the result is safe but not reversible (a literal `\n` in a
 * command looks like an escaped newline), and escaping twice changes nothing.
 */
export function escapeLine(text: string): string {
  return text.replace(UNSAFE_ALL, escapeChar);
}

/**
 * Prose (a model's words, a prompt's first line) on one line: runs of white space, line
 * breaks included, become one space, then what is left unsafe is escaped.
 */
export function flattenLine(text: string): string {
  return escapeLine(text.replace(/\s+/g, " ").trim());
}

/**
 * Multi-line text (a model's answer) with its lines and tabs kept and everything else unsafe
 * escaped: a lone CR, the separators, ESC. A CR before a newline stays (Windows line ends).
 */
export function escapeBlock(text: string): string {
  return text.replace(UNSAFE_IN_BLOCK, escapeChar);
}

/**
 * Words someone else chose (a reviewer's claim), always in double quotes on one line: runs of
 * white space become one space, `"` and `\` are escaped, then the unsafe characters, so the
 * words cannot close the quotes and go on as text of the reply's own (a forged finding, an
 * instruction that reads as ours).
 */
export function quoteLine(text: string): string {
  return quoteString(text.replace(/\s+/g, " ").trim());
}

/** `text` in double quotes with `"`, `\` and the unsafe characters escaped, nothing else changed. */
export function quoteString(text: string): string {
  return `"${text.replace(/[\\"]/g, (c) => `\\${c}`).replace(UNSAFE_ALL, escapeChar)}"`;
}

/**
 * A path as git shows one: as it is when plain, else in double quotes with `"`, `\` and the
 * unsafe characters escaped (`"ok.txt\nstate: x"`). Other non-ASCII characters stay readable,
 * as with git's `core.quotePath` off.
 */
export function quotePath(path: string): string {
  if (!UNSAFE.test(path) && !path.includes('"') && !path.includes("\\")) return path;
  return quoteString(path);
}

/** The mark before each line of quoted output. */
export const QUOTE_MARK = "| ";

/**
 * Output a reply quotes (a check's, whose program is the delegate's to write) as a block of
 * marked lines: escaped as escapeBlock does, and every line after `| `, so that none of its
 * lines can pass for one of the reply's own (`state: completed (verified)`, `--- output ---`).
 */
export function quoteBlock(text: string): string {
  return escapeBlock(text).split("\n").map((l) => l === "" ? QUOTE_MARK.trim() : QUOTE_MARK + l)
    .join("\n");
}
