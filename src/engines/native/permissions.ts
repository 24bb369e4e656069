/**
 * Which tools a native run offers and which calls it refuses. The rules read like Claude
 * Code's `--allowedTools` / `--disallowedTools` and permission modes, so a delegation means
 * the same on both engines. Nobody can answer a prompt in a headless run, so the modes that
 * would ask (manual/default, dontAsk) and plan get the read-only tools only.
 */
import type { PermissionMode } from "../../settings/fields.ts";
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
      if (name !== "Bash") return undefined;
      const command = typeof input.command === "string" ? input.command.trim() : "";
      const deny = denied.find((r) =>
        r.name === "Bash" && r.pattern !== undefined &&
        matchesCommand(r.pattern, command)
      );
      if (deny) return `Command refused by the rule Bash(${deny.pattern})`;
      const patterns = (allowed ?? []).filter((r) => r.name === "Bash").map((r) => r.pattern);
      if (patterns.length > 0 && !patterns.includes(undefined)) {
        if (!patterns.some((p) => matchesCommand(p!, command))) {
          return `Command refused: only ${patterns.map((p) => `Bash(${p})`).join(", ")} may run`;
        }
      }
      return undefined;
    },
  };
}

/**
 * Claude Code's Bash rule patterns: `*` matches anything, `git:*` is the old prefix form.
 * A command chained with ; && || | or $( ) must match as a whole and may not smuggle a
 * second command past a prefix rule, so chained commands only match a bare `*`.
 */
export function matchesCommand(pattern: string, command: string): boolean {
  const p = pattern.replace(/:\*$/, " *");
  if (p === "*") return true;
  if (/[;&|`\n]|\$\(/.test(command)) return false;
  const regex = new RegExp(
    "^" + p.split("*").map((s) => s.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*") + "$",
  );
  return regex.test(command) || (p.endsWith(" *") && command === p.slice(0, -2));
}
