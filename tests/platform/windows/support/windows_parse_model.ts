/**
 * A model of how Windows takes a command line apart, written from the documented rules rather
 * than from our escaping code, so that escape-then-parse can be checked on any OS:
 *
 * - cmd.exe's own command line (`cmd /?`): with `/s`, the text after `/c` loses exactly its
 *   first and last quote.
 * - cmd.exe line parsing (Stack Overflow 4094699, "How does the Windows Command Interpreter
 *   parse scripts", phases 1 and 2; ss64 "Escape characters"):
 *   phase 1, percent expansion in command-line mode: `%name%` or `%name:modifier%` is
 *   replaced when `name` is defined; otherwise the first `%` is kept and the scan resumes
 *   right after it (so `%%VAR%%` gives `%` + value + `%`). Quotes do not stop it. A batch
 *   file's `%*` is replaced by its argument text, which is not scanned again.
 *   phase 2: `"` toggles the quote state and stays in the text; outside quotes a caret makes
 *   the next character literal (and is removed), and `& | < > ( )` are operators. Inside
 *   quotes everything is literal.
 * - The program's own split (Microsoft, "Parsing C command-line arguments"): argv[0] runs to
 *   the next quote if it starts with one, else to whitespace; then whitespace separates
 *   arguments outside quotes; 2n backslashes + `"` give n backslashes and a quote toggle,
 *   2n+1 backslashes + `"` give n backslashes and a literal quote; other backslashes are
 *   literal. Inside quotes, `""` is a literal quote (UCRT) or a literal quote that also ends
 *   the quoted span (older msvcrt / CommandLineToArgvW); our lines must not depend on which.
 *
 * The model is stricter than cmd.exe where it is unsure: `(` and `)` count as operators
 * anywhere, and a dangling caret at the end of a line is reported.
 */

/** A variable lookup; cmd.exe compares names case-insensitively. */
export type CmdEnv = (name: string) => string | undefined;

/**
 * An environment in which every name is defined, with a value that would inject a command:
 * any expansion other than the zero-length `%cd:~,%` breaks a round trip and shows in the
 * events. CD is cmd.exe's dynamic current-directory variable, always defined.
 */
export const HOSTILE_ENV: CmdEnv = (name) =>
  name.toUpperCase() === "CD" ? "C:\\work dir" : `[${name}" & calc.exe & "]`;

/** Something cmd.exe acted on instead of passing it through. */
export type CmdEvent =
  | { kind: "expansion"; spec: string; at: number }
  | { kind: "operator"; char: string; at: number };

export interface PhaseResult {
  text: string;
  events: CmdEvent[];
}

/** `cmd.exe <switches> /c <command>` as cmd.exe reads its own command line. */
export function cmdCommandText(commandLine: string): string {
  const m = /^(.*?)\s\/c\s+(.*)$/is.exec(commandLine);
  if (!m) throw new Error(`model: no /c in ${JSON.stringify(commandLine)}`);
  const switches = (m[1] ?? "").toLowerCase().split(/\s+/);
  let command = m[2] ?? "";
  if (switches.includes("/s") && command.startsWith('"')) {
    const last = command.lastIndexOf('"');
    command = command.slice(1, last) + command.slice(last + 1);
  }
  return command;
}

/** Phase 1 in command-line mode (cmd /c), recording every expansion. */
export function percentPhase(text: string, env: CmdEnv): PhaseResult {
  const events: CmdEvent[] = [];
  let out = "";
  let i = 0;
  while (i < text.length) {
    const c = text[i] as string;
    if (c !== "%") {
      out += c;
      i++;
      continue;
    }
    const close = text.indexOf("%", i + 1);
    if (close < 0) {
      out += text.slice(i);
      break;
    }
    const spec = text.slice(i + 1, close);
    const value = expandSpec(spec, env);
    if (value === undefined) {
      out += "%";
      i++;
      continue;
    }
    events.push({ kind: "expansion", spec, at: i });
    out += value;
    i = close + 1;
  }
  return { text: out, events };
}

/** `name`, `name:~start,length` or `name:old=new`; undefined when nothing is expanded. */
function expandSpec(spec: string, env: CmdEnv): string | undefined {
  const colon = spec.indexOf(":");
  const name = colon < 0 ? spec : spec.slice(0, colon);
  if (name === "") return undefined;
  const value = env(name);
  if (value === undefined || colon < 0) return value;
  const modifier = spec.slice(colon + 1);
  const sub = /^~(-?\d*)(?:,(-?\d*))?$/.exec(modifier);
  if (sub) {
    const n = value.length;
    let start = Number(sub[1] || "0");
    if (start < 0) start = Math.max(0, n + start);
    const rest = value.slice(start);
    if (sub[2] === undefined) return rest;
    const len = Number(sub[2] || "0");
    return len < 0 ? rest.slice(0, Math.max(0, rest.length + len)) : rest.slice(0, len);
  }
  const eq = modifier.indexOf("=");
  if (eq > 0) return value.split(modifier.slice(0, eq)).join(modifier.slice(eq + 1));
  return value;
}

/** Phase 2: quotes, carets and operators. */
export function specialPhase(text: string): PhaseResult {
  const events: CmdEvent[] = [];
  let out = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (c === '"') {
      quoted = !quoted;
      out += c;
    } else if (quoted) {
      out += c;
    } else if (c === "^") {
      if (i + 1 < text.length) out += text[++i];
      else events.push({ kind: "operator", char: "^", at: i });
    } else {
      if ("&|<>()".includes(c)) events.push({ kind: "operator", char: c, at: i });
      out += c;
    }
  }
  return { text: out, events };
}

/**
 * cmd.exe's command token and the rest of the line as a batch file sees it in `%*` (leading
 * delimiters removed). The token is quote-aware; its quotes are removed to give the file.
 */
export function splitCommand(line: string): { file: string; rest: string } {
  let i = 0;
  let quoted = false;
  while (i < line.length && (quoted || !/[\s,;=]/.test(line[i] as string))) {
    if (line[i] === '"') quoted = !quoted;
    i++;
  }
  return {
    file: line.slice(0, i).replaceAll('"', ""),
    rest: line.slice(i).replace(/^[\s,;=]+/, ""),
  };
}

/** The MSVCRT split of a whole command line, argv[0] included. */
export function parseCrtCommandLine(line: string, variant: "ucrt" | "legacy"): string[] {
  const argv: string[] = [];
  let i = 0;
  // argv[0]: no backslash processing.
  if (line.startsWith('"')) {
    const end = line.indexOf('"', 1);
    argv.push(end < 0 ? line.slice(1) : line.slice(1, end));
    i = end < 0 ? line.length : end + 1;
  } else {
    while (i < line.length && !/[ \t]/.test(line[i] as string)) i++;
    argv.push(line.slice(0, i));
  }
  let current = "";
  let started = false;
  let quoted = false;
  while (i < line.length) {
    const c = line[i] as string;
    if (!quoted && (c === " " || c === "\t")) {
      if (started) argv.push(current);
      current = "";
      started = false;
      i++;
    } else if (c === "\\") {
      let n = 0;
      while (line[i] === "\\") {
        n++;
        i++;
      }
      if (line[i] === '"') {
        current += "\\".repeat(Math.floor(n / 2));
        if (n % 2 === 1) {
          current += '"';
          i++;
        }
      } else {
        current += "\\".repeat(n);
      }
      started = true;
    } else if (c === '"') {
      started = true;
      if (quoted && line[i + 1] === '"') {
        current += '"';
        i += 2;
        if (variant === "legacy") quoted = false;
      } else {
        quoted = !quoted;
        i++;
      }
    } else {
      current += c;
      started = true;
      i++;
    }
  }
  if (started) argv.push(current);
  return argv;
}

/** What a program started through cmd.exe (and optionally a `%*` shim) receives. */
export interface SimulatedRun {
  /** The file cmd.exe runs (the batch file, or the program itself). */
  file: string;
  /** The program's argv after argv[0] (and after the shim's fixed words), UCRT rules. */
  argv: string[];
  /** The same split with the older `""` rule; must equal `argv`. */
  argvLegacy: string[];
  /** Everything cmd.exe acted on, in both passes. */
  events: CmdEvent[];
}

/**
 * Runs a verbatim `cmd.exe` invocation through the model. With `shimPrefix` (for example
 * `"C:\node.exe" "C:\cli.js"`), the file started is a batch file whose one line is
 * `<shimPrefix> %*`, as npm's cmd-shim writes; the words of the prefix are dropped from argv.
 */
export function simulateCmd(
  cmdArgs: readonly string[],
  env: CmdEnv,
  shimPrefix?: string,
): SimulatedRun {
  const commandLine = ["C:\\Windows\\System32\\cmd.exe", ...cmdArgs].join(" ");
  const first = percentPhase(cmdCommandText(commandLine), env);
  const firstSpecial = specialPhase(first.text);
  const events = [...first.events, ...firstSpecial.events];
  const { file, rest } = splitCommand(firstSpecial.text);
  let programLine = firstSpecial.text;
  let drop = 1;
  if (shimPrefix !== undefined) {
    // Phase 1 of the shim's line replaces %* and does not rescan what it inserted.
    const second = specialPhase(`${shimPrefix} ${rest}`);
    events.push(...second.events);
    programLine = second.text;
    drop = parseCrtCommandLine(shimPrefix, "ucrt").length;
  }
  return {
    file,
    argv: parseCrtCommandLine(programLine, "ucrt").slice(drop),
    argvLegacy: parseCrtCommandLine(programLine, "legacy").slice(drop),
    events,
  };
}
