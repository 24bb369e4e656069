/**
 * What a front end hands the intake (issue 33, item 1): a request in the caller's own terms,
 * each field undefined when the caller leaves it to the settings or the agent, and the host it
 * runs in (its settings, job layer, agents and directory policy). The intake decides the rest
 * the same way for the MCP tools, reviews, the review gate and any terminal command.
 */
import type { Agent } from "../agents/agent.ts";
import type { AgentPolicy } from "../agents/apply.ts";
import type { WorkdirPolicy } from "../guard/workdirs.ts";
import type { Runtime } from "../jobs/runtime.ts";
import type { ResolvedSettings } from "../settings/load.ts";
import type { Effort, EngineName, Isolation, PermissionMode } from "../settings/types.ts";

/** A new session's first turn, as asked; the prompt is read by the front end (inputs.ts). */
export interface TurnRequest {
  /** The working directory as given, read against the host's `baseDir`; its own when absent. */
  cwd?: string | undefined;
  addDirs?: readonly string[] | undefined;
  engine?: EngineName | undefined;
  /** A model name, or "auto" (auto_model.ts). */
  model?: string | undefined;
  backend?: string | undefined;
  files?: readonly string[] | undefined;
  allowedTools?: readonly string[] | undefined;
  disallowedTools?: readonly string[] | undefined;
  appendSystemPrompt?: string | undefined;
  permissionMode?: PermissionMode | undefined;
  maxTurns?: number | undefined;
  effort?: Effort | undefined;
  /** The named agent to run as. */
  agent?: string | undefined;
  verify?: string | readonly string[] | undefined;
  verifyRounds?: number | undefined;
  budgetTokens?: number | undefined;
  budgetUsd?: number | undefined;
  isolation?: Isolation | undefined;
  includeUncommitted?: boolean | undefined;
}

/** What the next turn of a session may change; undefined keeps the session's own. */
export interface FollowupRequest {
  jobId?: string | undefined;
  sessionId?: string | undefined;
  permissionMode?: PermissionMode | undefined;
  allowedTools?: readonly string[] | undefined;
  disallowedTools?: readonly string[] | undefined;
  appendSystemPrompt?: string | undefined;
  maxTurns?: number | undefined;
  effort?: Effort | undefined;
  addDirs?: readonly string[] | undefined;
  verify?: string | readonly string[] | undefined;
  verifyRounds?: number | undefined;
}

/** What the intake needs of the front end that calls it. */
export interface IntakeHost {
  /** The settings in force and what loading them found (problems, the user's own models). */
  resolved: ResolvedSettings;
  /** The job layer and model policy; built at the first request that needs them. */
  runtime(): Promise<Runtime>;
  /** Where relative paths of a request are read, and the cwd of a request that names none. */
  baseDir: string;
  /** Where delegates may work: checked for cwd and add_dirs of every start and follow-up. */
  workdirs: WorkdirPolicy;
  /** The agent of that name in force (the user's, a built-in, the project's), read now. */
  agent(name: string): Promise<Agent>;
  /** What applying an agent needs of the user's policy (agents/apply.ts). */
  agentPolicy(): Promise<AgentPolicy>;
  /** The Claude Code session's project that asked (jobs/unread.ts); none from a terminal. */
  project?: string | undefined;
}
