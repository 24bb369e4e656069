/**
 * What a job waiting for its backend's shared slots shows in its summary: its place in line
 * and who holds the slots, so that the orchestrator can tell a busy GPU from a stuck job; and
 * the endpoint of a pool that served it. Rows for jobs/summary_rows.ts, which both front ends
 * print.
 */
import type { QueueDetail } from "./queue/endpoint_queues.ts";
import type { JobRecord } from "./record.ts";

/** Holders named on the line; the rest are counted. */
const SHOWN = 8;

/**
 * `queue` and `held by` rows, e.g.
 * `queue:      2nd in line for backend "ollama" (4 of 4 slots held: 3 by other sessions, 1 here)`
 * `held by:    <id> here; <id>, <id> in server pid 4242`
 */
export function queueLines<T>(
  q: QueueDetail,
  line: (label: string, value: string) => T,
): T[] {
  const here = q.holders.filter((h) => h.here).length;
  const other = q.holders.length - here;
  const parts = [
    ...(other === 1 ? ["1 by another session"] : other > 1 ? [`${other} by other sessions`] : []),
    ...(here > 0 ? [`${here} here`] : []),
  ];
  const held = `${q.holders.length} of ${q.limit} slot${q.limit === 1 ? "" : "s"} held` +
    (parts.length > 0 ? `: ${parts.join(", ")}` : "");
  const at = q.endpoint !== undefined ? ` at ${q.endpoint}` : "";
  const lines = [
    line("queue", `${ordinal(q.position)} in line for backend "${q.backend}"${at} (${held})`),
  ];
  if (q.holders.length === 0) return lines;
  const groups = new Map<string, string[]>();
  for (const h of q.holders.slice(0, SHOWN)) {
    const where = h.here ? "here" : `in server pid ${h.pid}`;
    groups.set(where, [...(groups.get(where) ?? []), h.jobId]);
  }
  const more = q.holders.length > SHOWN ? `; +${q.holders.length - SHOWN} more` : "";
  const text = [...groups].map(([where, ids]) => `${ids.join(", ")} ${where}`).join("; ");
  lines.push(line("held by", text + more));
  return lines;
}

/**
 * The `endpoint` row: the endpoint that served a turn, for a backend that is a pool of them, or a turn that moved:
 * `endpoint:   http://gpu2:11434  (moved from http://gpu1:11434: connection failed ...)`.
 */
export function endpointLines<T>(
  r: Pick<JobRecord, "endpoint">,
  line: (label: string, value: string) => T,
): T[] {
  const e = r.endpoint;
  if (!e || (e.poolSize < 2 && !e.moves?.length)) return [];
  const last = e.moves?.at(-1);
  const count = e.moves && e.moves.length > 1 ? `moved ${e.moves.length} times, last ` : "moved ";
  const moved = last ? `  (${count}from ${last.from}: ${last.reason})` : "";
  return [line("endpoint", `${e.url}${moved}`)];
}

/** 1st, 2nd, 3rd, 4th, 11th, 12th, 13th, 21st... */
export function ordinal(n: number): string {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13
    ? "th"
    : ({ 1: "st", 2: "nd", 3: "rd" } as Record<number, string>)[n % 10] ?? "th";
  return `${n}${suffix}`;
}
