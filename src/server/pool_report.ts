/**
 * What `ollama_models` shows of a backend that is a pool of endpoints: each endpoint, whether
 * it answers its probe now, what this server met there (an endpoint a job found failing stays
 * down a while even when it answers), and how many of this server's jobs run or wait there.
 */
import { type EndpointState, probeEndpoint } from "../backends/endpoint_health.ts";
import type { ResolvedBackend } from "../jobs/model_choice.ts";
import { escapeLine } from "../platform/plain_text.ts";

/** How long the report waits for one endpoint's probe. */
const PROBE_MS = 3000;

/** What the server knows of one endpoint (JobManager.endpointStates). */
export interface KnownEndpoint {
  url: string;
  state: EndpointState;
  jobsHere: number;
}

/** One line per endpoint of `backend`, probed in parallel, indented by `indent`. */
export async function endpointRows(
  backend: ResolvedBackend,
  known: readonly KnownEndpoint[],
  indent: string,
): Promise<{ rows: string[]; up: string[] }> {
  const width = Math.max(...backend.endpoints.map((e) => e.url.length));
  const up: string[] = [];
  const rows = await Promise.all(backend.endpoints.map(async (e) => {
    const target = {
      url: e.url,
      kind: backend.kind,
      ...(backend.apiKey ? { apiKey: backend.apiKey } : {}),
    };
    const down = await probeEndpoint(target, PROBE_MS);
    const mine = known.find((k) => k.url === e.url);
    const held = mine && !mine.state.up && (mine.state.heldUntil ?? 0) > Date.now();
    const parts = [
      down !== undefined
        ? `DOWN: ${escapeLine(down)}`
        : held
        ? `answers, but held DOWN after a job met: ${escapeLine(mine.state.reason ?? "a failure")}`
        : "up",
      ...(e.limit !== undefined ? [`max ${e.limit} at once`] : []),
      ...(mine?.jobsHere ? [`${mine.jobsHere} job(s) of this server`] : []),
    ];
    if (down === undefined && !held) up.push(e.url);
    return `${indent}${e.url.padEnd(width)}  ${parts.join(", ")}`;
  }));
  return { rows, up };
}
