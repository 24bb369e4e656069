/**
 * `model: "auto"` for a call: the candidates (the allowed models, or without an allowed list the
 * models the ledger knows for this agent here and the default), the ledger's entries that count
 * (same repository, agent and engine), and the route (jobs/auto_route.ts).
 */
import { type Route, routeByRecord } from "../jobs/auto_route.ts";
import { ADHOC, DEFAULT_BACKEND_NAME, readLedger } from "../jobs/ledger.ts";
import type { EngineName, Settings } from "../settings/types.ts";

export const AUTO = "auto";

export async function autoRoute(
  settings: Pick<Settings, "allowedModels" | "defaultModel" | "backends">,
  stateDir: string,
  job: { repo: string; agent: string | undefined; engine: EngineName },
): Promise<Route> {
  const agent = job.agent ?? ADHOC;
  const entries = (await readLedger(stateDir)).entries.filter((e) =>
    e.repo === job.repo && e.agent === agent && e.engine === job.engine
  );
  const candidates = settings.allowedModels.length > 0 ? settings.allowedModels : [
    ...new Set([
      ...entries.map((e) => e.model),
      ...(settings.defaultModel ? [settings.defaultModel] : []),
    ]),
  ];
  const route = routeByRecord({ candidates, entries, agent });
  // A backend the user no longer has, or the default Ollama: the call's own choice stands.
  if (
    route.backend === DEFAULT_BACKEND_NAME || !route.backend || !settings.backends[route.backend]
  ) {
    const { backend: _gone, ...rest } = route;
    return rest;
  }
  return route;
}
