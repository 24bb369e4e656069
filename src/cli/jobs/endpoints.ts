/** `jobs --by endpoint`: the jobs table grouped by the endpoint that served each job. */
import {
  type EndpointFigures,
  endpointFigures,
  stayedShare,
} from "../../jobs/endpoints/endpoint_figures.ts";
import type { JobRecord } from "../../jobs/record.ts";
import { escapeLine } from "../../platform/plain_text.ts";
import { type CliIo, compactCount, humanDuration, styleFor } from "./common.ts";

const HEAD = [
  "ENDPOINT",
  "JOBS",
  "RUN",
  "QUEUED",
  "DONE",
  "FAILED",
  "TOKENS",
  "BUSY",
  "STAYED",
  "MOVED IN",
];

/** The table, or its JSON. */
export function renderEndpointTable(
  stateDir: string,
  records: readonly JobRecord[],
  io: CliIo,
  json: boolean,
  now = Date.now(),
): string {
  const figures = endpointFigures(records, now);
  const share = stayedShare(figures);
  if (json) {
    return JSON.stringify({ stateDir, endpoints: figures, stayedShare: share ?? null }, null, 2);
  }
  if (records.length === 0) return `No jobs in ${stateDir}.`;
  const rows = figures.map((f) => cells(f));
  const widths = HEAD.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const pad = (c: readonly string[]) =>
    c.map((x, i) => (i === 0 ? x.padEnd(widths[i]!) : x.padStart(widths[i]!))).join("  ");
  const style = styleFor(io);
  return [
    style.bold(pad(HEAD)),
    ...rows.map(pad),
    "",
    `${records.length} job${records.length === 1 ? "" : "s"} on ${
      figures.filter((f) => f.url !== undefined).length
    } endpoint(s). STAYED: follow-up turns that kept their session's endpoint (its cached ` +
    `prefix reused); MOVED IN: turns that came from another endpoint.` +
    (share !== undefined ? ` ${Math.round(share * 100)}% of follow-up turns stayed.` : "") +
    ` State dir: ${stateDir}`,
  ].join("\n");
}

function cells(f: EndpointFigures): string[] {
  const n = (state: keyof EndpointFigures["states"]) => String(f.states[state] ?? 0);
  const failed = (f.states.failed ?? 0) + (f.states.interrupted ?? 0);
  return [
    f.url === undefined ? "(none recorded)" : escapeLine(f.url),
    String(f.jobs),
    n("running"),
    n("queued"),
    n("completed"),
    String(failed),
    compactCount(f.tokens),
    humanDuration(f.busyMs),
    String(f.stayed),
    String(f.movedIn),
  ];
}
