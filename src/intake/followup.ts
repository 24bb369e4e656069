/**
 * The next turn of a session, decided (issue 33, item 1): its model, fallback models and
 * directories are judged again under today's policy (the session may predate it), and what the
 * request changes is laid over what the session had.
 */
import { DelegateError } from "../errors.ts";
import type { JobView } from "../jobs/manager.ts";
import { residentFallbacks } from "../jobs/residency.ts";
import { requestChecks } from "./checks.ts";
import { allowedDir, allowedDirs } from "./inputs.ts";
import type { FollowupRequest, IntakeHost } from "./turn_request.ts";

/** Starts the follow-up; throws a DelegateError (or JobError) when it cannot. */
export async function startFollowup(
  host: IntakeHost,
  prompt: string,
  req: FollowupRequest,
): Promise<JobView> {
  const s = host.resolved.settings;
  const { manager, catalog, models } = await host.runtime();
  const previous = await manager.latestTurn({
    ...(req.jobId !== undefined ? { jobId: req.jobId } : {}),
    ...(req.sessionId !== undefined ? { sessionId: req.sessionId } : {}),
  });
  if (!catalog.isAllowed(previous.model)) {
    throw new DelegateError(
      `Cannot follow up: the session's model "${previous.model}" is no longer in the allowed ` +
        `list (${s.allowedModels.join(", ")}). Start a new task with an allowed model`,
    );
  }
  // The session may have started before the user kept work local: its model is judged again,
  // and its fallback models too.
  await models.checkResidency("session", previous.model, previous.backend);
  const resident = residentFallbacks(
    s.residency,
    (previous.fallback ?? []).map((name) => ({
      name,
      cloud: previous.cloudModels?.includes(name) ?? false,
    })),
    previous.agent,
  );
  // Judged again: the record may predate the rules, or the user changed workspaceRoots.
  const cwd = await allowedDir(previous.cwd, previous.cwd, "the session's cwd", host.workdirs);
  const addDirs = await allowedDirs(req.addDirs ?? previous.options.addDirs, cwd, host.workdirs);
  return await manager.followup(
    previous,
    prompt,
    {
      permissionMode: req.permissionMode,
      allowedTools: req.allowedTools && [...req.allowedTools],
      disallowedTools: req.disallowedTools && [...req.disallowedTools],
      appendSystemPrompt: req.appendSystemPrompt,
      maxTurns: req.maxTurns,
      effort: req.effort,
      addDirs: req.addDirs ? addDirs : undefined,
    },
    requestChecks(req, undefined, previous.checks),
    {
      fallback: resident.kept,
      ...(resident.note ? { warnings: [resident.note] } : {}),
      ...(host.project !== undefined ? { project: host.project } : {}),
    },
  );
}
