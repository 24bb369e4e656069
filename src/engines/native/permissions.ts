/**
 * Which tools a native run offers and which calls it refuses. The rules read like Claude
 * Code's `--allowedTools` / `--disallowedTools` and permission modes, so a delegation means
 * the same on both engines. Nobody can answer a prompt in a headless run, so the modes that
 * would ask (manual/default, dontAsk) and plan get the read-only tools only.
 */
import type { PermissionMode } from "../../settings/fields.ts";
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
}

export function toolPolicy(
  all: readonly NativeTool[],
  mode: PermissionMode,
  allowedTools: readonly string[] | undefined,
  disallowedTools: readonly string[] | undefined,
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
    refusal(name, input) {
      if (!names.has(name)) {
        return `Tool "${name}" is not available in this run (permission mode ${mode}` +
          `${allowed ? `, allowed tools ${allowedTools!.join(", ") || "none"}` : ""}). ` +
          `Available: ${[...names].join(", ") || "none"}`;
      }
      const denyPatterns = denied.filter((r) => r.name === name && r.pattern !== undefined)
        .map((r) => r.pattern!);
      const allowPatterns = (allowed ?? []).filter((r) => r.name === name).map((r) => r.pattern);
      // A bare name among the allowed rules allows every call of that tool.
      const allowAll = allowPatterns.length === 0 || allowPatterns.includes(undefined);
      if (name === "Bash") {
        const command = typeof input.command === "string" ? input.command.trim() : "";
        return bashRefusal(command, denyPatterns, allowAll ? [] : allowPatterns as string[]);
      }
      const path = pathOf(input);
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

function bashRefusal(command: string, deny: string[], allow: string[]): string | undefined {
  if (deny.length > 0) {
    // A deny rule must hold for every command of a chain, and a substitution cannot be
    // checked at all, so with deny rules in force it is refused.
    if (SUBSTITUTION.test(command)) {
      return `Command refused: it runs a substitution, which the rules ${
        deny.map((p) => `Bash(${p})`).join(", ")
      } cannot be checked against`;
    }
    const parts = command.split(CHAIN).map((p) => p.trim()).filter(Boolean);
    const hit = deny.find((p) => parts.some((part) => matchesCommand(p, part)));
    if (hit) return `Command refused by the rule Bash(${hit})`;
  }
  if (allow.length > 0 && !allow.some((p) => matchesCommand(p, command))) {
    return `Command refused: only ${allow.map((p) => `Bash(${p})`).join(", ")} may run`;
  }
  return undefined;
}

/** The path a file tool acts on, as the model wrote it, relative and with `/` separators. */
function pathOf(input: Record<string, unknown>): string {
  const raw = typeof input.file_path === "string"
    ? input.file_path
    : typeof input.path === "string"
    ? input.path
    : ".";
  return raw.replace(/\\/g, "/").replace(/^(\.\/)+/, "");
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
