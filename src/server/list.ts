import { formatElapsed } from "../platform/duration.ts";
import type { JobRecord, JobState } from "../jobs/record.ts";
import type { Price } from "../settings/types.ts";
import { jobCostText } from "../jobs/spend/cost.ts";
import { elapsedMs, jobTokensText } from "../jobs/job_figures.ts";
import { escapeLine, flattenLine, quotePath } from "../platform/plain_text.ts";
import { verifyMark } from "../jobs/checks/verify_words.ts";
import type { ListPage } from "../jobs/list_page.ts";

/** How many jobs `delegate_list` shows when the call gives no limit. */
export const LIST_LIMIT = 20;
/** The most a call can ask for (shapes.ts). */
const LIST_MAX = 100;

/**
 * `delegate_list`: a page of the newest jobs (list_page.ts), grouped by conversation, so the
 * turns of one session read together (a flat list by time interleaves them). Conversations
 * are ordered by their newest job, turns by number. A last line says how many older jobs
 * match and how to see them.
 */
export function renderList(
  stateDir: string,
  page: ListPage,
  state: JobState | undefined,
  /** The `pricing` setting; a job with usage shows its tokens and cost (unknown without a price). */
  pricing: Readonly<Record<string, Price>> = {},
  /** Where queued jobs stand, by id: `2nd in line for backend "ollama"`. */
  places: ReadonlyMap<string, string> = new Map(),
  /** Jobs that ended and whose result never reached the orchestrator (jobs/unread.ts). */
  unread: ReadonlySet<string> = new Set(),
): string {
  const { records: picked, total, corrupt } = page;
  const sessions = new Map<string, JobRecord[]>();
  for (const r of picked) {
    const list = sessions.get(r.sessionId) ?? [];
    list.push(r);
    sessions.set(r.sessionId, list);
  }
  const out = [`State dir: ${stateDir}`];
  if (picked.length === 0) {
    out.push(state ? `No ${state} jobs.` : "No jobs yet.");
  } else {
    out.push(
      `${picked.length} of ${total} job${total === 1 ? "" : "s"} in ${sessions.size} ` +
        `conversation${sessions.size === 1 ? "" : "s"}, newest first`,
    );
  }
  for (const [sessionId, turns] of sessions) {
    const first = turns[0]!;
    out.push(
      "",
      `session ${sessionId}  model ${escapeLine(first.model)}  cwd ${quotePath(first.cwd)}`,
    );
    for (const r of [...turns].sort((a, b) => a.turn - b.turn)) {
      const prompt = flattenLine(r.promptPreview);
      const shown = prompt.length > 70 ? `${prompt.slice(0, 70)}…` : prompt;
      out.push(
        `  ${r.state.padEnd(11)} turn ${String(r.turn).padEnd(3)} ${
          formatElapsed(elapsedMs(r)).padStart(8)
        }` +
          `  job ${r.id}  "${shown}"` + jobUsageSuffix(r, pricing) +
          (verifyMark(r) ? `  [${verifyMark(r)}]` : "") +
          (unread.has(r.id.toLowerCase()) ? "  [unread]" : "") +
          (places.has(r.id) ? `  (${places.get(r.id)})` : ""),
      );
    }
  }
  const more = total - picked.length;
  if (picked.length > 0 && more > 0) {
    const how = picked.length < LIST_MAX
      ? `limit (at most ${LIST_MAX}) shows more`
      : "state narrows the list";
    out.push(
      "",
      `${more} older ${state ? `${state} ` : ""}job${more === 1 ? "" : "s"} not shown: ${how}.`,
    );
  }
  const unreadShown = picked.filter((r) => unread.has(r.id.toLowerCase())).length;
  if (unreadShown > 0) {
    out.push(
      "",
      `[unread]: ${unreadShown} job${unreadShown === 1 ? "" : "s"} ended without ` +
        `${unreadShown === 1 ? "its" : "their"} result reaching you; delegate_result({ job_id }) ` +
        "reads one.",
    );
  }
  if (corrupt.length > 0) {
    out.push("", "Unreadable job records (skipped):");
    for (const c of corrupt) out.push(`  ${c.id}: ${escapeLine(c.reason)}`);
  }
  return out.join("\n");
}

/**
 * `tokens in 1200 / out 300  cost $0.0012` (or `cost unknown`) for a `delegate_list` line;
 * empty while a job has no usage recorded.
 */
export function jobUsageSuffix(
  record: JobRecord,
  pricing: Readonly<Record<string, Price>>,
): string {
  if (!record.usage) return "";
  return `  tokens ${jobTokensText(record)}  cost ${jobCostText(record, pricing)}`;
}
