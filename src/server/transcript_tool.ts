import { stat } from "node:fs/promises";
import { join } from "node:path";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { TranscriptEntry } from "../engines/types.ts";
import { errorMessage, isDelegateError } from "../errors.ts";
import type { JobManager } from "../jobs/manager.ts";
import { isTerminal } from "../jobs/record.ts";
import type { EngineName } from "../settings/types.ts";
import { claudeLineEntries, nativeLineEntries, ToolNames } from "./transcript_entries.ts";
import { type FileIdentity, TranscriptIndex } from "./transcript_index.ts";
import { readLines } from "./transcript_lines.ts";
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

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 200;
export const DEFAULT_MAX_BYTES = 16 * 1024;
export const MIN_MAX_BYTES = 1024;
export const MAX_MAX_BYTES = 256 * 1024;

/** The file each engine writes its activity to, inside the job folder. */
export const TRANSCRIPT_FILES: Record<EngineName, string> = {
  claude: "stream.jsonl",
  native: "transcript.jsonl",
};

/** Same limit as the Claude engine's own reader: a longer line is skipped, not parsed. */
const MAX_LINE = 32 * 1024 * 1024;
/** A checkpoint every this many entries while scanning, besides one at each page's end. */
const STRIDE = 64;
/** Bytes kept for the page's header and footer lines, besides the file's path. */
const FRAME_BYTES = 400;
const SHORT_FIELD = 120;

/** Checkpoints of every transcript this process has paged through (bounded). */
const sharedIndex = new TranscriptIndex();

/** zod shape of the tool's input, like the shapes in inputs.ts. */
export const transcriptShape = {
  job_id: z.string(),
  offset: z.number().int("offset must be a whole number").min(0, "offset must be 0 or more")
    .optional().describe("0-based"),
  limit: z.number().int("limit must be a whole number").min(1, "limit must be at least 1")
    .max(MAX_LIMIT, `limit must be at most ${MAX_LIMIT}`).optional()
    .describe(`default ${DEFAULT_LIMIT}`),
  max_bytes: z.number().int("max_bytes must be a whole number")
    .min(MIN_MAX_BYTES, `max_bytes must be at least ${MIN_MAX_BYTES}`)
    .max(MAX_MAX_BYTES, `max_bytes must be at most ${MAX_MAX_BYTES}`).optional()
    .describe(`page size, default ${DEFAULT_MAX_BYTES}`),
};

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
  engine: EngineName,
  options: PageOptions = {},
  index: TranscriptIndex = sharedIndex,
): Promise<TranscriptPage> {
  const offset = options.offset ?? 0;
  const limit = options.limit ?? DEFAULT_LIMIT;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  if (!Number.isInteger(offset) || offset < 0) {
    throw new RangeError(`offset must be a whole number >= 0, not ${offset}`);
  }
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw new RangeError(`limit must be a whole number from 1 to ${MAX_LIMIT}, not ${limit}`);
  }
  if (!Number.isInteger(maxBytes) || maxBytes < MIN_MAX_BYTES) {
    throw new RangeError(`maxBytes must be a whole number >= ${MIN_MAX_BYTES}, not ${maxBytes}`);
  }
  const path = join(dir, TRANSCRIPT_FILES[engine]);
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

  const names = new ToolNames();
  const parse = engine === "claude"
    ? (line: string) => claudeLineEntries(line, names)
    : nativeLineEntries;
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

/** Registers `delegate_transcript`; call it where the other delegate_* tools are registered. */
export function registerTranscriptTool(
  server: McpServer,
  deps: { manager: JobManager; description?: string | undefined },
): void {
  server.registerTool(
    "delegate_transcript",
    {
      title: "Page through a delegated job's activity",
      description: deps.description,
      inputSchema: transcriptShape,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (args: TranscriptArgs): Promise<CallToolResult> => {
      try {
        return { content: [{ type: "text", text: await transcriptReply(deps.manager, args) }] };
      } catch (e) {
        const message = isDelegateError(e) ? e.message : `Internal error: ${errorMessage(e)}`;
        return { content: [{ type: "text", text: message }], isError: true };
      }
    },
  );
}
