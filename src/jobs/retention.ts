import { readdir, rm, stat } from "node:fs/promises";
import { removeTree } from "../platform/remove_tree.ts";
import { join } from "node:path";
import { forgetSession } from "../engines/registry.ts";
import type { Settings } from "../settings/types.ts";
import { isValidId } from "./ids.ts";
import { isRunning } from "../platform/process_identity.ts";
import { isTerminal, type JobRecord } from "./record.ts";
import type { JobStore } from "./store.ts";
import { keepUsage, ledgerPath } from "./ledger/usage_ledger.ts";
import { removeWorktree } from "./worktree/worktree.ts";

export interface PruneOptions {
  /** Finished jobs that ended longer ago than this are removed. */
  olderThanMs: number;
  /** Where the engines keep what they keep of a conversation (claudeConfigDir). */
  settings: Settings;
  now?: number;
  /** Report what would go without removing anything. */
  dryRun?: boolean;
}

export type KeepReason =
  | "running"
  | "recent"
  | "owner alive"
  | "conversation has a newer or live turn"
  | "no record yet";

export interface PrunedJob {
  id: string;
  sessionId: string;
  state: string;
  model: string;
  /** endedAt, or createdAt when the job recorded no end. */
  endedAt: number;
}

export interface PruneReport {
  cutoff: number;
  dryRun: boolean;
  removed: PrunedJob[];
  kept: Array<{ id: string; reason: KeepReason }>;
  /** Unreadable records: skipped, never removed. */
  corrupt: Array<{ id: string; reason: string }>;
  /** Session index files removed because every job they named is gone. */
  sessionsRemoved: string[];
  /**
   * What the engines kept of removed conversations outside the job folders (Claude Code's
   * transcripts in claudeConfigDir), removed with them: the paths, per conversation.
   */
  engineFiles: Array<{ sessionId: string; engine: string; paths: string[] }>;
  /** Folders that could not be removed. */
  failed: Array<{ id: string; reason: string }>;
  /**
   * Worktrees of removed conversations: each removed with what it held committed to its
   * branch, which stays unless it is merged; `note` says which.
   */
  worktrees: Array<{ sessionId: string; path: string; branch: string; note: string }>;
}

/**
 * Removes finished job folders whose end (or creation, when none was recorded) is older than
 * the cutoff, after appending their usage to the ledger (ledger/usage_ledger.ts): usage reports
 * still count them. Never removes a queued or running job, one whose owning server still runs, one
 * newer than the cutoff, or an unreadable one. A conversation goes as a whole: while any of
 * its turns must stay, its older turns stay too, because a follow-up continues from them. What
 * its engine keeps of it outside the job folders (Claude Code's transcript) goes with it, first:
 * when that cannot be removed, the jobs stay, so that a later prune finds it again.
 */
export async function pruneJobs(store: JobStore, options: PruneOptions): Promise<PruneReport> {
  if (!Number.isFinite(options.olderThanMs) || options.olderThanMs < 0) {
    throw new RangeError(`pruneJobs: olderThanMs must be a duration, got ${options.olderThanMs}`);
  }
  const now = options.now ?? Date.now();
  const cutoff = now - options.olderThanMs;
  const report: PruneReport = {
    cutoff,
    dryRun: options.dryRun === true,
    removed: [],
    kept: [],
    corrupt: [],
    sessionsRemoved: [],
    engineFiles: [],
    failed: [],
    worktrees: [],
  };

  const bySession = new Map<string, Array<{ record: JobRecord; keep?: KeepReason }>>();
  for (const id of await store.ids()) {
    const read = await store.read(id).catch((e) => ({
      kind: "corrupt" as const,
      reason: `cannot read: ${(e as Error).message}`,
    }));
    if (read.kind === "missing") {
      // A folder being created right now has no record yet.
      report.kept.push({ id, reason: "no record yet" });
      continue;
    }
    if (read.kind === "corrupt") {
      report.corrupt.push({ id, reason: read.reason });
      continue;
    }
    const record = read.record;
    const key = record.sessionId.toLowerCase();
    const turns = bySession.get(key) ?? [];
    turns.push({ record, keep: await keepReason(record, cutoff) });
    bySession.set(key, turns);
  }

  const removedIds = new Set<string>();
  for (const [sessionId, turns] of bySession) {
    const blocked = turns.some((t) => t.keep !== undefined);
    for (const t of turns) {
      if (t.keep) report.kept.push({ id: t.record.id, reason: t.keep });
      else if (blocked) {
        report.kept.push({ id: t.record.id, reason: "conversation has a newer or live turn" });
      }
    }
    if (blocked) continue;
    // A follow-up started since the scan adds a turn to the index: leave that session be.
    const known = new Set(turns.map((t) => t.record.id.toLowerCase()));
    if (isValidId(sessionId)) {
      const indexed = await store.sessionJobs(sessionId).catch(() => []);
      let newer = false;
      for (const id of indexed) {
        if (!known.has(id.toLowerCase()) && (await folderExists(store, id))) newer = true;
      }
      if (newer) {
        for (const t of turns) {
          report.kept.push({ id: t.record.id, reason: "conversation has a newer or live turn" });
        }
        continue;
      }
    }
    // Their usage first, so that delegate_usage's totals survive the folders.
    if (!report.dryRun) {
      try {
        await keepUsage(store.stateDir, turns.map((t) => t.record));
      } catch (e) {
        report.failed.push({
          id: sessionId,
          reason: `cannot keep its usage in ${ledgerPath(store.stateDir)} ` +
            `(${(e as Error).message}); its jobs are kept`,
        });
        continue;
      }
    }
    // The worktree goes next: when it cannot, the records that point at it stay.
    if (!(await pruneWorktree(sessionId, turns.map((t) => t.record), report))) continue;
    if (!(await forgetEngineFiles(turns.map((t) => t.record), options, report))) continue;
    for (const { record } of turns) {
      const id = record.id.toLowerCase();
      if (!report.dryRun) {
        try {
          // Its cache folder holds what sandboxed builds wrote, read-only folders included.
          await removeTree(store.dirOf(id));
        } catch (e) {
          report.failed.push({ id, reason: (e as Error).message });
          continue;
        }
      }
      removedIds.add(id);
      report.removed.push({
        id: record.id,
        sessionId: record.sessionId,
        state: record.state,
        model: record.model,
        endedAt: record.endedAt ?? record.createdAt,
      });
    }
  }

  await pruneSessionIndex(store, removedIds, report);
  return report;
}

/** Removes a conversation's worktree (dry run: says it would); false when that failed. */
async function pruneWorktree(
  sessionId: string,
  turns: readonly JobRecord[],
  report: PruneReport,
): Promise<boolean> {
  const wt = turns.map((r) => r.worktree).filter((w) => w?.gitDir && w.base).at(-1);
  if (!wt?.gitDir || !wt.base) return true;
  const ref = { repo: wt.repo, path: wt.path, branch: wt.branch, gitDir: wt.gitDir, base: wt.base };
  if (report.dryRun) {
    const note = `worktree ${wt.path} would be removed; branch ${wt.branch} kept unless merged`;
    report.worktrees.push({ sessionId, path: wt.path, branch: wt.branch, note });
    return true;
  }
  try {
    const done = await removeWorktree(ref, `conversation ${sessionId}`, wt.allowSecretFiles);
    report.worktrees.push({ sessionId, path: wt.path, branch: wt.branch, note: done.note });
    return true;
  } catch (e) {
    report.failed.push({
      id: sessionId,
      reason: `cannot remove its worktree ${wt.path} (${(e as Error).message}); its jobs are kept`,
    });
    return false;
  }
}

/**
 * Removes what each engine of a conversation kept of it outside the job folders (dry run:
 * finds it); false when that failed.
 */
async function forgetEngineFiles(
  turns: readonly JobRecord[],
  options: PruneOptions,
  report: PruneReport,
): Promise<boolean> {
  // The id as the engine got it (TurnSpec.sessionId): the record's own spelling.
  const sessionId = turns[0]!.sessionId;
  for (const engine of new Set(turns.map((r) => r.engine))) {
    try {
      const paths = await forgetSession(engine, options.settings, sessionId, report.dryRun);
      if (paths.length > 0) report.engineFiles.push({ sessionId, engine, paths });
    } catch (e) {
      report.failed.push({
        id: sessionId,
        reason: `cannot remove the ${engine} engine's files of this conversation ` +
          `(${(e as Error).message}); its jobs are kept`,
      });
      return false;
    }
  }
  return true;
}

async function keepReason(record: JobRecord, cutoff: number): Promise<KeepReason | undefined> {
  if (!isTerminal(record.state)) return "running";
  if ((record.endedAt ?? record.createdAt) >= cutoff) return "recent";
  if (record.owner && (await isRunning(record.owner).catch(() => true))) return "owner alive";
  return undefined;
}

/** Whether a job's folder exists (a name the store cannot hold never does). */
async function folderExists(store: JobStore, id: string): Promise<boolean> {
  if (!isValidId(id)) return false;
  try {
    await stat(store.dirOf(id));
    return true;
  } catch {
    return false;
  }
}

/**
 * Removes `.sessions/<sid>.json` files whose every job is removed or already gone, with the
 * session's turn tickets (`<sid>.turns/`) and the lock file older versions kept.
 */
async function pruneSessionIndex(
  store: JobStore,
  removed: ReadonlySet<string>,
  report: PruneReport,
): Promise<void> {
  let names: string[];
  try {
    names = await readdir(store.sessionsDir);
  } catch {
    return;
  }
  const present = new Set((await store.ids()).map((id) => id.toLowerCase()));
  for (const name of names) {
    if (!name.endsWith(".json")) continue;
    const sessionId = name.slice(0, -".json".length);
    if (!isValidId(sessionId)) continue;
    const jobs = (await store.sessionJobs(sessionId).catch(() => [])).map((j) => j.toLowerCase());
    if (jobs.length === 0) continue;
    const onlyRemoved = jobs.every((j) => removed.has(j) || !present.has(j));
    if (!onlyRemoved || !jobs.some((j) => removed.has(j))) continue;
    if (!report.dryRun) {
      try {
        await rm(store.turns.dirOf(sessionId), { recursive: true, force: true });
        await rm(join(store.sessionsDir, `${sessionId.toLowerCase()}.lock`), { force: true });
        await rm(join(store.sessionsDir, `${sessionId.toLowerCase()}.json`), { force: true });
      } catch (e) {
        report.failed.push({ id: sessionId, reason: (e as Error).message });
        continue;
      }
    }
    report.sessionsRemoved.push(sessionId);
  }
}
