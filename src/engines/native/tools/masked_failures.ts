/**
 * Failures hidden by a later command. A shell's exit code is its last command's, so in
 * `npm test; echo done` or `npm test | tee log` a failing test run exits 0, and a model that
 * reads only the exit code reports success. The command is run by bash with traps that note
 * each failing command (ERR) and each failing part of a pipeline (PIPESTATUS, read before the
 * next command by a DEBUG trap and at exit), and print them at exit behind a random marker
 * that the server takes out of the output again.
 *
 * This is reporting, not confinement: a command can remove the traps or print before them. It
 * notes what the shell itself runs: failures inside subshells, functions and scripts the
 * command starts are seen only through their exit codes. Back-to-back pipelines that fail
 * with exactly the same exit codes (a loop) count once.
 */
import { existsSync } from "node:fs";
import { isWindows } from "../../../platform/runtime.ts";

/** A command that failed while a later one decided the exit code. */
export interface MaskedFailure {
  command: string;
  exitCode: number;
}

/** At most this many are reported one by one; the rest are counted. */
export const MAX_MASKED = 20;
/** Each failing command's text is cut here. */
const COMMAND_CHARS = 200;
/** The shell that runs commands, inside the sandbox as on the host (both see the host's /bin). */
const BASH = "/bin/bash";

/**
 * The shell code that sets the traps, on one line so the command's own line numbers (in its
 * error messages) stay as they were. Every name starts with `__od_`. Each trap is a single
 * function call whose last argument is `$_` (the last argument of the previous command), which
 * puts `$_` back as it was, so `mkdir -p d && cd $_` still works. A single call also matters
 * because bash runs the DEBUG trap before each command of the other traps (as the failing
 * command); the only DEBUG run in them is then harmless.
 */
function prelude(marker: string, pipes: boolean): string {
  // Written for bash 3.2 as well (macOS's /bin/bash, used when the sandbox is off there): no
  // negative array subscripts, no `${var@Q}`.
  const lines = [
    `__od_n=${marker} __od_m=() __od_k=0 __od_e= __od_l= __od_r=() __od_u= __od_p=()`,
    // Notes one failure; the rest past MAX_MASKED are only counted. `__od_e` names the failure
    // noted last when it came from the ERR trap, so the exit can tell it apart.
    `__od_add() { __od_e=; if (( \${#__od_m[@]} < ${MAX_MASKED} )); then ` +
    `local c=\${2//[$'\\n\\r\\t']/ }; __od_m+=("$1 \${c:0:${COMMAND_CHARS}}"); ` +
    `else __od_k=$((__od_k + 1)); fi; }`,
    `__od_err() { __od_add "$1" "$2"; __od_e="$1 $2"; }`,
    // The failing parts of the pipeline that just ended (not the last part: that one is the
    // pipeline's own status, seen by ERR; not 141, SIGPIPE, which `yes | head` gives without
    // any failure). __od_r holds the commands started since the last pipeline ended, so the
    // last n of them are its parts when every part was a simple command.
    `__od_pipe() { local n=\${#__od_p[@]} s="\${__od_p[*]}" r=\${#__od_r[@]} i; ` +
    `if (( n > 1 )) && [[ $s != "$__od_l" ]]; then for (( i = 0; i < n - 1; i++ )); do ` +
    `if (( __od_p[i] != 0 && __od_p[i] != 141 )); then if (( r >= n )); then ` +
    `__od_add "\${__od_p[i]}" "\${__od_r[r - n + i]}"; else ` +
    `__od_add "\${__od_p[i]}" "part $((i + 1)) of a pipeline ending in: \${__od_r[r - 1]:-?}"; ` +
    `fi; fi; done; __od_r=(); fi; __od_l=$s; }`,
    // Before each command. A changed `$_` means the previous command ran in this shell, so no
    // pipeline is half started.
    `__od_dbg() { __od_p=("\${PIPESTATUS[@]}"); [[ $2 == "$__od_u" ]] || __od_r=(); ` +
    `if (( \${#__od_p[@]} > 1 )); then __od_pipe; else __od_l=; fi; __od_r+=("$1"); ` +
    `(( \${#__od_r[@]} > 32 )) && __od_r=("\${__od_r[@]: -16}"); __od_u=$2; }`,
    // At exit: the failure that set the exit code is not masked, it is the exit code.
    `__od_end() { __od_p=("\${PIPESTATUS[@]}"); ` +
    `if (( $1 != 0 )) && [[ -n $__od_e && $__od_e == "$1 $2" ]]; then ` +
    `if (( __od_k > 0 )); then __od_k=$((__od_k - 1)); else unset "__od_m[\${#__od_m[@]} - 1]"; fi; fi; ` +
    (pipes ? `__od_pipe; ` : "") +
    `local x; for x in "\${__od_m[@]}"; do printf '\\n%s %s\\n' "$__od_n" "$x" >&2; done; ` +
    `(( __od_k > 0 )) && printf '\\n%s + %s\\n' "$__od_n" "$__od_k" >&2; :; }`,
    `trap '__od_err "$?" "$BASH_COMMAND" "$_"' ERR`,
    `trap '__od_end "$?" "$BASH_COMMAND"' EXIT`,
  ];
  // A DEBUG trap runs before every command and makes tight loops several times slower, so it
  // is set only where a pipeline can hide a failure: when the command has a `|`.
  if (pipes) lines.push(`trap '__od_dbg "$BASH_COMMAND" "$_"' DEBUG`);
  return lines.join("; ") + "; ";
}

/** `'...'` for sh, any text. */
function shQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/** A command wrapped to report masked failures, with the marker its report carries. */
export interface Watched {
  command: string;
  marker: string;
  /** The code put before the command, which bash quotes back in a syntax error. */
  prelude: string;
}

/**
 * `command` as run by bash with the traps, for `/bin/sh -c`; undefined where bash is not
 * there (Windows, a system without it): the command then runs as it is.
 */
export function watchFailures(command: string, bash = BASH): Watched | undefined {
  if (isWindows || !existsSync(bash)) return undefined;
  const marker = `__od_masked_${crypto.randomUUID().replaceAll("-", "")}`;
  const code = prelude(marker, /(^|[^|])\|(?!\|)/.test(command));
  return { command: `exec ${bash} -c ${shQuote(code + command)}`, marker, prelude: code };
}

/** What the traps reported, and the output without their lines. */
export interface MaskedReport {
  output: string;
  masked: MaskedFailure[];
  /** Failures past MAX_MASKED, counted only. */
  more: number;
}

/**
 * Takes the report lines out of `output`, and the trap code out of a syntax error that quotes
 * it (the model should see its own command there, not ours).
 */
export function takeMaskedReport(output: string, watched: Watched): MaskedReport {
  const masked: MaskedFailure[] = [];
  let more = 0;
  // Each line is ended, so that output read after it (stdout comes through a pipe of its own,
  // and a background process may print after the shell ended) is not taken for its text.
  const line = new RegExp(`\\n${watched.marker} (\\+|\\d+) ([^\\n]*)(?:\\n|$)`, "g");
  const rest = output.replaceAll(watched.prelude, "").replace(
    line,
    (_all, code: string, text: string) => {
      if (code === "+") more += Number(text) || 0;
      else masked.push({ exitCode: Number(code), command: text });
      return "";
    },
  );
  return { output: rest, masked, more };
}

/** `output` without the report's lines and the trap code: what the command itself printed. */
export function withoutReport(output: string, watched: Watched): string {
  return takeMaskedReport(output, watched).output;
}

/** `exit 1: false; exit 2: npm test`, for the model and the status. */
export function maskedText(masked: readonly MaskedFailure[], more = 0): string {
  const shown = masked.map((m) => `exit ${m.exitCode}: ${m.command}`).join("; ");
  return more > 0 ? `${shown}; +${more} more` : shown;
}
