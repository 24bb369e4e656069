/**
 * Which tools a native run offers and which calls it refuses. The rules read like Claude
 * Code's `--allowedTools` / `--disallowedTools` and permission modes, so a delegation means
 * the same on both engines. Nobody can answer a prompt in a headless run, so the modes that
 * would ask (manual/default, dontAsk) and plan get the read-only tools only; unless a person
 * can be asked (issue 31, item 3): then manual/default also offers the tools that would ask,
 * and a call its allow rules or mode withhold is put to the person (`askFor`), never one a
 * deny rule refuses.
 *
 * How Bash rules match a command is in bash_rules.ts, how path rules match a file in
 * path_rules.ts; this module decides what is offered and which rules apply to a call.
 */
import { isEditingMode, type PermissionMode } from "../../settings/types.ts";
import { bashRefusal } from "./bash_rules.ts";
import { matchesPath, pathOf } from "./path_rules.ts";
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

export interface ToolPolicy {
  /** The tools offered to the model, in order. */
  tools: NativeTool[];
  /** Why a call is refused, or undefined when it may run. */
  refusal(name: string, input: Record<string, unknown>): string | undefined;
  /**
   * Why a refused call may be put to the person (the mode or an allow rule withholds it), or
   * undefined when no answer could allow it (a deny rule, a tool not offered) or it is not
   * refused. Only when the policy was made with a person to ask.
   */
  askFor(name: string, input: Record<string, unknown>): string | undefined;
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

/** When a person can be asked: which tools are offered only because of it. */
export interface AskingOptions {
  /** A person can be asked now (the job's sink can ask). */
  asking: boolean;
  /** Tools offered only to be asked about (Bash when its commands would run unconfined). */
  askFor?: readonly string[];
  /** Why those need asking, for the question. */
  askWhy?: string;
}

export function toolPolicy(
  all: readonly NativeTool[],
  mode: PermissionMode,
  allowedTools: readonly string[] | undefined,
  disallowedTools: readonly string[] | undefined,
  /** The working directory, so that an absolute path inside it meets relative rules. */
  cwd = "",
  asking: AskingOptions = { asking: false },
): ToolPolicy {
  const allowed = allowedTools?.map(parseRule);
  const denied = (disallowedTools ?? []).map(parseRule);
  const readOnlyMode = !isEditingMode(mode);
  // Claude Code's manual mode asks for what it does not allow; dontAsk and plan never ask.
  const asksInMode = asking.asking && (mode === "manual" || mode === "default");
  const explicitlyAllowed = (name: string) => allowed?.some((r) => r.name === name) ?? false;
  /** Tools offered only to be put to the person, with why. */
  const needsYes = new Map<string, string>(
    asking.asking
      ? (asking.askFor ?? []).map((t) => [t, asking.askWhy ?? "it needs approval"])
      : [],
  );
  const offered = all.filter((tool) => {
    if (denied.some((r) => r.name === tool.name && r.pattern === undefined)) return false;
    if (allowed !== undefined && !explicitlyAllowed(tool.name)) return false;
    if (!readOnlyMode || tool.readOnly) return true;
    // manual/default/dontAsk: a tool the caller pre-approved by name runs without asking, as in
    // Claude Code; plan never changes anything.
    if (mode !== "plan" && explicitlyAllowed(tool.name)) return true;
    if (asksInMode) needsYes.set(tool.name, `permission mode ${mode}`);
    return asksInMode;
  });
  const names = new Set<string>(offered.map((t) => t.name));
  /** The deny and allow patterns that apply to a call of `name`. */
  const withheld = (name: string) => {
    const denyPatterns = denied.filter((r) =>
      r.pattern !== undefined && (name === "Bash" ? r.name === "Bash" : covers(r.name, name))
    ).map((r) => r.pattern!);
    const allowPatterns = (allowed ?? []).filter((r) => r.name === name).map((r) => r.pattern);
    // A bare name among the allowed rules allows every call of that tool.
    const allowAll = allowPatterns.length === 0 || allowPatterns.includes(undefined);
    return { denyPatterns, allowPatterns, allowAll };
  };
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
      const { denyPatterns, allowPatterns, allowAll } = withheld(name);
      if (name === "Bash") {
        const command = typeof input.command === "string" ? input.command.trim() : "";
        const why = bashRefusal(command, denyPatterns, allowAll ? [] : allowPatterns as string[]);
        if (why || !needsYes.has(name)) return why;
        return `Bash needs the person's approval here (${needsYes.get(name)})`;
      }
      const path = pathOf(input, cwd);
      const deny = denyPatterns.find((p) => matchesPath(p, path));
      if (deny) return `Refused by the rule ${name}(${deny})`;
      if (!allowAll && !allowPatterns.some((p) => matchesPath(p!, path))) {
        return `Refused: only ${allowPatterns.map((p) => `${name}(${p})`).join(", ")} may run`;
      }
      if (needsYes.has(name)) {
        return `${name} needs the person's approval here (${needsYes.get(name)})`;
      }
      return undefined;
    },
    askFor(name, input) {
      if (!asking.asking || !names.has(name)) return undefined;
      const { denyPatterns, allowPatterns, allowAll } = withheld(name);
      if (name === "Bash") {
        const command = typeof input.command === "string" ? input.command.trim() : "";
        // A deny rule, or a command that hides what it runs, is refused whatever the answer.
        if (bashRefusal(command, denyPatterns, [])) return undefined;
        if (needsYes.has(name)) return needsYes.get(name);
        if (!allowAll && bashRefusal(command, [], allowPatterns as string[])) {
          return `not among allowed_tools ${allowPatterns.map((p) => `Bash(${p})`).join(", ")}`;
        }
        return undefined;
      }
      const path = pathOf(input, cwd);
      if (denyPatterns.some((p) => matchesPath(p, path))) return undefined;
      if (needsYes.has(name)) return needsYes.get(name);
      if (!allowAll && !allowPatterns.some((p) => matchesPath(p!, path))) {
        return `not among allowed_tools ${allowPatterns.map((p) => `${name}(${p})`).join(", ")}`;
      }
      return undefined;
    },
  };
}
