/**
 * An agent applied to a call: the agent's preset is the widest the job may be, and the call's
 * own parameters may only narrow it (fewer tools, a stricter permission mode). The model and
 * engine still pass the user's policy afterwards like any call's: an agent file cannot widen
 * allowedModels or the delegation mode, which it never touches. A project's agent is held to
 * less (project_limits.ts): it may only narrow what the call would get without it, and its
 * model is used only among the models the user chose.
 */
import { join } from "node:path";
import { DelegateError } from "../errors.ts";
import { permissionRank, type UserModels } from "../settings/narrow.ts";
import {
  DEFAULT_CLAUDE_TOOLS,
  type Effort,
  type EngineName,
  type PermissionMode,
} from "../settings/types.ts";
import type { Agent } from "./agent.ts";
import { denyOthers, projectWidening, wideningNote } from "./project_limits.ts";

/** What a call asks for, in the fields an agent also sets. */
export interface AgentCall {
  engine?: EngineName | undefined;
  model?: string | undefined;
  allowedTools?: readonly string[] | undefined;
  disallowedTools?: readonly string[] | undefined;
  permissionMode?: PermissionMode | undefined;
  effort?: Effort | undefined;
  appendSystemPrompt?: string | undefined;
}

/** What of the user's policy applying an agent needs. */
export interface AgentPolicy {
  /** The user's defaultPermissionMode: what a call that names no mode gets. */
  userMode: PermissionMode;
  /** Every tool a delegate of either engine can be shown (claudeTools and the native set). */
  knownTools: readonly string[];
  /** The user's agents folder, named in the note on what a project's agent may not set. */
  userAgentsDir: string;
  /** The models the user chose (user file, environment): a project's agent picks among them. */
  userModels: UserModels;
  /** The model a call that names none runs on, when known (project_limits.ts). */
  defaultModel?: string | undefined;
}

/**
 * The policy of a user's settings: the native engine's tools are the default claude set's names
 * (tests/agents/project_agent_test.ts holds them to it), so the two lists together name every
 * tool a delegate can be shown.
 */
export function agentPolicyOf(
  settings: { defaultPermissionMode: PermissionMode; claudeTools: readonly string[] },
  userConfigDir: string,
  models: { userModels: UserModels; defaultModel?: string | undefined },
): AgentPolicy {
  return {
    userMode: settings.defaultPermissionMode,
    knownTools: [...new Set([...settings.claudeTools, ...DEFAULT_CLAUDE_TOOLS])],
    userAgentsDir: join(userConfigDir, "agents"),
    userModels: models.userModels,
    ...(models.defaultModel !== undefined ? { defaultModel: models.defaultModel } : {}),
  };
}

/** The call's fields once the agent is applied; undefined = the usual default. */
export interface AppliedAgent {
  engine?: EngineName;
  model?: string;
  allowedTools?: string[];
  disallowedTools?: string[];
  permissionMode?: PermissionMode;
  effort?: Effort;
  appendSystemPrompt: string;
  /** What of a project's agent was not used, and why; empty otherwise. */
  notes: string[];
}

interface Rule {
  text: string;
  name: string;
  pattern?: string;
}

function parse(text: string): Rule {
  const m = /^\s*([A-Za-z][\w-]*)\s*(?:\((.*)\))?\s*$/.exec(text);
  if (!m) return { text: text.trim(), name: text.trim() };
  return m[2] !== undefined
    ? { text: `${m[1]}(${m[2].trim()})`, name: m[1]!, pattern: m[2].trim() }
    : { text: m[1]!, name: m[1]! };
}

/**
 * The call's tool rules kept within the agent's: a rule for a tool the agent allows whole
 * stays; a whole tool the agent allows only with patterns becomes the agent's rules for it;
 * a pattern the agent does not list itself is refused (patterns cannot be intersected).
 */
export function narrowTools(
  agent: Agent,
  call: readonly string[] | undefined,
): string[] | undefined {
  if (agent.tools === undefined) return call === undefined ? undefined : [...call];
  if (call === undefined) return [...agent.tools];
  const own = agent.tools.map(parse);
  const out: string[] = [];
  const add = (rule: string) => {
    if (!out.includes(rule)) out.push(rule);
  };
  for (const text of call) {
    const c = parse(text);
    const same = own.filter((r) => r.name === c.name);
    if (same.some((r) => r.pattern === undefined)) add(c.text);
    else if (c.pattern === undefined && same.length > 0) same.forEach((r) => add(r.text));
    else if (same.some((r) => r.text === c.text)) add(c.text);
    else {
      throw new DelegateError(
        `Cannot start job: allowed_tools "${text}" is not among agent "${agent.name}"'s tools ` +
          `(${agent.tools.join(", ") || "none"}); a call may only narrow them. Leave it out, ` +
          "or use another agent",
      );
    }
  }
  return out;
}

/**
 * Applies `agent` to `call`. A project's agent may not allow more than the call would get
 * without it (project_limits.ts): its tool rules then only choose the tools shown, and a
 * permission mode wider than the user's default is not used; both are said in `notes`.
 */
export function applyAgent(agent: Agent, call: AgentCall, policy: AgentPolicy): AppliedAgent {
  const refuse = (what: string, asked: string, own: string): never => {
    throw new DelegateError(
      `Cannot start job: agent "${agent.name}" sets ${what} "${own}", and the call asks for ` +
        `"${asked}". Leave ${what} out, or use another agent`,
    );
  };
  if (call.engine !== undefined && agent.engine !== undefined && call.engine !== agent.engine) {
    refuse("engine", call.engine, agent.engine);
  }
  const wide = projectWidening(agent, policy);
  // A project agent's model that is not used does not bind the call either.
  const agentModel = wide.model ? undefined : agent.model;
  if (call.model !== undefined && agentModel !== undefined && call.model !== agentModel) {
    refuse("model", call.model, agentModel);
  }
  // What the call itself sets keeps its power; the agent's excess only matters where it fills in.
  const dropped = {
    ...(wide.tools && call.allowedTools === undefined ? { tools: wide.tools } : {}),
    ...(wide.mode && call.permissionMode === undefined ? { mode: wide.mode } : {}),
    ...(wide.model && call.model === undefined ? { model: wide.model } : {}),
  };
  const own = wide.mode ? undefined : agent.permissionMode;
  if (call.permissionMode !== undefined && own !== undefined) {
    if (permissionRank(call.permissionMode) > permissionRank(own)) {
      throw new DelegateError(
        `Cannot start job: agent "${agent.name}" runs in permission mode "${own}", and ` +
          `permission_mode "${call.permissionMode}" allows more; a call may only narrow it ` +
          "(plan < manual, default, dontAsk < acceptEdits < auto < bypassPermissions)",
      );
    }
  }
  const engine = call.engine ?? agent.engine;
  const model = call.model ?? agentModel;
  // Tools that only choose what the delegate is shown (a Claude Code subagent's, or a project
  // agent's that would pre-approve): the others are denied, nothing is approved.
  const shownOnly = dropped.tools ??
    (agent.toolsShownOnly && call.allowedTools === undefined ? agent.tools : undefined);
  const allowedTools = shownOnly ? undefined : narrowTools(agent, call.allowedTools);
  const denied = shownOnly
    ? denyOthers(shownOnly, policy.knownTools, call.disallowedTools)
    : call.disallowedTools && [...call.disallowedTools];
  // A Claude Code subagent's own `disallowedTools` hold whatever the call says.
  const disallowedTools = agent.disallowedTools?.length
    ? [...new Set([...(denied ?? []), ...agent.disallowedTools])]
    : denied;
  const permissionMode = call.permissionMode ?? own;
  const effort = call.effort ?? agent.effort;
  const extra = call.appendSystemPrompt?.trim();
  const note = wideningNote(agent, dropped, policy.userMode, policy.userAgentsDir);
  return {
    ...(engine !== undefined ? { engine } : {}),
    ...(model !== undefined ? { model } : {}),
    ...(allowedTools !== undefined ? { allowedTools } : {}),
    ...(disallowedTools !== undefined ? { disallowedTools } : {}),
    ...(permissionMode !== undefined ? { permissionMode } : {}),
    ...(effort !== undefined ? { effort } : {}),
    // The caller's addition comes after the agent's, so it reads as the task's own note.
    appendSystemPrompt: extra ? `${agent.prompt}\n\n${extra}` : agent.prompt,
    notes: note ? [note] : [],
  };
}
