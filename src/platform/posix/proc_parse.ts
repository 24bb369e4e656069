/**
 * Pure parsers for POSIX process tables. They touch no OS state so they can be unit-tested on
 * any platform, including the macOS `ps` format while running on Linux.
 */

/** One process as seen by the tree walker. */
export interface ProcInfo {
  pid: number;
  ppid: number;
  /**
   * Opaque token that changes when the pid is reused by a different process. Linux: field 22
   * (starttime, clock ticks since boot) of /proc/<pid>/stat. macOS and other POSIX: `lstart`
   * from ps (one-second resolution, so it is a weaker guard there).
   */
  startTime: string;
}

/** ProcInfo plus the liveness detail the kill loop needs but callers of listDescendants do not. */
export interface ProcRecord extends ProcInfo {
  /** Zombies (and Linux "X"/dead tasks) have already exited; they only wait to be reaped. */
  zombie: boolean;
  /** Stopped by a signal (state T, or t when traced); absent when the source cannot tell. */
  stopped?: boolean;
}

/** A pid -> record table, i.e. one snapshot of the process list. */
export type ProcTable = ReadonlyMap<number, ProcRecord>;

function parsePid(text: string | undefined): number | null {
  if (text === undefined || !/^\d+$/.test(text)) return null;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : null;
}

function isDeadState(state: string): boolean {
  // Z = zombie; X = dead (briefly visible while being torn down on Linux).
  return state.startsWith("Z") || state.startsWith("X");
}

/**
 * Parse the single line of /proc/<pid>/stat.
 *
 * The second field is the command name in parentheses and is chosen by the process itself
 * (prctl/exec name), so it may contain spaces and parentheses, e.g. `(a) (b)`. Field splitting
 * therefore starts after the LAST ')' in the line; everything before it belongs to pid + comm.
 * Returns null for anything malformed so a racing/garbled read is skipped rather than fatal.
 */
export function parseProcStat(line: string): ProcRecord | null {
  const open = line.indexOf("(");
  const close = line.lastIndexOf(")");
  if (open < 1 || close < open) return null;
  const pid = parsePid(line.slice(0, open).trim());
  // After ")" come fields 3.. separated by single spaces: state(3) ppid(4) ... starttime(22).
  const rest = line.slice(close + 1).trim().split(/\s+/);
  const state = rest[0];
  const ppid = parsePid(rest[1]);
  const startTime = rest[22 - 3];
  if (pid === null || ppid === null || state === undefined || startTime === undefined) return null;
  if (!/^\d+$/.test(startTime)) return null;
  return { pid, ppid, startTime, zombie: isDeadState(state), stopped: /^[Tt]/.test(state) };
}

/**
 * Parse the output of `ps -A -o pid=,ppid=,stat=,lstart=` (LC_ALL=C).
 *
 * lstart itself contains spaces ("Mon Nov  3 09:05:01 2025", with a padded day), so only the
 * first three columns are split off and the remainder is the start time, whitespace-collapsed
 * so that column padding differences between runs cannot make a live process look reused.
 * Unparseable lines (headers, blank lines, truncated output) are skipped.
 */
export function parsePsOutput(text: string): ProcRecord[] {
  const out: ProcRecord[] = [];
  for (const raw of text.split("\n")) {
    const m = /^\s*(\d+)\s+(\d+)\s+(\S+)\s+(\S.*?)\s*$/.exec(raw);
    if (m === null) continue;
    const pid = parsePid(m[1]);
    const ppid = parsePid(m[2]);
    const state = m[3];
    const lstart = m[4];
    if (pid === null || ppid === null || state === undefined || lstart === undefined) continue;
    out.push({
      pid,
      ppid,
      startTime: lstart.replace(/\s+/g, " "),
      zombie: isDeadState(state),
      stopped: state.startsWith("T"),
    });
  }
  return out;
}

/** Build a pid -> record table; a later duplicate pid wins (it cannot happen in one snapshot). */
export function toTable(records: Iterable<ProcRecord>): Map<number, ProcRecord> {
  const table = new Map<number, ProcRecord>();
  for (const r of records) table.set(r.pid, r);
  return table;
}

/**
 * All processes below `roots` in the parent relation, breadth-first, excluding the roots
 * themselves. Several roots are accepted because the kill loop must also search below
 * already-known members whose own parent died (they were reparented out of the root's subtree
 * but are still ours). A visited set makes bogus cycles (pid 0 on some systems has ppid 0)
 * harmless.
 */
export function collectDescendants<T extends { pid: number; ppid: number }>(
  table: Iterable<T>,
  roots: number | Iterable<number>,
): T[] {
  const children = new Map<number, T[]>();
  for (const p of table) {
    if (p.pid === p.ppid) continue;
    const list = children.get(p.ppid);
    if (list === undefined) children.set(p.ppid, [p]);
    else list.push(p);
  }
  const rootList = typeof roots === "number" ? [roots] : [...roots];
  const seen = new Set<number>(rootList);
  const queue = [...rootList];
  const out: T[] = [];
  for (let i = 0; i < queue.length; i++) {
    const parent = queue[i];
    if (parent === undefined) continue;
    for (const child of children.get(parent) ?? []) {
      if (seen.has(child.pid)) continue;
      seen.add(child.pid);
      out.push(child);
      queue.push(child.pid);
    }
  }
  return out;
}
