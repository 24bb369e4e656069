/**
 * What pruned jobs used, kept after their folders are gone: `delegate_usage` and `jobs usage`
 * count tokens and cost from job records, and pruning (`jobs prune`, retention) removes the
 * records. Before a job's folder is removed its model, creation time, state and usage are
 * appended to `<stateDir>/.usage/pruned.jsonl`, one line of about 250 bytes a job, so the
 * totals of a month stay the same after its jobs are pruned.
 *
 * A job counts once: a line whose job still has a folder (its removal failed, or a crash came
 * between the line and the removal) is left to the record.
 */
import { mkdir, open } from "node:fs/promises";
import { join } from "node:path";
import * as is from "../../platform/shape.ts";
import { readLines } from "../../platform/file_lines.ts";
import { isValidId } from "../ids.ts";
import { type JobRecord, jobRecordSchema } from "../record.ts";
import type { JobStore } from "../store.ts";

/** The state dir's folder of the ledger, beside `.sessions` and `.worktrees`. */
export const USAGE_DIR = ".usage";
const LEDGER_FILE = "pruned.jsonl";
/** A line longer than this is not one we wrote: skipped, counted as unreadable. */
const MAX_LINE_BYTES = 4096;

/** What the usage report needs of a job; a pruned one is marked. */
export type UsageEntry = Pick<JobRecord, "id" | "model" | "createdAt" | "state" | "usage"> & {
  pruned?: true;
};

const lineSchema = jobRecordSchema.pick({
  id: true,
  model: true,
  createdAt: true,
  state: true,
  usage: true,
}).extend({ prunedAt: is.number() });

export function ledgerPath(stateDir: string): string {
  return join(stateDir, USAGE_DIR, LEDGER_FILE);
}

/**
 * Appends the usage of `records` to the ledger and flushes it to disk; only then may their
 * folders go. Throws when it cannot, and the caller keeps the folders.
 */
export async function keepUsage(stateDir: string, records: readonly JobRecord[]): Promise<void> {
  if (records.length === 0) return;
  const now = Date.now();
  const lines = records.map((r) =>
    JSON.stringify({
      id: r.id.toLowerCase(),
      model: r.model,
      createdAt: r.createdAt,
      state: r.state,
      ...(r.usage ? { usage: r.usage } : {}),
      prunedAt: now,
    }) + "\n"
  ).join("");
  await mkdir(join(stateDir, USAGE_DIR), { recursive: true, mode: 0o700 });
  const handle = await open(ledgerPath(stateDir), "a+", 0o600);
  try {
    // A line cut short by a crash must not swallow the next one.
    const { size } = await handle.stat();
    const last = new Uint8Array(1);
    if (size > 0) await handle.read(last, 0, 1, size - 1);
    await handle.write(size > 0 && last[0] !== 0x0a ? `\n${lines}` : lines);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** The ledger's entries, each job once; unreadable lines are counted and skipped. */
export async function readPrunedUsage(
  stateDir: string,
): Promise<{ entries: UsageEntry[]; unreadable: number }> {
  const byId = new Map<string, UsageEntry>();
  let unreadable = 0;
  try {
    await readLines(ledgerPath(stateDir), 0, MAX_LINE_BYTES, ({ text }) => {
      if (text?.trim() === "") return true;
      const entry = text !== undefined ? parseLine(text) : undefined;
      if (!entry) unreadable++;
      else byId.set(entry.id, entry);
      return true;
    });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return { entries: [], unreadable };
    throw e;
  }
  return { entries: [...byId.values()], unreadable };
}

function parseLine(line: string): UsageEntry | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    return undefined;
  }
  const parsed = lineSchema.safeParse(raw);
  if (!parsed.success || !isValidId(parsed.data.id)) return undefined;
  const { id, model, createdAt, state, usage } = parsed.data;
  return {
    id: id.toLowerCase(),
    model,
    createdAt,
    state,
    ...(usage ? { usage } : {}),
    pruned: true,
  };
}

/**
 * Every job's usage: the records there are, and the pruned jobs from the ledger whose folders
 * are gone. What `delegate_usage` and `jobs usage` count.
 */
export async function usageHistory(
  store: JobStore,
  records: readonly JobRecord[],
): Promise<{ entries: UsageEntry[]; unreadable: number }> {
  const ledger = await readPrunedUsage(store.stateDir);
  if (ledger.entries.length === 0) return { entries: [...records], unreadable: ledger.unreadable };
  const present = new Set((await store.ids()).map((id) => id.toLowerCase()));
  for (const r of records) present.add(r.id.toLowerCase());
  const pruned = ledger.entries.filter((e) => !present.has(e.id));
  return { entries: [...records, ...pruned], unreadable: ledger.unreadable };
}
