/**
 * An intake host from what a front end has: its settings, its job layer and where it reads
 * agent files. The MCP server and the terminal commands build theirs here, so an agent and
 * the user's policy over it are read the same way whichever started the job.
 */
import { agentPolicyOf } from "../agents/apply.ts";
import { type AgentPlaces, requireAgent } from "../agents/lookup.ts";
import type { WorkdirPolicy } from "../guard/workdirs.ts";
import type { Runtime } from "../jobs/runtime.ts";
import type { ResolvedSettings } from "../settings/load.ts";
import type { IntakeHost } from "./turn_request.ts";

export function intakeHost(from: {
  resolved: ResolvedSettings;
  runtime(): Promise<Runtime>;
  baseDir: string;
  workdirs: WorkdirPolicy;
  places: AgentPlaces;
  project?: string | undefined;
}): IntakeHost {
  const { resolved, runtime, places } = from;
  return {
    resolved,
    runtime,
    baseDir: from.baseDir,
    workdirs: from.workdirs,
    ...(from.project !== undefined ? { project: from.project } : {}),
    // Read at each request: a file edited since the last one counts.
    agent: (name) => requireAgent(name, places),
    // With the model a request that names none runs on (a project's agent may not move that
    // work to the cloud).
    agentPolicy: async () => {
      const defaultModel = await (await runtime()).catalog.defaultModel().catch(() => undefined);
      return agentPolicyOf(resolved.settings, places.userConfigDir, {
        userModels: resolved.userModels,
        defaultModel,
      });
    },
  };
}
