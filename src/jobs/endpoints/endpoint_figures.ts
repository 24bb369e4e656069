/**
 * Jobs grouped by the endpoint that served them, as the `jobs --by endpoint` table and the
 * pool benchmark print them: how many ran there, how they ended, their tokens and time, and
 * how often a session's next turn stayed on its endpoint (its cached prefix reused) or moved.
 */
import { elapsedMs, jobTotalTokens } from "../job_figures.ts";
import type { JobRecord, JobState } from "../record.ts";

/** What the records say about one endpoint; `url` undefined for jobs placed on none. */
export interface EndpointFigures {
  url: string | undefined;
  jobs: number;
  states: Partial<Record<JobState, number>>;
  tokens: number;
  /** Time its jobs ran (queued time left out), in milliseconds. */
  busyMs: number;
  /** Follow-up turns served here that continued their session's endpoint. */
  stayed: number;
  /** Turns that came here from another endpoint (at their start or mid-turn). */
  movedIn: number;
}

/** One entry per endpoint, the busiest first; jobs without one last. */
export function endpointFigures(
  records: readonly JobRecord[],
  now = Date.now(),
): EndpointFigures[] {
  const by = new Map<string | undefined, EndpointFigures>();
  for (const r of records) {
    const url = r.endpoint?.url;
    let f = by.get(url);
    if (!f) {
      f = { url, jobs: 0, states: {}, tokens: 0, busyMs: 0, stayed: 0, movedIn: 0 };
      by.set(url, f);
    }
    f.jobs++;
    f.states[r.state] = (f.states[r.state] ?? 0) + 1;
    f.tokens += jobTotalTokens(r);
    if (r.startedAt !== undefined) f.busyMs += elapsedMs(r, now);
    if (r.endpoint?.moves?.length) f.movedIn++;
    else if (r.endpoint && r.turn > 1) f.stayed++;
  }
  return [...by.values()].sort((a, b) =>
    (a.url === undefined ? 1 : 0) - (b.url === undefined ? 1 : 0) || b.jobs - a.jobs
  );
}

/** Of the follow-up turns placed on an endpoint, the share that stayed where their session was. */
export function stayedShare(figures: readonly EndpointFigures[]): number | undefined {
  const stayed = figures.reduce((n, f) => n + f.stayed, 0);
  const moved = figures.reduce((n, f) => n + f.movedIn, 0);
  return stayed + moved === 0 ? undefined : stayed / (stayed + moved);
}
