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
 * A permission_mode that allows more than the user's default is not used either.
 *
 * Models. Its `model` and `fallback` models are used only where settings/narrow.ts
 * `projectModelRefusal` allows: among the models the user chose, and never moving work from a
 * local model to a cloud one (issue 28, item 7). Otherwise the job runs on the model the call
 * would get without the agent, and the other fallbacks are left out.
 *
 * What is not used is said in the job's reply and by ollama_models; the agent still runs with
 * the rest.
 */
import { hasCloudSuffix } from "../settings/model_names.ts";
import { permissionRank, projectModelRefusal, type UserModels } from "../settings/narrow.ts";
import type { PermissionMode } from "../settings/types.ts";
import type { Agent } from "./agent.ts";

/** What of the user's policy a project's agent is held to. */
export interface ProjectBounds {
  /** The user's defaultPermissionMode. */
  userMode: PermissionMode;
  /** The models the user chose (user file and environment). */
  userModels: UserModels;
  /**
   * The model a call that names none runs on, when it is known: a project's agent may not move
   * that work from a local model to a cloud one.
   */
  defaultModel?: string | undefined;
}

/** What a project's agent asks for beyond what the same call without it gets. */
export interface ProjectWidening {
  /** Its tool rules, which would pre-approve when the call gives none. */
  tools?: string[];
  /** Its permission_mode, when it allows more than the user's default. */
  mode?: PermissionMode;
  /** Its model, when it may not take the job's work, and why. */
  model?: { name: string; why: string };
}

/** What of `agent` would widen a call that gives neither allowed_tools nor permission_mode. */
export function projectWidening(agent: Agent, bounds: ProjectBounds): ProjectWidening {
  if (agent.source !== "project") return {};
  const out: ProjectWidening = {};
  // Tools that only choose what is shown (a Claude Code subagent's) approve nothing anyway.
  if (agent.tools !== undefined && agent.tools.length > 0 && !agent.toolsShownOnly) {
    out.tools = [...agent.tools];
  }
  const mode = agent.permissionMode;
  if (mode !== undefined && permissionRank(mode) > permissionRank(bounds.userMode)) {
    out.mode = mode;
  }
  if (agent.model !== undefined) {
    const replacesCloud = bounds.defaultModel !== undefined && hasCloudSuffix(bounds.defaultModel);
    // A model the user's own claudeAgentModels gives it is one the user chose; the move from a
    // local model to a cloud one is still the project's doing, and refused.
    const user = agent.modelFromUserMap
      ? {
        ...bounds.userModels,
        allowedModels: [...bounds.userModels.allowedModels, agent.model],
      }
      : bounds.userModels;
    const why = projectModelRefusal(agent.model, user, replacesCloud);
    if (why) out.model = { name: agent.model, why };
  }
  return out;
}

/**
 * The fallback models of `agent` a job on `model` may move to: all of a user's or built-in
 * agent's, and of a project's only those projectModelRefusal allows in place of `model`; the
 * note says which were left out and why.
 */
export function projectFallback(
  agent: Agent,
  model: string,
  userModels: UserModels,
): { kept: string[]; note?: string } {
  const all = agent.fallback ?? [];
  if (agent.source !== "project") return { kept: [...all] };
  const kept: string[] = [];
  const refused: string[] = [];
  for (const m of all) {
    const why = projectModelRefusal(m, userModels, hasCloudSuffix(model));
    if (why) refused.push(`"${m}" (${why})`);
    else kept.push(m);
  }
  if (refused.length === 0) return { kept };
  return {
    kept,
    note: `project agent "${agent.name}" (${agent.path ?? "project"}): its fallback ` +
      `${refused.length === 1 ? "model" : "models"} ${refused.join(", ")} left out. A project ` +
      `agent may not move work to a model you did not choose, nor from a local model to a ` +
      "cloud one",
  };
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
  if (widening.model) {
    parts.push(
      `its model "${widening.model.name}" is not used (${widening.model.why}); the job runs on ` +
        "the model the call gets without the agent",
    );
  }
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
    "Project agents cannot widen tools or the permission mode, nor move work to another " +
    `model; put it in ${userAgentsDir}/ to allow`;
}
