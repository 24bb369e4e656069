import { mkdirSync } from "node:fs";
import { join } from "node:path";

/**
 * The files the job layer keeps in a job's folder, `<stateDir>/<job id>/`. Each engine keeps
 * its own files there too and alone reads them (see JobFolderReader in engines/types.ts).
 * The names of the first four are those claude-ollama-delegate-mcp used, so its folders read
 * back.
 */
export const JOB_FILES = {
  /** The durable record of one turn (record.ts). */
  record: "job.json",
  /** The prompt the engine is given. */
  prompt: "prompt.txt",
  /** The final text of a finished job. */
  result: "result.txt",
  /** The summary claude-ollama-delegate-mcp kept, still written for tools that read it. */
  seedResult: "result.json",
  /** Another process asks the owning server to cancel the job (remote_cancel.ts). */
  cancelRequest: "cancel.request",
} as const;

/** The state dir's folder of session indexes and turn tickets (line/turn_line.ts). */
export const SESSIONS_DIR = ".sessions";

/**
 * Creates the state dir and its sessions folder, private to the user. Cheap, whatever the
 * number of jobs: the server does it before it answers `initialize`, to fail early.
 */
export function prepareStateDir(stateDir: string): void {
  mkdirSync(join(stateDir, SESSIONS_DIR), { recursive: true, mode: 0o700 });
}
