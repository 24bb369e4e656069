/**
 * delegate_transcript's pages: a job's activity file read through its engine's reader, from
 * the nearest known checkpoint, page by page. Loaded at the first call, not at start-up.
 */
import { stat } from "node:fs/promises";
import { join } from "node:path";
import type { z } from "zod";
import { folderReader } from "../engines/registry.ts";
import type { TranscriptEntry } from "../engines/types.ts";
import type { JobManager } from "../jobs/manager.ts";
import { isTerminal } from "../jobs/record.ts";
import { TRANSCRIPT_PAGE, type transcriptShape } from "./shapes.ts";
import { type FileIdentity, TranscriptIndex } from "./transcript_index.ts";
import { readLines } from "../platform/file_lines.ts";
import {
  byteLength,
  cutToBytes,
  type PageEntry,
  renderEntry,
  renderTranscriptPage,
  type TranscriptPage,
} from "./transcript_render.ts";

export {
  cutToBytes,
  type PageEntry,
  renderEntry,
  renderTranscriptPage,
  type TranscriptPage,
} from "./transcript_render.ts";

/** Same limit as the engines' own readers: a longer line is skipped, not parsed. */
const MAX_LINE = 32 * 1024 * 1024;
/** A checkpoint every this many entries while scanning, besides one at each page's end. */
const STRIDE = 64;
/** Bytes kept for the page's header and footer lines, besides the file's path. */
const FRAME_BYTES = 400;
const SHORT_FIELD = 120;

/** Checkpoints of every transcript this process has paged through (bounded). */
const sharedIndex = new TranscriptIndex();

export type TranscriptArgs = z.infer<z.ZodObject<typeof transcriptShape>>;

export interface PageOptions {
  offset?: number | undefined;
  limit?: number | undefined;
  maxBytes?: number | undefined;
}

/**
 * One page of a job's transcript: entries `offset`.. (at most `limit`) whose rendering fits
 * in `maxBytes`. Reads the file as a stream from the nearest known checkpoint and stops as
 * soon as the page is full, so a page costs about its own bytes even on a huge transcript.
 */
export async function readTranscriptPage(
  dir: string,
  engine: string,
  options: PageOptions = {},
  index: TranscriptIndex = sharedIndex,
): Promise<TranscriptPage> {
  const { defaultLimit, maxLimit, defaultMaxBytes, minMaxBytes } = TRANSCRIPT_PAGE;
  const offset = options.offset ?? 0;
  const limit = options.limit ?? defaultLimit;
  const maxBytes = options.maxBytes ?? defaultMaxBytes;
  if (!Number.isInteger(offset) || offset < 0) {
    throw new RangeError(`offset must be a whole number >= 0, not ${offset}`);
  }
  if (!Number.isInteger(limit) || limit < 1 || limit > maxLimit) {
    throw new RangeError(`limit must be a whole number from 1 to ${maxLimit}, not ${limit}`);
  }
  if (!Number.isInteger(maxBytes) || maxBytes < minMaxBytes) {
    throw new RangeError(`maxBytes must be a whole number >= ${minMaxBytes}, not ${maxBytes}`);
  }
  const folder = await folderReader(engine);
  const path = join(dir, folder.activityFile);
  const page: TranscriptPage = {
    engine,
    path,
    missing: false,
    offset,
    maxBytes,
    entries: [],
    skippedLines: 0,
    bytesRead: 0,
  };
  let file: FileIdentity;
  try {
    const info = await stat(path);
    file = { dev: info.dev, ino: info.ino, size: info.size };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
    return { ...page, missing: true, total: 0 };
  }

  const parse = folder.transcriptReader();
  const budget = maxBytes - FRAME_BYTES - byteLength(path);
  const fieldCap = Math.max(128, Math.floor(maxBytes / 4));
  const start = index.nearest(path, file, offset);
  let nextIndex = start.index;
  let lastPoint = start.index;
  let anchor = start;
  let used = 0;

  page.bytesRead = await readLines(path, start.offset, MAX_LINE, (line) => {
    if (line.text?.trim() === "") return true;
    const list = line.text === undefined ? undefined : parse(line.text);
    if (list === undefined) {
      // A last line without a newline may be one a running delegate is still writing.
      if (line.terminated && nextIndex >= offset) page.skippedLines++;
      return true;
    }
    if (list.length === 0) return true;
    const first = nextIndex;
    nextIndex += list.length;
    // Checkpoints go on lines that do not start with a tool result, so that a page read
    // from one has seen the call its results answer (a Claude result names its tool so).
    if (line.terminated && list[0]!.kind !== "tool_result") {
      anchor = { index: first, offset: line.start };
      if (first - lastPoint >= STRIDE) {
        index.record(path, file, first, line.start);
        lastPoint = first;
      }
    }
    for (let k = 0; k < list.length; k++) {
      const i = first + k;
      if (i < offset) continue;
      const fitted = page.entries.length < limit
        ? fit(i, list[k]!, fieldCap, budget - used, page.entries.length === 0)
        : undefined;
      if (!fitted) {
        page.next = i;
        index.record(path, file, anchor.index, anchor.offset);
        return false;
      }
      page.entries.push(fitted.entry);
      used += fitted.bytes;
    }
    return true;
  });
  if (page.next === undefined) page.total = nextIndex;
  return page;
}

/** The entry cut to `fieldCap`, or tighter when it is a page's first; undefined if no room. */
function fit(
  index: number,
  entry: TranscriptEntry,
  fieldCap: number,
  room: number,
  first: boolean,
): { entry: PageEntry; bytes: number } | undefined {
  let cap = fieldCap;
  let shown = pageEntry(index, entry, cap);
  let bytes = byteLength(renderEntry(shown)) + 1;
  if (bytes <= room) return { entry: shown, bytes };
  if (!first) return undefined;
  // A page always shows at least one entry, cut as far as it takes.
  while (bytes > room && cap > 0) {
    cap = Math.max(0, cap - (bytes - room));
    shown = pageEntry(index, entry, cap);
    bytes = byteLength(renderEntry(shown)) + 1;
  }
  return { entry: shown, bytes };
}

function pageEntry(index: number, entry: TranscriptEntry, cap: number): PageEntry {
  const cutBody = (body: string) => {
    const { text, cutChars } = cutToBytes(body, cap);
    return { body: text, cutChars };
  };
  switch (entry.kind) {
    case "text":
      return { index, kind: "text", ...cutBody(entry.text) };
    case "tool_call":
      return {
        index,
        kind: "tool_call",
        id: short(entry.id),
        name: short(entry.name),
        ...cutBody(JSON.stringify(entry.input) ?? "null"),
        ...(entry.ignored ? { ignored: entry.ignored.map(short) } : {}),
        ...(entry.mapped ? { mapped: entry.mapped.map(short) } : {}),
      };
    case "tool_result":
      return {
        index,
        kind: "tool_result",
        id: short(entry.id),
        ...(entry.name !== undefined ? { name: short(entry.name) } : {}),
        isError: entry.isError,
        ...cutBody(entry.text),
      };
  }
}

const short = (s: string) => s.length > SHORT_FIELD ? `${s.slice(0, SHORT_FIELD)}…` : s;

/** The tool's reply for a call; errors (unknown job) are thrown as DelegateError. */
export async function transcriptReply(manager: JobManager, args: TranscriptArgs): Promise<string> {
  const { record } = await manager.get(args.job_id);
  const page = await readTranscriptPage(manager.store.dirOf(record.id), record.engine, {
    offset: args.offset,
    limit: args.limit,
    maxBytes: args.max_bytes,
  });
  return renderTranscriptPage(record.id, page, { running: !isTerminal(record.state) });
}
