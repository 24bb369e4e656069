import { mkdirSync } from "node:fs";
import { join } from "node:path";

/**
 * The files the job layer keeps in a job's folder, `<stateDir>/<job id>/`. Each engine keeps
 * its own files there too and alone reads them (see JobFolderReader in engines/types.ts).
 * prompt.txt, result.txt and result.json have the names and shapes of the folders
 * claude-ollama-delegate-mcp wrote, so those read back (record.ts recordFromResultSummary).
 */
export const JOB_FILES = {
  /** The durable record of one turn (record.ts). */
  record: "job.json",
  /** The prompt the engine is given. */
  prompt: "prompt.txt",
  /** The final text of a finished job. */
  result: "result.txt",
  /** A finished job's outcome in a fixed shape, for scripts (record.ts resultSummary). */
  resultSummary: "result.json",
  /** Another process asks the owning server to cancel the job (remote_cancel.ts). */
  cancelRequest: "cancel.request",
  /** A review job's diff and line map (review/review_file.ts); only when the record's kind says. */
  review: "review.json",
  /** A review panel's merged findings, in its first member's folder (review/outcome.ts). */
  panel: "panel.json",
} as const;

/** The state dir's folder of session indexes and turn tickets (queue/turn_queue.ts). */
export const SESSIONS_DIR = ".sessions";

/**
 * The state dir's folder of the listings' index (list_index.ts): not the state dir itself,
 * whose modification time the index relies on.
 */
export const LIST_INDEX_DIR = ".list";

/**
 * Creates the state dir and its sessions and index folders, private to the user. Cheap, whatever the
 * number of jobs: the server does it before it answers `initialize`, to fail early.
 */
export function prepareStateDir(stateDir: string): void {
  mkdirSync(join(stateDir, SESSIONS_DIR), { recursive: true, mode: 0o700 });
  // Made now, not at the first listing: making it changes the state dir's modification time.
  mkdirSync(join(stateDir, LIST_INDEX_DIR), { recursive: true, mode: 0o700 });
}
