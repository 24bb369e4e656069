import { mkdir, readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "../platform/atomic_write.ts";
import { isValidId } from "./ids.ts";
import { JOB_FILES, prepareStateDir, SESSIONS_DIR } from "./job_folder.ts";
import type { ProcessIdentity } from "../platform/process_identity.ts";
import {
  type JobRecord,
  jobRecordSchema,
  recordFromResultSummary,
  resultSummary,
} from "./record.ts";
import { TurnQueues, type TurnTicket } from "./queue/turn_queue.ts";
import { ListIndex } from "./list_index.ts";

/** Who asked another process to cancel a job: a terminal (`jobs cancel`) or a session. */
export type CancelSource = "terminal" | "session";

export type ReadResult =
  | { kind: "ok"; record: JobRecord }
  | { kind: "missing" }
  | { kind: "corrupt"; reason: string };

/** How often the end of a job that could not be written (a full disk) is tried again. */
const RETRY_UNWRITTEN_MS = 5000;

/**
 * The job folders under `stateDir`: `<id>/job.json` and the files of JOB_FILES.
 * Ids are checked before any path is built, so nothing from a tool call reaches outside
 * `stateDir`.
 */
export class JobStore {
  readonly sessionsDir: string;
  /** Turn tickets: one turn per session at a time, across server processes. */
  readonly turns: TurnQueues;
  /** Ended jobs' creation times and states, for listings (list_index.ts). */
  readonly listIndex: ListIndex;

  constructor(readonly stateDir: string) {
    this.sessionsDir = join(stateDir, SESSIONS_DIR);
    this.turns = new TurnQueues(this.sessionsDir);
    this.listIndex = new ListIndex(stateDir);
  }

  /** Creates the folders once; cheap and independent of how many jobs exist. */
  init(): void {
    prepareStateDir(this.stateDir);
  }

  dirOf(id: string): string {
    if (!isValidId(id)) throw new TypeError(`Invalid job id "${id}"`);
    return join(this.stateDir, id.toLowerCase());
  }

  /** The prompt file of a job, which its engine reads. */
  promptPath(id: string): string {
    return join(this.dirOf(id), JOB_FILES.prompt);
  }

  /** The whole final text of a finished job. */
  resultPath(id: string): string {
    return join(this.dirOf(id), JOB_FILES.result);
  }

  /** The job record's file. */
  recordPath(id: string): string {
    return join(this.dirOf(id), JOB_FILES.record);
  }

  async create(record: JobRecord, prompt: string): Promise<void> {
    const dir = this.dirOf(record.id);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await writeFileAtomic(join(dir, JOB_FILES.prompt), prompt);
    await this.write(record);
  }

  readonly #writes = new Map<string, Promise<void>>();

  /**
   * Writes `job.json`: the record as it is at this call. Writes of one job run one after
   * another, in the order they were asked for, so the file ends with the newest one even when
   * callbacks of a running job write concurrently.
   */
  write(record: JobRecord): Promise<void> {
    const path = this.recordPath(record.id);
    // Serialised now: a write that waits behind another must not pick up what changed since,
    // such as the end state, set before the result files are written (writeFinal).
    const text = JSON.stringify(record, null, 2);
    const previous = this.#writes.get(record.id) ?? Promise.resolve();
    const next = previous.catch(() => {}).then(() => writeFileAtomic(path, text));
    this.#writes.set(record.id, next);
    next.finally(() => {
      if (this.#writes.get(record.id) === next) this.#writes.delete(record.id);
    }).catch(() => {});
    return next;
  }

  /** Writes a finished job's `result.txt` (its final text) and `result.json` (its outcome). */
  async writeResult(record: JobRecord, text: string): Promise<void> {
    const dir = this.dirOf(record.id);
    await writeFileAtomic(join(dir, JOB_FILES.result), text);
    await writeFileAtomic(
      join(dir, JOB_FILES.resultSummary),
      JSON.stringify(resultSummary(record), null, 2),
    );
  }

  /** Ends of jobs this process could not write yet, by id: the truth until they are written. */
  readonly #unwritten = new Map<string, { record: JobRecord; text: string }>();
  #retry: ReturnType<typeof setInterval> | undefined;

  /**
   * Writes the end of a job: the result files, then `job.json`, so that whoever reads an
   * ended record (another server, `jobs tail`) finds its result in place. When that fails (a full
   * disk), the record and text are kept in memory, served by `read` and `readResultText`,
   * and written again every few seconds until it works; the error is rethrown.
   */
  async writeFinal(record: JobRecord, text: string): Promise<void> {
    const id = record.id.toLowerCase();
    try {
      await this.writeResult(record, text);
      await this.write(record);
      this.#unwritten.delete(id);
    } catch (e) {
      this.#unwritten.set(id, { record, text });
      this.#retry ??= setInterval(() => void this.#writeUnwritten(), RETRY_UNWRITTEN_MS);
      // Never keeps the process alive on its own.
      (this.#retry as { unref?: () => void }).unref?.();
      throw e;
    }
  }

  async #writeUnwritten(): Promise<void> {
    for (const [id, { record, text }] of this.#unwritten) {
      try {
        await this.writeResult(record, text);
        await this.write(record);
        this.#unwritten.delete(id);
      } catch {
        // Still failing: try again on the next tick.
      }
    }
    if (this.#unwritten.size === 0) {
      clearInterval(this.#retry);
      this.#retry = undefined;
    }
  }

  /** Whether the end of job `id` is kept in memory because it could not be written yet. */
  isUnwritten(id: string): boolean {
    return this.#unwritten.has(id.toLowerCase());
  }

  /** One last try at writing what could not be written, e.g. before the process exits. */
  async flushUnwritten(): Promise<void> {
    await this.#writeUnwritten();
  }

  async read(id: string): Promise<ReadResult> {
    if (!isValidId(id)) return { kind: "missing" };
    const pending = this.#unwritten.get(id.toLowerCase());
    if (pending) return { kind: "ok", record: pending.record };
    const dir = this.dirOf(id);
    const text = await readText(join(dir, JOB_FILES.record));
    if (text !== undefined) {
      let raw: unknown;
      try {
        raw = JSON.parse(text);
      } catch (e) {
        return { kind: "corrupt", reason: `job.json is not valid JSON (${(e as Error).message})` };
      }
      const parsed = jobRecordSchema.safeParse(raw);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        return {
          kind: "corrupt",
          reason: `job.json does not match the record format (${
            issue?.path.join(".")
          }: ${issue?.message})`,
        };
      }
      if (parsed.data.id.toLowerCase() !== id.toLowerCase()) {
        return { kind: "corrupt", reason: `job.json names another job (${parsed.data.id})` };
      }
      return { kind: "ok", record: parsed.data };
    }
    const legacy = await readText(join(dir, JOB_FILES.resultSummary));
    if (legacy === undefined) return { kind: "missing" };
    try {
      const prompt = (await readText(join(dir, JOB_FILES.prompt))) ?? "";
      const record = recordFromResultSummary(JSON.parse(legacy), prompt);
      if (record && record.id.toLowerCase() === id.toLowerCase()) return { kind: "ok", record };
    } catch {
      // Fall through to "corrupt".
    }
    return { kind: "corrupt", reason: "result.json is not a readable job result" };
  }

  /** Final text of a finished job (`result.txt`), up to `maxChars`, and its full length. */
  async readResultText(id: string, maxChars: number): Promise<{ text: string; length: number }> {
    const pending = this.#unwritten.get(id.toLowerCase());
    const text = pending?.text ?? (await readText(this.resultPath(id))) ?? "";
    return { text: text.slice(0, maxChars), length: text.length };
  }

  /**
   * Asks the server process that runs a job to cancel it (`jobs cancel` from a terminal):
   * that process watches for this file while the job is live.
   */
  async requestCancel(id: string, by: ProcessIdentity, from: CancelSource): Promise<void> {
    await writeFileAtomic(
      join(this.dirOf(id), JOB_FILES.cancelRequest),
      JSON.stringify({ by, at: Date.now(), from }),
    );
  }

  /** Whether someone asked for the job to be cancelled. */
  async cancelRequested(id: string): Promise<CancelSource | undefined> {
    let text: string;
    try {
      text = await readFile(join(this.dirOf(id), JOB_FILES.cancelRequest), "utf8");
    } catch {
      return undefined;
    }
    try {
      const from = (JSON.parse(text) as { from?: unknown }).from;
      return from === "session" ? "session" : "terminal";
    } catch {
      // Half written or from an older version: still a request.
      return "terminal";
    }
  }

  /** Every job id with a folder here, without reading the records. */
  async ids(): Promise<string[]> {
    let entries;
    try {
      entries = await readdir(this.stateDir, { withFileTypes: true });
    } catch {
      return [];
    }
    return entries.filter((e) => e.isDirectory() && isValidId(e.name)).map((e) => e.name);
  }

  // --- sessions -------------------------------------------------------------------------

  /**
   * The job ids of a session's turns: its index file, then any turn whose ticket the index
   * misses (two processes that add a turn at once can each overwrite the other's index).
   */
  async sessionJobs(sessionId: string): Promise<string[]> {
    const jobs = await this.#indexedJobs(sessionId);
    const known = new Set(jobs.map((j) => j.toLowerCase()));
    for (const ticket of await this.#tickets(sessionId)) {
      if (ticket.jobId !== "" && !known.has(ticket.jobId)) {
        known.add(ticket.jobId);
        jobs.push(ticket.jobId);
      }
    }
    return jobs;
  }

  /** The session's turn tickets; none when they cannot be read (the index alone then). */
  async #tickets(sessionId: string): Promise<TurnTicket[]> {
    try {
      return await this.turns.queue(sessionId).tickets();
    } catch {
      return [];
    }
  }

  async #indexedJobs(sessionId: string): Promise<string[]> {
    const text = await readText(this.#sessionFile(sessionId));
    if (text === undefined) return [];
    try {
      const raw = JSON.parse(text) as { jobs?: unknown };
      return Array.isArray(raw.jobs)
        ? raw.jobs.filter((j): j is string => typeof j === "string")
        : [];
    } catch {
      return [];
    }
  }

  async addSessionJob(sessionId: string, jobId: string): Promise<void> {
    const jobs = await this.#indexedJobs(sessionId);
    if (!jobs.includes(jobId)) jobs.push(jobId);
    await writeFileAtomic(this.#sessionFile(sessionId), JSON.stringify({ sessionId, jobs }));
  }

  #sessionFile(sessionId: string): string {
    if (!isValidId(sessionId)) throw new TypeError(`Invalid session id "${sessionId}"`);
    return join(this.sessionsDir, `${sessionId.toLowerCase()}.json`);
  }
}

async function readText(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw e;
  }
}
