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
/**
 * How often while a turn listens: a file made and removed is taken for temporary only when
 * the journal looked at it in between (journal.ts, temporaryFiles), and Claude Code's sandbox
 * keeps its mount points for little more than a command (about 200 ms measured, issue 34).
 */
const LISTENING_DRAIN_MS = 20;
interface Kept {
  journal: Promise<TreeJournal | undefined>;
  /** The journal once set up, for the timer that reads it. */
  opened?: TreeJournal;
  lastUsed: number;
}

const kept = new Map<string, Kept>();
/** Roots whose journal could not be set up: until when, and why. */
const refused = new Map<string, { until: number; why: string }>();
let drainTimer: ReturnType<typeof setTimeout> | undefined;

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
  const added: Kept = { journal, lastUsed: Date.now() };
  kept.set(root, added);
  startDraining();
  const opened = await journal;
  if (opened) added.opened = opened;
  return opened;
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
  const tick = () => {
    const now = Date.now();
    let listening = false;
    for (const [root, entry] of kept) {
      // One still being set up is left to its promise; the others are read now.
      const journal = entry.opened;
      if (!journal) continue;
      if (journal.invalid || (!journal.listening && now - entry.lastUsed > IDLE_MS)) {
        journal.close();
        if (kept.get(root) === entry) kept.delete(root);
      } else {
        journal.drain();
        listening ||= journal.listening;
      }
    }
    drainTimer = undefined;
    if (kept.size > 0) schedule(listening ? LISTENING_DRAIN_MS : DRAIN_MS);
  };
  const schedule = (ms: number) => {
    drainTimer = setTimeout(tick, ms);
    // Journals must not keep the server alive (Deno's timers are numbers; Node's objects).
    const timer = drainTimer as unknown as { unref?: () => void };
    if (typeof timer.unref === "function") timer.unref();
    else {
      (globalThis as { Deno?: { unrefTimer(id: number): void } }).Deno?.unrefTimer(
        drainTimer as unknown as number,
      );
    }
  };
  schedule(DRAIN_MS);
}

function stopDraining(): void {
  if (drainTimer !== undefined) clearTimeout(drainTimer);
  drainTimer = undefined;
}

/** Closes every journal (tests; a server shutting down). */
export function closeJournals(): void {
  for (const entry of kept.values()) entry.journal.then((j) => j?.close()).catch(() => {});
  kept.clear();
  refused.clear();
  stopDraining();
}
