/**
 * Claude Code's Bash permission rules (`Bash(git *)`, `Bash(rm:*)`) applied to a command: which
 * commands a pattern matches, and why a command is refused under allow and deny rules. A
 * chained command must match as a whole, and with deny rules in force anything that hides the
 * real command from them is refused.
 */
import { normaliseCommand, shellWords } from "./shell_words.ts";

/** Separators after which a shell starts another command. */
const CHAIN = /;|&&|\|\||\||&|\n/;
/** Constructs that run a command inside another one. */
const SUBSTITUTION = /`|\$\(|[<>]\(/;

/** Programs that run another command given as arguments: a deny rule cannot see through them. */
const WRAPPERS = new Set([
  "eval",
  "exec",
  "command",
  "builtin",
  "env",
  "xargs",
  "sh",
  "bash",
  "dash",
  "zsh",
  "ksh",
  "busybox",
  "nohup",
  "timeout",
  "nice",
  "ionice",
  "stdbuf",
  "setsid",
  "sudo",
  "su",
  "doas",
  "find",
  "parallel",
  "watch",
  "script",
  "time",
]);

/** A shell function definition (`f() { ...; }`): its body runs later, under another name. */
const FUNCTION_DEFINITION =
  /(?:^|[\s;&|(){}])(?:[\w.:-]+\s*\(\s*\)|function\s+[\w.:-]+\s*(?:\(\s*\)\s*)?[{(])/;

/**
 * Deny rules are a guard rail, not a sandbox (the sandbox is bubblewrap): with deny rules in
 * force, anything that hides the real command from them (substitutions, variable expansion,
 * brace expansion, a program named by a glob, `eval`, `sh -c`, `env`, function definitions...)
 * is refused, and each command of a chain is checked alone, as the shell would read it.
 */
export function bashRefusal(command: string, deny: string[], allow: string[]): string | undefined {
  if (deny.length > 0) {
    const rules = deny.map((p) => `Bash(${p})`).join(", ");
    const unchecked = (what: string) =>
      `Command refused: it uses ${what}, which the rules ${rules} cannot be checked against. ` +
      "Write the command out literally";
    // `$name`, `${...}`, `$1`, `$@`, `$'...'` (ANSI-C quoting), `$"..."`: all expand.
    if (SUBSTITUTION.test(command) || /\$[A-Za-z_{'"0-9@*#?$!-]|\\\n/.test(command)) {
      return unchecked("a substitution or expansion");
    }
    if (FUNCTION_DEFINITION.test(command)) return unchecked("a function definition");
    const parts = command.split(CHAIN).map((p) => p.trim()).filter(Boolean);
    for (const part of parts) {
      const shell = shellWords(part);
      if (shell.braces) return unchecked("brace expansion");
      if (shell.globbedProgram) return unchecked("a pattern as the program name");
      const plain = normaliseCommand(part);
      const program = plain.split(" ")[0] ?? "";
      if (WRAPPERS.has(program)) {
        return `Command refused: "${program}" runs another command, which the rules ${rules} ` +
          `cannot see. Run the command directly`;
      }
      const hit = deny.find((p) => matchesCommand(p, part) || matchesCommand(p, plain));
      if (hit) return `Command refused by the rule Bash(${hit})`;
    }
  }
  if (allow.length > 0 && !allow.some((p) => matchesCommand(p, command))) {
    return `Command refused: only ${allow.map((p) => `Bash(${p})`).join(", ")} may run`;
  }
  return undefined;
}

/**
 * Claude Code's Bash rule patterns: `*` matches anything, `git:*` is the old prefix form.
 * A command chained with ; && || | or $( ) must match as a whole and may not smuggle a
 * second command past a prefix rule, so chained commands only match a bare `*`.
 */
export function matchesCommand(pattern: string, command: string): boolean {
  const p = pattern.replace(/:\*$/, " *");
  if (p === "*") return true;
  if (CHAIN.test(command) || SUBSTITUTION.test(command)) return false;
  const regex = new RegExp(
    "^" + p.split("*").map((s) => s.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*") + "$",
  );
  return regex.test(command) || (p.endsWith(" *") && command === p.slice(0, -2));
}
