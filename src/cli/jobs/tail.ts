import { cutTo } from "../../platform/text_cut.ts";
import { open } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { setTimeout as delay } from "node:timers/promises";
import { LineSplitter } from "../../platform/line_splitter.ts";
import { folderReader } from "../../engines/registry.ts";
import { jobCostText } from "../../jobs/spend/cost.ts";
import { isTerminal } from "../../jobs/record.ts";
import { elapsedMs, jobTokensText } from "../../jobs/job_figures.ts";
import { readFileTail } from "../../platform/file_ends.ts";
import { escapeBlock, escapeLine } from "../../platform/plain_text.ts";
import {
  type CliIo,
  humanDuration,
  type JobsContext,
  noMoreArguments,
  parseCount,
  resolveJobId,
  styleFor,
} from "./common.ts";
import { type ActivityLine, activityLinesOf, withCall } from "./tail_lines.ts";

/** How much of the file's end is read for the first lines, as `tail` does. */
const BACKLOG_BYTES = 256 * 1024;
/** New bytes are read in pieces of this size, so a burst never loads a whole stream. */
const CHUNK_BYTES = 1024 * 1024;
/** Lines longer than this are skipped (they stay on disk). */
const MAX_LINE = 8 * 1024 * 1024;
const RESULT_SHOWN = 100_000;
/** How long the model's latest words may wait for what follows them (see jobsTail). */
const HOLD_MS = 2000;

export interface TailOptions {
  pollMs?: number;
}

/**
 * Follows a file as it grows: reads only the bytes added since the last call, in chunks,
 * and hands complete lines on. A file that shrinks (rewritten) is followed from its start.
 */
export class FileFollower {
  #offset: number;
  #splitter: LineSplitter;

  constructor(readonly path: string, offset: number, onLine: (line: string) => void) {
    this.#offset = offset;
    this.#splitter = new LineSplitter(MAX_LINE, onLine);
  }

  get offset(): number {
    return this.#offset;
  }

  async poll(): Promise<void> {
    let handle;
    try {
      handle = await open(this.path, "r");
    } catch {
      return;
    }
    try {
      const { size } = await handle.stat();
      if (size < this.#offset) this.#offset = 0;
      const buffer = new Uint8Array(CHUNK_BYTES);
      while (this.#offset < size) {
        const want = Math.min(CHUNK_BYTES, size - this.#offset);
        const { bytesRead } = await handle.read(buffer, 0, want, this.#offset);
        if (bytesRead === 0) break;
        this.#offset += bytesRead;
        this.#splitter.push(buffer.slice(0, bytesRead));
      }
    } finally {
      await handle.close();
    }
  }

  /** Delivers a last line without a newline. */
  end(): void {
    this.#splitter.end();
  }
}

/** The last lines of the file's end (at most BACKLOG_BYTES read), and where they stop. */
async function backlog(path: string): Promise<{ lines: string[]; end: number }> {
  const tail = await readFileTail(path, BACKLOG_BYTES);
  if (!tail) return { lines: [], end: 0 };
  // Only whole lines: the last may still be being written, and is read again by the follower.
  const text = tail.text;
  const lastNl = text.lastIndexOf("\n");
  const whole = lastNl === -1 ? "" : text.slice(0, lastNl);
  const tailBytes = new TextEncoder().encode(text.slice(lastNl + 1)).length;
  return { lines: whole === "" ? [] : whole.split("\n"), end: tail.end - tailBytes };
}

/** The last `n` printable lines, with the end events among and after them. */
function lastLines(items: ActivityLine[], n: number): ActivityLine[] {
  let start = items.length;
  let count = 0;
  while (start > 0) {
    const item = items[start - 1]!;
    if (!("end" in item)) {
      if (count === n) break;
      count++;
    }
    start--;
  }
  return items.slice(start);
}

/** `jobs tail ID`: like `tail -f` on a job's activity, until the job ends; then its result. */
export async function jobsTail(
  ctx: JobsContext,
  argv: string[],
  io: CliIo,
  options: TailOptions = {},
): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { lines: { type: "string", short: "n" }, "no-status": { type: "boolean" } },
    strict: true,
    allowPositionals: true,
  });
  const first = parseCount("lines", values.lines, 0) ?? 10;
  const pollMs = options.pollMs ?? 250;
  const id = await resolveJobId(ctx.store, positionals[0], "jobs tail <id>");
  noMoreArguments("jobs tail", positionals.slice(1));
  const live = io.live && values["no-status"] !== true;
  const manager = await ctx.manager();
  let record = (await manager.get(id)).record;
  const folder = await folderReader(record.engine);
  const path = join(ctx.store.dirOf(id), folder.activityFile);
  const read = folder.liveReader();
  const style = styleFor(io);

  let status = false;
  const clearStatus = () => {
    if (status) io.write("\r\x1b[2K");
    status = false;
  };
  // The model's latest words wait until something follows them, so that words that turn
  // out to be the final answer are printed once, in full, below the summary line: they are
  // the answer when the run ends on them (the engine's end event, or the job ending). Words
  // followed by nothing for HOLD_MS while the job runs are printed after all.
  let held: { line: string; said: string; since: number; final: boolean } | undefined;
  const flushHeld = () => {
    if (held) io.out(held.line);
    held = undefined;
  };
  // The tool call running now, for the status line: since when (unknown for one read from
  // the backlog), and whether its output has been seen coming.
  let running: { call: string; since?: number; output: boolean } | undefined;
  const print = (lines: ActivityLine[], backlog = false) => {
    for (const l of lines) {
      if ("end" in l) {
        if (held) held.final = true;
        running = undefined;
        continue;
      }
      if (l.call !== undefined) {
        running = { call: l.call, output: false, ...(backlog ? {} : { since: Date.now() }) };
      } else if (l.output && running) running.output = true;
      else if (!l.output) running = undefined;
      clearStatus();
      flushHeld();
      if (l.said !== undefined) {
        held = { line: l.line, said: l.said, since: Date.now(), final: false };
      } else io.out(l.line);
    }
  };

  const start = await backlog(path);
  const backlogLines = start.lines.flatMap((l) => activityLinesOf(read, l));
  io.out(
    style.dim(
      `--- job ${record.id} (${record.engine}, ${escapeLine(record.model)}` +
        `${record.agent !== undefined ? `, agent ${escapeLine(record.agent)}` : ""}): ` +
        `${record.state} ---`,
    ),
  );
  print(lastLines(backlogLines, first), true);
  const follower = new FileFollower(
    path,
    start.end,
    (l) => print(activityLinesOf(read, l)),
  );

  let lastCheck = 0;
  while (true) {
    await follower.poll();
    if (Date.now() - lastCheck >= 500 || isTerminal(record.state)) {
      lastCheck = Date.now();
      record = (await manager.get(id)).record;
    }
    if (isTerminal(record.state)) break;
    if (held && !held.final && Date.now() - held.since >= HOLD_MS) {
      clearStatus();
      flushHeld();
    }
    if (live) {
      const text = `${record.state} ${humanDuration(elapsedMs(record))} · ` +
        `${record.toolCalls} tool call${record.toolCalls === 1 ? "" : "s"} so far`;
      // One terminal line: a wrapped status line would not be cleared by the next.
      const width = Math.max(20, (io.columns ?? 80) - 1);
      const line = running ? withCall(text, running, folder.runningOutput === true, width) : text;
      io.write(`\r\x1b[2K${style.dim(cutTo(line, width))}`);
      status = true;
    }
    await delay(pollMs);
  }
  await follower.poll();
  follower.end();
  clearStatus();

  const result = await ctx.store.readResultText(id, RESULT_SHOWN);
  const figures = [
    `${style.state(record.state)} after ${humanDuration(elapsedMs(record))}`,
    `${record.toolCalls} tool call${record.toolCalls === 1 ? "" : "s"}`,
    ...(record.usage ? [`tokens ${jobTokensText(record)}`] : []),
    `cost ${jobCostText(record, ctx.settings.pricing)}`,
  ];
  const said = held?.said.trim();
  if (held && !(said && result.text.includes(said))) io.out(held.line);
  io.out(style.bold(`--- ${figures.join(" · ")} ---`));
  if (record.errorText && record.state !== "completed") {
    io.out(`error: ${escapeLine(record.errorText)}`);
  }
  if (result.length === 0) io.out("(no result text)");
  else {
    io.out(escapeBlock(result.text));
    if (result.length > RESULT_SHOWN) {
      io.out(
        `... [first ${RESULT_SHOWN} of ${result.length} chars; all: ${ctx.store.resultPath(id)}]`,
      );
    }
  }
  return record.state === "completed" ? 0 : 1;
}
