/**
 * A call's arguments with its named agent applied (src/agents/): the agent's preset fills what
 * the call leaves out, and the call may only narrow it.
 */
import { dirname } from "node:path";
import type { Agent } from "../agents/agent.ts";
import { type AgentPolicy, agentPolicyOf, applyAgent } from "../agents/apply.ts";
import { type AgentPlaces, requireAgent } from "../agents/lookup.ts";
import type { RunArgs } from "./run_tool.ts";
import type { ToolDeps } from "./tool_deps.ts";

/**
 * Where this server reads agent files: the project (its own cwd), the user's config dir, and
 * Claude Code's subagent folders of both.
 */
export function agentPlaces(deps: ToolDeps): AgentPlaces {
  return {
    projectDir: deps.serverCwd,
    userConfigDir: dirname(deps.resolved.locations.userFile),
    claudeUserDir: deps.claudeUserDir,
    claudeAgentModels: deps.resolved.settings.claudeAgentModels,
  };
}

/**
 * What applying an agent needs of the user's policy, with the model a call that names none
 * runs on (a project's agent may not move that work to the cloud).
 */
export async function agentPolicy(deps: ToolDeps): Promise<AgentPolicy> {
  const { catalog } = await deps.runtime();
  const defaultModel = await catalog.defaultModel().catch(() => undefined);
  return agentPolicyOf(deps.resolved.settings, agentPlaces(deps).userConfigDir, {
    userModels: deps.resolved.userModels,
    defaultModel,
  });
}

/** The agent a call names, read now (a file edited since the last call counts). */
export function callAgent(deps: ToolDeps, name: string): Promise<Agent> {
  return requireAgent(name, agentPlaces(deps));
}

/**
 * `args` with `agent` applied, and what of a project's agent was not used (for the job's
 * `warning:` lines); throws a DelegateError when the call would widen the agent.
 */
export async function withAgent<A extends Partial<RunArgs>>(
  deps: ToolDeps,
  agent: Agent,
  args: A,
): Promise<{ args: A; notes: string[] }> {
  const applied = applyAgent(agent, {
    engine: args.engine,
    model: args.model,
    allowedTools: args.allowed_tools,
    disallowedTools: args.disallowed_tools,
    permissionMode: args.permission_mode,
    effort: args.effort,
    appendSystemPrompt: args.append_system_prompt,
  }, await agentPolicy(deps));
  return {
    args: {
      ...args,
      engine: applied.engine,
      model: applied.model,
      allowed_tools: applied.allowedTools,
      disallowed_tools: applied.disallowedTools,
      permission_mode: applied.permissionMode,
      effort: applied.effort,
      append_system_prompt: applied.appendSystemPrompt,
    },
    notes: applied.notes,
  };
}
