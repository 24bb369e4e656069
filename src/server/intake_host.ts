/**
 * This server as the intake's host (src/intake/): its settings, its job layer, its directory
 * policy, and where it reads agent files.
 */
import { dirname } from "node:path";
import type { AgentPolicy } from "../agents/apply.ts";
import type { AgentPlaces } from "../agents/lookup.ts";
import { intakeHost } from "../intake/host.ts";
import type { IntakeHost } from "../intake/turn_request.ts";
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
 * The intake's host for a tool call: relative paths and a call without cwd use the server's
 * own directory, and the jobs are unread in this session's project until their result reaches
 * the orchestrator (jobs/unread.ts).
 */
export function intakeOf(deps: ToolDeps): IntakeHost {
  return intakeHost({
    resolved: deps.resolved,
    runtime: () => deps.runtime(),
    baseDir: deps.serverCwd,
    workdirs: deps.workdirs,
    places: agentPlaces(deps),
    project: deps.serverCwd,
  });
}

/** What applying an agent needs of the user's policy, as a start would use it. */
export function agentPolicy(deps: ToolDeps): Promise<AgentPolicy> {
  return intakeOf(deps).agentPolicy();
}
