/**
 * A job's figures in words, as both front ends print them: the MCP tools' replies and the
 * `jobs` commands in a terminal.
 */
import { promptTokens } from "./spend/cost.ts";
import type { JobRecord } from "./record.ts";

export function elapsedMs(record: JobRecord, now = Date.now()): number {
  const from = record.startedAt ?? record.createdAt;
  return (record.endedAt ?? now) - from;
}

/** `1 turn`, `4 turns`. */
export function turnsText(n: number): string {
  return `${n} turn${n === 1 ? "" : "s"}`;
}

/** "in 1200 / out 300 / cache 50": every token count of a job, for one line. */
export function jobTokensText(record: JobRecord): string {
  const u = record.usage;
  if (!u) return "";
  const cache = u.cacheReadTokens + u.cacheCreationTokens;
  return `in ${u.inputTokens} / out ${u.outputTokens}` + (cache > 0 ? ` / cache ${cache}` : "");
}

/** Prompt plus output tokens of one job, 0 when none were recorded. */
export function jobTotalTokens(record: JobRecord): number {
  return record.usage ? promptTokens(record.usage) + record.usage.outputTokens : 0;
}
