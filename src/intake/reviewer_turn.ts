/**
 * A reviewer's turn decided (review/start.ts asks, for delegate_review, `ollama-delegate
 * review` and the review gate): the agent applied within the review's own limits, the model
 * chosen as a reviewer's, and the job's fields filled from the settings as for any turn. A
 * review runs where its diff is, read-only: no fallback models, checks, worktree or files.
 */
import type { Agent } from "../agents/agent.ts";
import { type AppliedAgent, applyAgent } from "../agents/apply.ts";
import type { NewTurn } from "../jobs/manager.ts";
import type { EngineName, PermissionMode } from "../settings/types.ts";
import type { IntakeHost } from "./turn_request.ts";

export interface ReviewerRequest {
  agent: string;
  model?: string | undefined;
  engine?: EngineName | undefined;
  /** The repository's directory, already allowed by the front end. */
  cwd: string;
  /** What the review lets this agent use: its tools cut down, its mode capped. */
  limits(agent: Agent): {
    allowedTools: string[];
    disallowedTools: string[];
    permissionMode: PermissionMode;
  };
}

export interface ReviewerTurn {
  agent: Agent;
  /** The job's fields but the prompt, which the review writes once the diff is fitted. */
  turn: Omit<NewTurn, "prompt">;
}

export async function reviewerTurn(host: IntakeHost, req: ReviewerRequest): Promise<ReviewerTurn> {
  const s = host.resolved.settings;
  const agent = await host.agent(req.agent);
  const applied: AppliedAgent = applyAgent(agent, {
    engine: req.engine,
    model: req.model,
    ...req.limits(agent),
  }, await host.agentPolicy());
  const engine = applied.engine ?? s.defaultEngine;
  const { models } = await host.runtime();
  const target = await models.choose({
    engine,
    model: applied.model,
    allowedTools: applied.allowedTools,
    role: "reviewer",
  });
  return {
    agent,
    turn: {
      engine,
      ...(target.backend !== undefined ? { backend: target.backend } : {}),
      model: target.model,
      ...(target.cloud ? { cloudModels: [target.model] } : {}),
      cwd: req.cwd,
      options: {
        permissionMode: applied.permissionMode ?? s.defaultPermissionMode,
        ...(applied.allowedTools ? { allowedTools: applied.allowedTools } : {}),
        ...(applied.disallowedTools ? { disallowedTools: applied.disallowedTools } : {}),
        appendSystemPrompt: applied.appendSystemPrompt,
        ...(applied.effort !== undefined ? { effort: applied.effort } : {}),
        addDirs: [],
      },
      agent: agent.name,
      kind: "review",
      ...(host.project !== undefined ? { project: host.project } : {}),
      ...(applied.notes.length > 0 ? { warnings: applied.notes } : {}),
    },
  };
}
