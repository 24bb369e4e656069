/**
 * Which tools a native run offers and which calls it refuses. The rules read like Claude
 * Code's `--allowedTools` / `--disallowedTools` and permission modes, so a delegation means
 * the same on both engines. Nobody can answer a prompt in a headless run, so the modes that
 * would ask (manual/default, dontAsk) and plan get the read-only tools only.
 */
import { posix } from "node:path";
import type { PermissionMode } from "../../settings/types.ts";
import { globToRegExp } from "./tools/glob_pattern.ts";
import type { NativeTool } from "./tools/types.ts";

/** A rule: `Name` or `Name(pattern)`; patterns apply to Bash commands (`git *`). */
export interface ToolRule {
  name: string;
  pattern?: string;
}

export function parseRule(text: string): ToolRule {
  const m = /^\s*([A-Za-z][\w-]*)\s*(?:\((.*)\))?\s*$/.exec(text);
  if (!m) return { name: text.trim() };
  return m[2] !== undefined ? { name: m[1]!, pattern: m[2].trim() } : { name: m[1]! };
}

const READ_ONLY_MODES: ReadonlySet<PermissionMode> = new Set([
  "plan",
  "manual",
  "default",
  "dontAsk",
]);

export interface ToolPolicy {
  /** The tools offered to the model, in order. */
  tools: NativeTool[];
  /** Why a call is refused, or undefined when it may run. */
  refusal(name: string, input: Record<string, unknown>): string | undefined;
  /**
   * The path rules again, on a path as the file tools resolved it (symlinks followed), for every
   * directory on the way (final=false: deny rules only) and the file itself: a symlink `cfg`
   * to `secrets` must not open what `Read(secrets/**)` closes. Undefined when allowed.
   */
  pathRefusal(tool: string, real: string, final: boolean): string | undefined;
}

/**
 * Path rules name a family of tools, as in Claude Code: `Edit(...)` rules cover every tool that
 * changes files, `Read(...)` rules every tool that reads them.
 */
const FAMILY: Record<string, readonly string[]> = {
  Edit: ["Edit", "Write"],
  Write: ["Edit", "Write"],
  Read: ["Read", "Glob", "Grep"],
};
const covers = (ruleName: string, tool: string) =>
  ruleName === tool || (FAMILY[ruleName]?.includes(tool) ?? false);

export function toolPolicy(
  all: readonly NativeTool[],
  mode: PermissionMode,
  allowedTools: readonly string[] | undefined,
  disallowedTools: readonly string[] | undefined,
  /** The working directory, so that an absolute path inside it meets relative rules. */
  cwd = "",
): ToolPolicy {
  const allowed = allowedTools?.map(parseRule);
  const denied = (disallowedTools ?? []).map(parseRule);
  const readOnlyMode = READ_ONLY_MODES.has(mode);
  const explicitlyAllowed = (name: string) => allowed?.some((r) => r.name === name) ?? false;
  const offered = all.filter((tool) => {
    if (denied.some((r) => r.name === tool.name && r.pattern === undefined)) return false;
    if (allowed !== undefined && !explicitlyAllowed(tool.name)) return false;
    if (!readOnlyMode || tool.readOnly) return true;
    // manual/default/dontAsk: a tool the caller pre-approved by name runs without asking, as in
    // Claude Code; plan never changes anything.
    return mode !== "plan" && explicitlyAllowed(tool.name);
  });
  const names = new Set<string>(offered.map((t) => t.name));
  return {
    tools: offered,
    pathRefusal(tool, real, final) {
      const path = pathOf({ file_path: real }, cwd);
      const deny = denied.find((r) =>
        r.pattern !== undefined && r.name !== "Bash" && covers(r.name, tool) &&
        matchesPath(r.pattern, path)
      );
      if (deny) return `"${path}" is refused by the rule ${deny.name}(${deny.pattern})`;
      if (!final) return undefined;
      const allow = (allowed ?? []).filter((r) => r.name === tool);
      if (allow.length === 0 || allow.some((r) => r.pattern === undefined)) return undefined;
      if (allow.some((r) => matchesPath(r.pattern!, path))) return undefined;
      return `"${path}" is not among the paths ${
        allow.map((r) => `${r.name}(${r.pattern})`).join(", ")
      } allows`;
    },
    refusal(name, input) {
      if (!names.has(name)) {
        return `Tool "${name}" is not available in this run (permission mode ${mode}` +
          `${allowed ? `, allowed tools ${allowedTools!.join(", ") || "none"}` : ""}). ` +
          `Available: ${[...names].join(", ") || "none"}`;
      }
      const denyPatterns = denied.filter((r) =>
        r.pattern !== undefined && (name === "Bash" ? r.name === "Bash" : covers(r.name, name))
      ).map((r) => r.pattern!);
      const allowPatterns = (allowed ?? []).filter((r) => r.name === name).map((r) => r.pattern);
      // A bare name among the allowed rules allows every call of that tool.
      const allowAll = allowPatterns.length === 0 || allowPatterns.includes(undefined);
      if (name === "Bash") {
        const command = typeof input.command === "string" ? input.command.trim() : "";
        return bashRefusal(command, denyPatterns, allowAll ? [] : allowPatterns as string[]);
      }
      const path = pathOf(input, cwd);
      const deny = denyPatterns.find((p) => matchesPath(p, path));
      if (deny) return `Refused by the rule ${name}(${deny})`;
      if (!allowAll && !allowPatterns.some((p) => matchesPath(p!, path))) {
        return `Refused: only ${allowPatterns.map((p) => `${name}(${p})`).join(", ")} may run`;
      }
      return undefined;
    },
  };
}

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
const KEYWORDS = new Set(["then", "do", "else", "elif", "if", "while", "until", "!", "{", "}"]);

/** One command's words after the shell's quote removal, and what in them would expand. */
export interface ShellWords {
  words: string[];
  /** Unquoted brace expansion (`{r,}m`, `{a..z}`), which builds words at run time. */
  braces: boolean;
  /** Unquoted glob characters in the first word: the program's name is a pattern. */
  globbedProgram: boolean;
}

/**
 * Splits a command into words as a POSIX shell does, removing quotes and backslashes, so that
 * `r\m`, `"r"m`, `'r'm` and `r""m` all read `rm`, as the shell runs them. Each word also keeps
 * a skeleton with quoted characters blanked out, to see what the shell would expand.
 */
export function shellWords(command: string): ShellWords {
  const words: string[] = [];
  const skeletons: string[] = [];
  let word = "";
  let skeleton = "";
  let inWord = false;
  const end = () => {
    if (inWord) {
      words.push(word);
      skeletons.push(skeleton);
    }
    [word, skeleton, inWord] = ["", "", false];
  };
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!;
    if (c === "\\") {
      if (i + 1 < command.length) word += command[++i];
      skeleton += "_";
      inWord = true;
    } else if (c === "'") {
      const close = command.indexOf("'", i + 1);
      const stop = close === -1 ? command.length : close;
      word += command.slice(i + 1, stop);
      skeleton += "_".repeat(stop - i - 1);
      i = stop;
      inWord = true;
    } else if (c === '"') {
      for (i++; i < command.length && command[i] !== '"'; i++) {
        // Inside double quotes a backslash quotes only these characters.
        if (command[i] === "\\" && i + 1 < command.length && '"\\$`\n'.includes(command[i + 1]!)) {
          i++;
        }
        word += command[i];
        skeleton += "_";
      }
      inWord = true;
    } else if (/\s/.test(c)) {
      end();
    } else {
      word += c;
      skeleton += c;
      inWord = true;
    }
  }
  end();
  return {
    words,
    braces: skeletons.some((s) => /\{[^{}]*(?:,|\.\.)[^{}]*\}/.test(s)),
    globbedProgram: /[*?]|\[.*\]/.test(skeletons.find((_, i) => !isPrefixWord(words[i]!)) ?? ""),
  };
}

/** Words before the program: keywords, grouping and `VAR=value` assignments. */
function isPrefixWord(word: string): boolean {
  return KEYWORDS.has(word) || /^[({]+$/.test(word) || /^[A-Za-z_][A-Za-z0-9_]*=/.test(word);
}

/**
 * One command of a chain as a shell would run it: quotes removed, grouping, keywords and
 * `VAR=value` prefixes stripped, the program reduced to its name (`/bin/rm` is `rm`).
 */
export function normaliseCommand(part: string): string {
  const words = shellWords(part).words;
  let i = 0;
  while (i < words.length && isPrefixWord(words[i]!)) i++;
  const [first = "", ...args] = words.slice(i);
  const name = first.replace(/^[({]+/, "").split("/").at(-1) ?? first;
  return [name, ...args].join(" ").trim();
}

/** A shell function definition (`f() { ...; }`): its body runs later, under another name. */
const FUNCTION_DEFINITION =
  /(?:^|[\s;&|(){}])(?:[\w.:-]+\s*\(\s*\)|function\s+[\w.:-]+\s*(?:\(\s*\)\s*)?[{(])/;

/**
 * Deny rules are a guard rail, not a sandbox (the sandbox is bubblewrap): with deny rules in
 * force, anything that hides the real command from them (substitutions, variable expansion,
 * brace expansion, a program named by a glob, `eval`, `sh -c`, `env`, function definitions...)
 * is refused, and each command of a chain is checked alone, as the shell would read it.
 */
function bashRefusal(command: string, deny: string[], allow: string[]): string | undefined {
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
 * The path a file tool acts on, relative to cwd when inside it, normalised, with `/`
 * separators, so `/abs/cwd/secrets/k`, `./secrets//k` and `secrets/k` meet the same rules.
 */
function pathOf(input: Record<string, unknown>, cwd: string): string {
  const raw = typeof input.file_path === "string"
    ? input.file_path
    : typeof input.path === "string"
    ? input.path
    : ".";
  let path = posix.normalize(raw.replace(/\\/g, "/"));
  const base = cwd.replace(/\\/g, "/").replace(/\/+$/, "");
  if (base && (path === base || path.startsWith(base + "/"))) {
    path = path === base ? "." : path.slice(base.length + 1);
  }
  return path.replace(/^(\.\/)+/, "");
}

/**
 * Claude Code's path rules for file tools (`Edit(.env)`, `Write(secrets/**)`): gitignore-like
 * globs, relative to the working directory. `dir/**` also matches `dir` itself.
 */
export function matchesPath(pattern: string, path: string): boolean {
  const p = pattern.replace(/^(\.\/)+/, "");
  if (p === "*" || p === "**") return true;
  if (path === p) return true;
  if (p.endsWith("/**") && (path === p.slice(0, -3) || path.startsWith(p.slice(0, -2)))) {
    return true;
  }
  // A pattern without a slash matches the name at any depth, as in .gitignore.
  const target = p.includes("/") ? path : path.split("/").at(-1) ?? path;
  return globToRegExp(p).test(target);
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
