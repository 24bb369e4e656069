/**
 * `model: "auto"` for a call: the candidates (the allowed models, or without an allowed list the
 * models the ledger knows for this agent here and the default), the ledger's entries that count
 * (same repository, agent and engine), and the route (jobs/auto_route.ts). With `residency:
 * local` the models and ledger entries that would leave this machine are not candidates.
 */
import { type Route, routeByRecord } from "../jobs/auto_route.ts";
import { ADHOC, readQualityLedger } from "../jobs/ledger/ledger.ts";
import { DEFAULT_BACKEND, defaultBackendName } from "../settings/backends.ts";
import { sameModel } from "../settings/model_names.ts";
import type { EngineName, Settings } from "../settings/types.ts";

export const AUTO = "auto";

export async function autoRoute(
  settings: Pick<Settings, "allowedModels" | "defaultModel" | "backends" | "defaultBackend">,
  stateDir: string,
  job: { repo: string; agent: string | undefined; engine: EngineName },
  /**
   * Whether a model may run on a backend (undefined = the default Ollama) by `residency`: with
   * "local", auto never picks a model on Ollama's cloud or a remote backend.
   */
  staysLocal: (model: string, backend: string | undefined) => Promise<boolean> = () =>
    Promise.resolve(true),
): Promise<Route> {
  const agent = job.agent ?? ADHOC;
  const onBackend = (name: string) =>
    name === DEFAULT_BACKEND || !settings.backends[name] ? undefined : name;
  const entries = [];
  for (
    const e of (await readQualityLedger(stateDir)).entries.filter((e) =>
      e.repo === job.repo && e.agent === agent && e.engine === job.engine
    )
  ) {
    if (await staysLocal(e.model, onBackend(e.backend))) entries.push(e);
  }
  const all = settings.allowedModels.length > 0 ? settings.allowedModels : [
    ...new Set([
      ...entries.map((e) => e.model),
      ...(settings.defaultModel ? [settings.defaultModel] : []),
    ]),
  ];
  const candidates = [];
  const home = defaultBackendName(settings);
  for (const m of all) {
    // Judged where it ran before (its entries passed above), else on the default backend.
    if (entries.some((e) => sameModel(e.model, m)) || await staysLocal(m, home)) {
      candidates.push(m);
    }
  }
  const route = routeByRecord({ candidates, entries, agent });
  const left = all.length - candidates.length;
  if (left > 0) {
    route.reason += `; ${left} model${left === 1 ? "" : "s"} left out by residency "local"`;
  }
  // A backend the user no longer has, or the default Ollama: the call's own choice stands.
  if (route.backend === undefined || onBackend(route.backend) === undefined) {
    const { backend: _gone, ...rest } = route;
    return rest;
  }
  return route;
}
