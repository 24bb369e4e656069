/**
 * A tool call's arguments as the intake's requests (src/intake/turn_request.ts): the tools
 * spell fields in snake_case, the intake in the program's own names.
 */
import type { FollowupRequest, TurnRequest } from "../intake/turn_request.ts";
import type { RunArgs } from "./run_tool.ts";
import type { shapes } from "./shapes.ts";
import type { z } from "zod";

type FollowupArgs = z.infer<z.ZodObject<typeof shapes.followup>>;

/** delegate_start's and delegate_run's arguments, the prompt aside (it is read first). */
export function turnRequest(args: RunArgs): TurnRequest {
  return {
    cwd: args.cwd,
    addDirs: args.add_dirs,
    engine: args.engine,
    model: args.model,
    backend: args.backend,
    files: args.files,
    allowedTools: args.allowed_tools,
    disallowedTools: args.disallowed_tools,
    appendSystemPrompt: args.append_system_prompt,
    permissionMode: args.permission_mode,
    maxTurns: args.max_turns,
    effort: args.effort,
    agent: args.agent,
    verify: args.verify,
    verifyRounds: args.verify_rounds,
    budgetTokens: args.budget_tokens,
    budgetUsd: args.budget_usd,
    isolation: args.isolation,
    includeUncommitted: args.include_uncommitted,
  };
}

/** delegate_followup's arguments, the prompt aside. */
export function followupRequest(args: FollowupArgs): FollowupRequest {
  return {
    jobId: args.job_id,
    sessionId: args.session_id,
    permissionMode: args.permission_mode,
    allowedTools: args.allowed_tools,
    disallowedTools: args.disallowed_tools,
    appendSystemPrompt: args.append_system_prompt,
    maxTurns: args.max_turns,
    effort: args.effort,
    addDirs: args.add_dirs,
    verify: args.verify,
    verifyRounds: args.verify_rounds,
  };
}
