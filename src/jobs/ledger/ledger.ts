/**
 * The quality ledger: one compact line per ended job in `<stateDir>/ledger.jsonl`, kept when
 * `jobs prune` removes the job folders, so that which model earns trust for which task in which
 * repository is learnt from every verified outcome (`stats`, `model: "auto"`). A line names the
 * repository by an id, never by its path (repo_id.ts).
 *
 * `ledgerEntry` is the one function that turns an ended job's record into a line: whatever ends
 * a delegate's work (a job, a reviewer of a panel) goes through it.
 */
import { appendFile } from "node:fs/promises";
import { join } from "node:path";
import { canonicalModelName } from "../../settings/model_names.ts";
import { readFileTail } from "../../platform/file_ends.ts";
import type { Price } from "../../settings/types.ts";
import { DEFAULT_BACKEND } from "../../settings/backends.ts";
import { costOf, promptTokens } from "../spend/cost.ts";
import type { JobRecord } from "../record.ts";
import { checkChanged } from "../checks/check_watch.ts";
import { wholeTokens } from "../spend/usage_bounds.ts";
import { TOOL_CALL_UNPARSED } from "../../engines/text_calls/types.ts";

export const LEDGER_FILE = "ledger.jsonl";
/** The ledger's agent for a job that ran as no named agent. */
export const ADHOC = "adhoc";
/**
 * The most of the ledger read: its newest 32 MiB, about 100,000 jobs. Older lines stay in the
 * file but no longer count.
 */
export const LEDGER_READ_BYTES = 32 * 1024 * 1024;

/** One ended job. Short keys: the file grows by a line per job for as long as it is kept. */
export interface LedgerEntry {
  v: 1;
  /** When the job ended (ms since the epoch). */
  at: number;
  job: string;
  /** Canonical model name (`llama3` is `llama3:latest`). */
  model: string;
  engine: string;
  backend: string;
  agent: string;
  /** The repository's id (repo_id.ts); "" when it was not known. */
  repo: string;
  /**
   * true or false when the job had `verify`; null when it had none or it never ran. A pass
   * of a check the delegate changed (`checkChanged`) is false: it earns no trust, and every
   * reader of the ledger, an older server's too, counts it as a check not passed.
   */
  verified: boolean | null;
  /**
   * Present when the delegate changed what the job's check runs, or may have unseen
   * (check_watch.ts): how the check ended. `stats` shows such passes apart.
   */
  checkChanged?: "passed" | "failed";
  /** Repair rounds the job took (0 when the first check passed or none ran). */
  rounds: number;
  toolCalls: number;
  tokensIn: number;
  tokensOut: number;
  /** Cost by the pricing table when the job ended; null when the model had no price. */
  cost: number | null;
  wallMs: number;
  state: string;
  /** Of toolCalls, how many the model wrote as text and the native engine recovered. */
  recovered?: number;
  /**
   * The job ended on tool calls written as text that nothing could run (its error starts
   * `tool_call_unparsed:`): `doctor --probe` lists the models that do this.
   */
  unrunCall?: true;
}

/** The ledger line of an ended job. */
export function ledgerEntry(
  record: JobRecord,
  pricing: Readonly<Record<string, Price>>,
): LedgerEntry {
  const v = record.verification;
  const ran = v !== undefined && v.verdict !== "not-run";
  const changed = ran && checkChanged(v);
  const verified = ran ? v.verdict === "passed" && !changed : null;
  const cost = costOf(record, pricing);
  return {
    v: 1,
    at: record.endedAt ?? Date.now(),
    job: record.id,
    model: canonicalModelName(record.model),
    engine: record.engine,
    backend: record.backend ?? DEFAULT_BACKEND,
    agent: record.agent ?? ADHOC,
    repo: record.repo ?? "",
    verified,
    ...(changed
      ? { checkChanged: v.verdict === "passed" ? "passed" as const : "failed" as const }
      : {}),
    rounds: Math.max(0, (v?.rounds.length ?? 0) - 1),
    toolCalls: record.toolCalls,
    tokensIn: record.usage ? promptTokens(record.usage) : 0,
    tokensOut: record.usage?.outputTokens ?? 0,
    cost: cost.kind === "known" ? cost.amount : cost.kind === "no-usage" ? 0 : null,
    wallMs: Math.max(0, (record.endedAt ?? Date.now()) - (record.startedAt ?? record.createdAt)),
    state: record.state,
    ...(record.toolCallsRecovered ? { recovered: record.toolCallsRecovered } : {}),
    ...(record.errorText?.startsWith(`${TOOL_CALL_UNPARSED}:`) ? { unrunCall: true as const } : {}),
  };
}

/**
 * Appends the line of an ended job. One write of one line with O_APPEND: lines of several
 * servers sharing the state dir do not interleave.
 */
export async function appendLedger(
  stateDir: string,
  record: JobRecord,
  pricing: Readonly<Record<string, Price>>,
): Promise<void> {
  const line = JSON.stringify(ledgerEntry(record, pricing)) + "\n";
  await appendFile(join(stateDir, LEDGER_FILE), line, { mode: 0o600 });
}

/** The ledger's entries, oldest first; lines that are not entries are counted, not fatal. */
export interface LedgerRead {
  entries: LedgerEntry[];
  skipped: number;
  /** Older lines were not read (the file is over `maxBytes`). */
  truncated: boolean;
}

export async function readQualityLedger(
  stateDir: string,
  maxBytes = LEDGER_READ_BYTES,
): Promise<LedgerRead> {
  const tail = await readFileTail(join(stateDir, LEDGER_FILE), maxBytes);
  if (!tail) return { entries: [], skipped: 0, truncated: false };
  const out: LedgerRead = { entries: [], skipped: 0, truncated: tail.truncated };
  for (const line of tail.text.split("\n")) {
    if (line.trim() === "") continue;
    const entry = parseEntry(line);
    if (entry) out.entries.push(entry);
    else out.skipped++;
  }
  return out;
}

function parseEntry(line: string): LedgerEntry | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof raw !== "object" || raw === null) return undefined;
  const e = raw as Record<string, unknown>;
  const str = (k: string) => typeof e[k] === "string";
  const num = (k: string) => typeof e[k] === "number" && Number.isFinite(e[k]);
  if (e.v !== 1 || !num("at") || !num("rounds") || !num("toolCalls") || !num("wallMs")) {
    return undefined;
  }
  if (!["job", "model", "engine", "backend", "agent", "repo", "state"].every(str)) return undefined;
  if (!num("tokensIn") || !num("tokensOut")) return undefined;
  if (!(e.verified === null || typeof e.verified === "boolean")) return undefined;
  if (!(e.cost === null || num("cost"))) return undefined;
  if (
    !(e.checkChanged === undefined || e.checkChanged === "passed" || e.checkChanged === "failed")
  ) {
    return undefined;
  }
  if (!(e.recovered === undefined || num("recovered"))) return undefined;
  if (!(e.unrunCall === undefined || e.unrunCall === true)) return undefined;
  const entry = e as unknown as LedgerEntry;
  // A line written before usage was counted (usage_bounds.ts) may hold a backend's negative
  // figures: they count as 0, never as a credit against a daily budget.
  return {
    ...entry,
    tokensIn: wholeTokens(entry.tokensIn),
    tokensOut: wholeTokens(entry.tokensOut),
    cost: entry.cost === null ? null : Math.max(0, entry.cost),
  };
}
