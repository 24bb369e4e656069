/**
 * The change journals (journal.ts) this server keeps, one per root a turn worked in: set
 * up at the first turn there, read now and then so that the kernel's queue does not overflow
 * between turns, closed after IDLE_MS without a turn. Together they watch at most half of the
 * user's inotify watches (editors and other tools need theirs). A root that cannot have one
 * (too many folders, no watches left) is walked, and tried again after RETRY_MS.
 */
import type { LinuxFs } from "../../platform/posix/inotify.ts";
import { maxUserWatches } from "../../platform/posix/inotify.ts";
import { JOURNAL_LIMITS, type JournalLimits, TreeJournal } from "./journal.ts";

/** How long a journal is kept after its last turn. */
const IDLE_MS = 15 * 60_000;
/** How long a root whose journal could not be set up is walked before trying again. */
const RETRY_MS = 5 * 60_000;
/** How often journals read their events (the kernel queues 16,384 per journal). */
const DRAIN_MS = 100;
interface Kept {
  journal: Promise<TreeJournal | undefined>;
  lastUsed: number;
}

const kept = new Map<string, Kept>();
/** Roots whose journal could not be set up: until when, and why. */
const refused = new Map<string, { until: number; why: string }>();
let drainTimer: ReturnType<typeof setInterval> | undefined;

/** The root's journal, set up on first use; undefined when it cannot have one. */
export async function journalFor(
  root: string,
  fs: LinuxFs,
  limits: JournalLimits = JOURNAL_LIMITS,
  /** false: only a journal kept already (a turn that does not need one set up for it). */
  create = true,
): Promise<TreeJournal | undefined> {
  const entry = kept.get(root);
  if (entry) {
    const journal = await entry.journal;
    if (journal && !journal.invalid) {
      entry.lastUsed = Date.now();
      return journal;
    }
    if (kept.get(root) === entry) kept.delete(root);
  }
  if (!create) return undefined;
  const no = refused.get(root);
  if (no && no.until > Date.now()) return undefined;
  refused.delete(root);
  const holder: { journal?: Promise<TreeJournal | undefined> } = {};
  const journal: Promise<TreeJournal | undefined> = (async () => {
    const left = watchBudget() - (await watchesUsed(root));
    // Whatever goes wrong setting one up, the turn walks instead: evidence is never lost to it.
    const opened = left < 1
      ? `this server's journals already use its share of inotify watches (${watchBudget()})`
      : await TreeJournal.open(root, fs, { ...limits, maxDirs: Math.min(limits.maxDirs, left) })
        .catch((e: Error) => `setting it up failed (${e.message})`);
    if (typeof opened !== "string") return opened;
    refused.set(root, { until: Date.now() + RETRY_MS, why: opened });
    if (kept.get(root)?.journal === holder.journal) kept.delete(root);
    return undefined;
  })();
  holder.journal = journal;
  kept.set(root, { journal, lastUsed: Date.now() });
  startDraining();
  return await journal;
}

/**
 * How many folders all journals may watch: half the user's inotify watches (editors and
 * other tools need theirs; the limit is per user), at most MAX_WATCHES.
 */
let budget: number | undefined;
const MAX_WATCHES = 400_000;

function watchBudget(): number {
  budget ??= Math.min(MAX_WATCHES, Math.floor((maxUserWatches() ?? 8192) / 2));
  return budget;
}

/** Folders the other roots' journals watch. */
async function watchesUsed(except: string): Promise<number> {
  let used = 0;
  for (const [root, entry] of kept) {
    if (root === except) continue;
    const journal = await entry.journal.catch(() => undefined);
    if (journal && !journal.invalid) used += journal.size;
  }
  return used;
}

/** Marks the root's journal as used now (its idle time starts again). */
export function touch(root: string): void {
  const entry = kept.get(root);
  if (entry) entry.lastUsed = Date.now();
}

/**
 * Reads every journal's events now and then, so that the kernel's queue does not overflow
 * between turns, and closes journals no turn used for IDLE_MS.
 */
function startDraining(): void {
  if (drainTimer !== undefined) return;
  drainTimer = setInterval(() => {
    const now = Date.now();
    for (const [root, entry] of kept) {
      entry.journal.then((journal) => {
        if (!journal) return;
        if (journal.invalid || (!journal.listening && now - entry.lastUsed > IDLE_MS)) {
          journal.close();
          if (kept.get(root) === entry) kept.delete(root);
        } else journal.drain();
      }).catch(() => {});
    }
    if (kept.size === 0) stopDraining();
  }, DRAIN_MS);
  // Journals must not keep the server alive (Deno's timers are numbers; Node's objects).
  const timer = drainTimer as unknown as { unref?: () => void };
  if (typeof timer.unref === "function") timer.unref();
  else {
    (globalThis as { Deno?: { unrefTimer(id: number): void } }).Deno?.unrefTimer(
      drainTimer as unknown as number,
    );
  }
}

function stopDraining(): void {
  if (drainTimer !== undefined) clearInterval(drainTimer);
  drainTimer = undefined;
}

/** Closes every journal (tests; a server shutting down). */
export function closeJournals(): void {
  for (const entry of kept.values()) entry.journal.then((j) => j?.close()).catch(() => {});
  kept.clear();
  refused.clear();
  stopDraining();
}
