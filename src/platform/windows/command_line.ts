/**
 * Building a cmd.exe command line that runs a batch file (`.cmd`/`.bat`, such as npm's
 * `claude.cmd` shim) with arguments that arrive byte for byte. Pure string functions, so they
 * are tested on any OS against the model in
 * tests/platform/windows/support/windows_parse_model.ts.
 *
 * Three layers parse such a line, outermost first (qntm.org/cmd, ss64, the "How does CMD.EXE
 * parse scripts" phases on Stack Overflow 4094699):
 *  1. cmd.exe running `/c`: percent expansion, then carets and quotes; `& | < > ( )` outside
 *     quotes are operators. It starts the batch file with what is left.
 *  2. The batch file forwards its arguments with `%*`, and cmd.exe parses that line again:
 *     carets and operators once more (the text `%*` expands to is not percent-expanded again).
 *  3. The program the shim starts (node.exe) splits its command line with the MSVCRT rules.
 * So each argument is quoted for layer 3, then caret-escaped once for each cmd.exe pass. The
 * quotes are caret-escaped too: cmd.exe never enters its quote state inside an argument, so a
 * `\"` (a quote to the CRT, a quote toggle to cmd.exe) cannot flip it (the "BatBadBut"
 * hole: CVE-2024-24576 in Rust, CVE-2024-27980 in Node.js).
 */

import { DelegateError } from "../../errors.ts";

/**
 * What cmd.exe acts on outside quotes and a caret makes literal. `%` is absent: carets do not
 * stop percent expansion, which runs first (see {@link inertPercent}). `!` only matters with
 * delayed expansion, which the invocation turns off; escaping it anyway costs nothing.
 */
const CARET_ESCAPED = /[()!^"<>&|]/g;

/**
 * Characters no escaping survives: CR and LF end the command in every cmd.exe phase (Rust
 * CVE-2024-24576 fix, BatBadBut), cmd.exe reads Ctrl-Z as a line end, and NUL ends the string.
 */
const UNESCAPABLE: ReadonlyArray<[string, string]> = [
  ["\n", "a line feed (LF)"],
  ["\r", "a carriage return (CR)"],
  ["\0", "a NUL character"],
  ["\x1a", "a Ctrl-Z (U+001A)"],
];

/**
 * Quotes one argument for the MSVCRT / CommandLineToArgvW parser ("Parsing C command-line
 * arguments", Microsoft): always wrapped in quotes; a run of n backslashes before a quote
 * becomes 2n+1 backslashes and the quote; a run before the closing quote becomes 2n.
 */
export function quoteArgument(arg: string): string {
  const body = arg
    .replace(/(\\*)"/g, (_m, slashes: string) => `${slashes}${slashes}\\"`)
    .replace(/(\\+)$/, "$1$1");
  return `"${body}"`;
}

/** Puts a caret before every character cmd.exe would act on outside quotes. */
export function caretEscape(text: string): string {
  return text.replace(CARET_ESCAPED, "^$&");
}

/**
 * Makes every `%` survive cmd.exe's percent expansion, inside or outside quotes. `%` becomes
 * `%%cd:~,%`: the first `%` is left alone because no variable has an empty name, and `%cd:~,%`
 * is a zero-length substring of the always-defined dynamic variable CD, so it expands to
 * nothing. The same trick as Rust's `make_bat_command_line` (after yt-dlp); it needs command
 * extensions on (`/e:on`). Applied once: cmd.exe expands percents only in its first pass.
 */
export function inertPercent(text: string): string {
  return text.replaceAll("%", "%%cd:~,%");
}

/**
 * Refuses text that cannot be escaped for cmd.exe.
 * @param what names the text in the message: `argument 3` (its index in the argument list)
 * @param target the batch file, for the message
 */
export function assertEscapable(text: string, what: string, target: string): void {
  for (const [char, name] of UNESCAPABLE) {
    if (text.includes(char)) {
      throw new DelegateError(
        `Cannot pass ${what} to the batch file "${target}": it contains ${name}, which ` +
          `cmd.exe cannot escape (it ends the command line). Point claudeBin at the program's ` +
          `.exe instead of its .cmd shim, or remove the line break`,
      );
    }
  }
}

/**
 * One argument as it must appear on the `/c` line to reach a program started by a batch file
 * that forwards `%*`: CRT-quoted, percents made inert, then caret-escaped once per cmd.exe
 * pass (two: the `/c` line and the shim's `%*` line; execa does the same for every batch file).
 */
export function escapeBatchArgument(
  arg: string,
  index: number,
  target: string,
  passes = 2,
): string {
  assertEscapable(arg, `argument ${index}`, target);
  let out = inertPercent(quoteArgument(arg));
  for (let i = 0; i < passes; i++) out = caretEscape(out);
  return out;
}

/**
 * The command cmd.exe runs for `/c`: the batch file in real quotes (where `& ( ) ^ !` are
 * literal and only `%` needs care), then each escaped argument.
 */
export function batchCommandLine(script: string, args: readonly string[]): string {
  assertEscapable(script, "its own file name", script);
  // Windows file names cannot contain `"`, and a trailing `\` would be read as escaping the
  // closing quote; Rust refuses both for the same reason.
  if (script.includes('"') || script.endsWith("\\")) {
    throw new TypeError(
      `Cannot run batch file "${script}": a file name cannot contain '"' or end with '\\'`,
    );
  }
  const parts = [`"${inertPercent(script)}"`];
  args.forEach((arg, i) => parts.push(escapeBatchArgument(arg, i, script)));
  return parts.join(" ");
}

/**
 * The arguments for cmd.exe that run `script` with `args`. They must be passed verbatim
 * (Node `windowsVerbatimArguments`, Deno `windowsRawArguments`): they are already escaped.
 *  - `/d` skips AutoRun commands from the registry;
 *  - `/e:on` enables command extensions, which the `%` trick needs;
 *  - `/v:off` disables delayed expansion, so `!x!` stays literal even where the registry
 *    turns it on by default;
 *  - `/s /c "<line>"`: cmd.exe strips exactly the first and the last quote and runs the rest,
 *    whatever it contains (without `/s` its legacy heuristics decide whether to strip).
 */
export function cmdArguments(script: string, args: readonly string[]): string[] {
  return ["/d", "/e:on", "/v:off", "/s", "/c", `"${batchCommandLine(script, args)}"`];
}

/** Whether Windows runs this file through cmd.exe. Trailing dots and spaces are dropped by
 * Windows when it opens the file, so `x.bat.` is a batch file too (Rust CVE-2024-43402). */
export function isBatchFile(path: string): boolean {
  return /\.(?:bat|cmd)[. ]*$/i.test(path);
}
