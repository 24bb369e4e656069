/**
 * What a project's agent (`.ollama-delegate/agents/`) may change about a call. A project can
 * come from anyone (a cloned repository), so its agent may only narrow what the same call
 * without it would get; only the user's own agent files and the call's own arguments widen.
 *
 * Tools. On the claude engine every `allowed_tools` rule is a Claude Code `--allowed-tools`
 * rule, which pre-approves: `Bash` runs any command unasked, `Read`/`Grep`/`Glob` read any file
 * (not only the working directory and add_dirs, which Claude Code reads unasked anyway),
 * `Edit`/`Write` change any path, and a pattern can point anywhere (`Read(//home/**)`). On the
 * native engine a named Bash, Edit or Write is offered in the modes that otherwise get the
 * read-only tools only. No rule of an allow list is safe to take from a project, so:
 * - when the call gives no allowed_tools, the project agent's rules approve nothing: the tools
 *   they name stay shown, every other tool becomes a whole-tool `disallowed_tools` entry, and
 *   what runs unasked is what the call without the agent gets (an empty list stays empty: it
 *   approves nothing);
 * - when the call gives allowed_tools, the result stays within the call's rules, as for any
 *   agent (apply.ts `narrowTools`).
 * A permission_mode that allows more than the user's default is not used either. What is not
 * used is said in the job's reply and by ollama_models; the agent still runs with the rest.
 */
import { permissionRank } from "../settings/narrow.ts";
import type { PermissionMode } from "../settings/types.ts";
import type { Agent } from "./agent.ts";

/** What a project's agent asks for beyond what the same call without it gets. */
export interface ProjectWidening {
  /** Its tool rules, which would pre-approve when the call gives none. */
  tools?: string[];
  /** Its permission_mode, when it allows more than the user's default. */
  mode?: PermissionMode;
}

/** What of `agent` would widen a call that gives neither allowed_tools nor permission_mode. */
export function projectWidening(agent: Agent, userMode: PermissionMode): ProjectWidening {
  if (agent.source !== "project") return {};
  const out: ProjectWidening = {};
  if (agent.tools !== undefined && agent.tools.length > 0) out.tools = [...agent.tools];
  const mode = agent.permissionMode;
  if (mode !== undefined && permissionRank(mode) > permissionRank(userMode)) out.mode = mode;
  return out;
}

/** The tool name of a rule (`Bash(git *)` is Bash); agent.ts lets each entry hold one rule. */
export function ruleName(rule: string): string {
  return /^\s*([A-Za-z][\w-]*)/.exec(rule)?.[1] ?? rule.trim();
}

/**
 * The whole-tool denials that keep a delegate to the tools `rules` name, added to the call's
 * own `disallowed`: `known` is every tool a delegate of either engine can be shown.
 */
export function denyOthers(
  rules: readonly string[],
  known: readonly string[],
  disallowed: readonly string[] | undefined,
): string[] {
  const kept = new Set(rules.map(ruleName));
  const out = [...(disallowed ?? [])];
  for (const name of known) {
    if (!kept.has(name) && !out.includes(name)) out.push(name);
  }
  return out;
}

/** The note a job's reply and ollama_models give for what a project's agent may not set. */
export function wideningNote(
  agent: Agent,
  widening: ProjectWidening,
  userMode: PermissionMode,
  userAgentsDir: string,
): string | undefined {
  const parts: string[] = [];
  if (widening.tools) {
    parts.push(
      `its tools (${widening.tools.join(", ")}) only choose which tools the delegate is shown, ` +
        "and approve nothing it would not run without the agent",
    );
  }
  if (widening.mode) {
    parts.push(
      `its permission_mode "${widening.mode}" is not used (your default "${userMode}" is)`,
    );
  }
  if (parts.length === 0) return undefined;
  return `project agent "${agent.name}" (${agent.path ?? "project"}): ${parts.join("; ")}. ` +
    `Project agents cannot widen tools or the permission mode; put it in ${userAgentsDir}/ ` +
    "to allow";
}
