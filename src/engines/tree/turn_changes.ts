/**
 * What a turn changed in its directories, found the same way on both engines and never from
 * the model's account, at a cost that does not grow with the tree.
 *
 * Where it can (Linux, under Deno), each root gets a change journal (journal.ts) when a
 * turn first works there, kept while the server runs and closed after IDLE_MS without a turn:
 * a turn then costs a read of the events since it started, and the identity scan at its start
 * (src/guard/identities.ts) lists folders from the journal's memory (or, where the tree is
 * walked, from what the walk read). Setting one up costs a walk
 * of the folders (0.3 s for 100,000 files in 5,000 folders, measured), once. Elsewhere, and for
 * a root that cannot have one (too many folders, the watch limit), the tree is walked
 * (snapshot.ts): its folders at the start, its files' change times at the end. A journal
 * that stops trusting itself in the middle of a turn (its queue overflowed), or cannot name
 * every file a write reached, is completed by that walk for files changed since the turn
 * began.
 *
 * Whatever could not be known is said in `partial`, which the reply shows on its `files:` line.
 */
import type { LinuxFs } from "../../platform/posix/inotify.ts";
import { linuxFs } from "../../platform/posix/inotify.ts";
import { helperFs } from "../../platform/posix/inotify_helper.ts";
import { journalFor, touch } from "./journal_registry.ts";
import type { ListedEntry } from "../../guard/host_run_scan.ts";
import type { JournalLimits, Sentinel, TreeJournal } from "./journal.ts";
import {
  changeClockMs,
  type ChangedFound,
  changedSince,
  nestedWalk,
  plantedWarnings,
} from "./snapshot.ts";
import type { TurnSink } from "../types.ts";
import { formatCount } from "../../platform/count_text.ts";
import { storesBehindLinks } from "../../guard/known_stores.ts";

/** What a turn changed. */
export interface ChangeReport {
  /** Files created or changed (absolute, sorted). */
  files: string[];
  /** Why `files` may miss some, when it may. */
  partial?: string;
}

/** One turn's view of its directories' changes, from its start to `end()`. */
export interface TurnChanges {
  /** How the identity scan lists folders from memory (a journal), when it can. */
  readonly list?: (dir: string) => ListedEntry[] | undefined;
  /**
   * `.git` entries below the top of the roots, at any depth (dependencies too), and credential
   * stores; undefined when the turn did not look (no journal, and no walk asked for). `capped`:
   * the walk stopped at its limit, and the lists may miss some.
   */
  readonly nested?: {
    nestedGit: string[];
    credentials: string[];
    capped?: boolean;
    /** A folder could not be read (or watched): what it holds is not in the lists. */
    unread?: boolean;
    /**
     * Those of `credentials` a link led to (guard/known_stores.ts storesBehindLinks): by name
     * they are no store once the link is gone, so the engines remember them by identity.
     */
    linked?: string[];
  };
  /** How the changes are found: "journal" or "walk" (undefined: not at all). */
  readonly how?: "journal" | "walk";
  /**
   * A sentinel over paths a sandbox holds on to (see TreeJournal.sentinel), when the turn has
   * journals; closed with the turn.
   */
  sentinel?(paths: readonly string[]): Sentinel;
  /** What changed since the start. Once only; later calls give the same report. */
  end(): Promise<ChangeReport>;
  /** Stops watching for this turn without a report (a turn that never ran). */
  release(): void;
}

/**
 * Why the turn's list of credential stores (and nested `.git`) may miss some, or undefined when
 * it holds them all: a sandbox that hides stores by that list alone must not rely on it then.
 */
export function storesUnknown(nested: TurnChanges["nested"]): string | undefined {
  if (nested === undefined) return "the directories were not searched";
  if (nested.capped) return "the search of the directories stopped at its limit";
  if (nested.unread) return "a folder in them could not be read";
  return undefined;
}

export interface BeginOptions {
  /** Walk the tree when no journal can be kept (the native engine: when Bash can run). */
  walk: boolean;
  /**
   * The calls behind journals; null: none (walk). Defaults to linuxFs() under Deno, and on Node
   * to helperFs() (inotify through a Python helper), where the walks keep Node's own calls.
   */
  fs?: LinuxFs | null;
  limits?: JournalLimits;
  /** Entries a walk looks at (tests). */
  walkLimit?: number;
}

/** Entries a walk looks at, for the folders or for changed files, before it stops. */
const WALK_LIMIT = 2_000_000;

/** Starts watching `roots` (real paths) for one turn. */
export async function beginTurnChanges(
  roots: readonly string[],
  options: BeginOptions,
): Promise<TurnChanges> {
  const walkFs = options.fs === undefined ? linuxFs() : options.fs ?? undefined;
  const fs = options.fs === undefined ? linuxFs() ?? helperFs() : walkFs;
  // A turn that would not walk (no Bash on the native engine) uses journals kept already, and
  // sets none up for itself: setting one up costs about what the walk costs.
  const journals = fs
    ? await Promise.all(roots.map((r) => journalFor(r, fs, options.limits, options.walk)))
    : [];
  if (fs && journals.every((j) => j !== undefined)) {
    // Read once the journals are there (the Node route's helper runs then): nothing the
    // delegate does comes before this.
    const started = changeClockMs(fs);
    const turn = journalTurn(roots, journals as TreeJournal[], started, fs);
    // Listening reads the events queued since the last turn: a queue that overflowed in
    // between (an `npm ci` by the user, a burst from another job), or a root moved, stops the
    // journal there, and a stopped one knows no nested `.git` or credential store. The walk
    // finds them instead (the registry builds a new journal for the next turn).
    if (journals.every((j) => j!.invalid === undefined)) return turn;
    turn.release();
  }
  if (!options.walk) return { end: () => Promise.resolve({ files: [] }), release() {} };
  const limit = options.walkLimit ?? WALK_LIMIT;
  // What the walk read is what the identity scan would read again, at the same moment (before
  // the delegate runs): it lists from the walk's memory, as from a journal's.
  const listed = new Map<string, ListedEntry[]>();
  const walked = await nestedWalk(roots, limit, listed, walkFs);
  const { throughLinks = [], ...found } = walked;
  const linked = storesBehindLinks([...found.credentials, ...throughLinks], roots);
  const nested = { ...found, credentials: [...found.credentials, ...linked], linked };
  // After the walk of the folders: what changed while it ran is no delegate's doing.
  const since = changeClockMs(fs);
  let report: Promise<ChangeReport> | undefined;
  return {
    how: "walk",
    nested,
    list: (dir) => listed.get(dir),
    end: () =>
      // Through libc where it can be had (Deno on Linux, past a journal's limits): it gives
      // the change time to the nanosecond and every name's bytes.
      report ??= changedSince(roots, since, limit, walkFs).then((found) => {
        const partial = [
          ...(found.capped
            ? [
              `the job's directories hold over ${
                formatCount(limit)
              } entries, and the walk for changed files stopped there`,
            ]
            : []),
          ...unnamedText(found),
        ];
        return {
          files: found.files,
          ...(partial.length > 0 ? { partial: partial.join("; ") } : {}),
        };
      }),
    release() {},
  };
}

/** Folders named in the partial text at most; the rest are counted. */
const UNNAMED_SHOWN = 3;

/**
 * What a walk could not name: entries whose names are not UTF-8, where the runtime gives only
 * decoded names (Deno without libc), so neither they nor what is in them can be looked at.
 */
function unnamedText(found: ChangedFound): string[] {
  if (found.unnamed.length === 0) return [];
  const count = found.unnamed.reduce((n, u) => n + u.count, 0);
  const shown = found.unnamed.slice(0, UNNAMED_SHOWN).map((u) => `"${u.dir}"`).join(", ");
  const more = found.unnamed.length > UNNAMED_SHOWN
    ? ` and ${found.unnamed.length - UNNAMED_SHOWN} more folders`
    : "";
  const what = count === 1 ? "1 entry" : `${count} entries`;
  const names = count === 1 ? "its name is" : "their names are";
  return [
    `${what} in ${shown}${more} cannot be looked at: ${names} not UTF-8, which this runtime ` +
    "cannot read",
  ];
}

/**
 * Reports the files the turn changed, warns of files planted where the host would run them
 * (relative to the first root, the cwd), and says when the list may miss some.
 */
export async function reportChanges(
  changes: TurnChanges,
  roots: readonly string[],
  sink: TurnSink,
): Promise<void> {
  const report = await changes.end();
  for (const path of report.files) sink.fileChanged?.(path);
  for (const text of plantedWarnings(report.files, roots)) sink.warning?.(text);
  if (report.partial) sink.changesPartial?.(report.partial);
  // A turn that neither kept a journal nor walked saw nothing: its empty report is no "none".
  if (changes.how !== undefined) sink.changesTracked?.();
}

function journalTurn(
  roots: readonly string[],
  journals: TreeJournal[],
  started: number,
  fs: LinuxFs,
): TurnChanges {
  const tokens = journals.map((j) => j.listen());
  const byRoot = new Map(roots.map((r, i) => [r, journals[i]!]));
  let released = false;
  const sentinels: Sentinel[] = [];
  const release = () => {
    if (released) return;
    released = true;
    for (const s of sentinels) s.close();
    journals.forEach((j, i) => j.release(tokens[i]!));
    for (const root of roots) touch(root);
  };
  let report: Promise<ChangeReport> | undefined;
  const nested = {
    nestedGit: [] as string[],
    credentials: [] as string[],
    unread: journals.some((j) => j.blind().length > 0),
    linked: [] as string[],
  };
  const throughLinks: string[] = [];
  for (const journal of journals) {
    const found = journal.nested();
    nested.nestedGit.push(...found.nestedGit);
    nested.credentials.push(...found.credentials);
    throughLinks.push(...found.throughLinks);
  }
  nested.linked = storesBehindLinks([...nested.credentials, ...throughLinks], roots);
  nested.credentials.push(...nested.linked);
  const inRoot = (path: string, root: string) => path.startsWith(`${root}/`);
  return {
    how: "journal",
    nested,
    sentinel: (paths) => {
      const parts = journals.map((j, i) => j.sentinel(paths.filter((p) => inRoot(p, roots[i]!))));
      const outside = paths.some((p) => !roots.some((r) => inRoot(p, r)));
      sentinels.push(...parts);
      return {
        // Every part is asked, so that each starts afresh.
        dirty: () => parts.map((s) => s.dirty()).some(Boolean) || outside || released,
        close: () => parts.forEach((s) => s.close()),
      };
    },
    list: (dir) => {
      for (const [root, journal] of byRoot) {
        if (dir === root || dir.startsWith(`${root}/`)) return journal.list(dir);
      }
      return undefined;
    },
    end: () =>
      report ??= (async () => {
        const files = new Set<string>();
        const partial: string[] = [];
        for (const [i, journal] of journals.entries()) {
          const found = journal.changes(tokens[i]!);
          if ("files" in found) { for (const f of found.files) files.add(f); }
          // The journal stopped, or cannot name every file a write reached: what changed is
          // found by change time too.
          const why = "files" in found ? found.walk : `watching it stopped: ${found.unknown}`;
          if (why !== undefined) {
            const since = await changedSince([roots[i]!], started, WALK_LIMIT, fs);
            for (const f of since.files) files.add(f);
            if (since.capped) {
              partial.push(
                `"${roots[i]}" was walked (${why}) and the walk stopped at ` +
                  `${formatCount(WALK_LIMIT)} entries`,
              );
            }
            partial.push(...unnamedText(since));
          }
          for (const b of journal.blind().slice(0, 3)) {
            partial.push(`changes inside "${b.path}" cannot be seen (${b.why})`);
          }
        }
        release();
        return {
          files: [...files].sort(),
          ...(partial.length > 0 ? { partial: partial.join("; ") } : {}),
        };
      })(),
    release,
  };
}

export { closeJournals } from "./journal_registry.ts";
