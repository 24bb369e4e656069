/**
 * The claude engine's files in a job folder, read back: `stream.jsonl` (Claude Code's own
 * stream-json, as its stdout gave it) and `stderr.txt`. Only this engine parses them; the
 * job layer, the server and the terminal ask through `claudeFolder`.
 */
import { isObject } from "../../platform/json_object.ts";
import { createReadStream } from "node:fs";
import { readFileTail } from "../../platform/file_ends.ts";
import { join } from "node:path";
import { LineSplitter } from "../../platform/line_splitter.ts";
import type { Activity, JobFolderReader, LiveEvent, TranscriptEntry } from "../types.ts";
import {
  parseStreamLine,
  readStreamEvent,
  type StreamEvent,
  type StreamItem,
  streamItems,
} from "./stream.ts";

/** Claude Code's stdout, stream-json, one event a line. */
export const STREAM_FILE = "stream.jsonl";
/** Claude Code's stderr, kept for the error text of a failed job. */
export const STDERR_FILE = "stderr.txt";

const MAX_LINE = 32 * 1024 * 1024;

/**
 * Reads a whole `stream.jsonl` as a stream, never holding more than one line: used once
 * per job that lost its server, to recover the facts it had not recorded yet.
 */
export async function scanTranscript(
  path: string,
  onItem: (item: StreamItem) => void,
): Promise<void> {
  const splitter = new LineSplitter(MAX_LINE, (line) => {
    for (const item of parseStreamLine(line)) onItem(item);
  });
  try {
    for await (const chunk of createReadStream(path)) splitter.push(chunk as Uint8Array);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
  }
  splitter.end();
}

/** Facts a transcript holds about a turn that ended without its server watching. */
export interface TranscriptFacts {
  toolCalls: number;
  sessionCreated: boolean;
  permissionMode?: string;
}

export async function transcriptFacts(path: string): Promise<TranscriptFacts> {
  const facts: TranscriptFacts = { toolCalls: 0, sessionCreated: false };
  await scanTranscript(path, (item) => {
    if (item.type === "init") {
      facts.sessionCreated = true;
      if (item.permissionMode) facts.permissionMode = item.permissionMode;
    } else if (item.type === "activity" && item.toolCall) facts.toolCalls++;
  });
  return facts;
}

/**
 * The last `limit` activities from the end of a transcript, reading only its last
 * `tailBytes`, for the status of a job this process is not running.
 */
export async function recentActivity(
  path: string,
  limit: number,
  tailBytes = 512 * 1024,
): Promise<Activity[]> {
  const tail = await readFileTail(path, tailBytes);
  if (!tail) return [];
  const out: Activity[] = [];
  for (const line of tail.text.split("\n")) {
    for (const item of parseStreamLine(line)) {
      if (item.type === "activity") out.push(item.activity);
    }
  }
  return out.slice(-limit);
}

const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

/** Tool names by tool_use id, so a Claude tool_result can say which tool it answers. */
export class ToolNames {
  #names = new Map<string, string>();
  constructor(readonly max = 256) {}

  set(id: string, name: string): void {
    this.#names.set(id, name);
    if (this.#names.size > this.max) this.#names.delete(this.#names.keys().next().value!);
  }

  get(id: string): string | undefined {
    return this.#names.get(id);
  }
}

/**
 * The transcript entries of one stream event: assistant text and tool_use blocks, user
 * tool_result blocks (the stream-json message shapes of Claude Code's `--output-format
 * stream-json`). Other events hold none.
 */
export function transcriptEntries(event: StreamEvent, names: ToolNames): TranscriptEntry[] {
  const out: TranscriptEntry[] = [];
  if (event.type === "server") out.push({ kind: "text", text: event.text });
  else if (event.type === "assistant") {
    for (const block of event.blocks) {
      if (block.type === "text") {
        const text = str(block.text);
        if (text && text.trim() !== "") out.push({ kind: "text", text });
      } else if (block.type === "tool_use") {
        const id = str(block.id) ?? "";
        const name = str(block.name) ?? "tool";
        if (id) names.set(id, name);
        out.push({ kind: "tool_call", id, name, input: block.input ?? {} });
      }
    }
  } else if (event.type === "user") {
    for (const block of event.blocks) {
      if (block.type !== "tool_result") continue;
      const id = str(block.tool_use_id) ?? "";
      const name = id ? names.get(id) : undefined;
      out.push({
        kind: "tool_result",
        id,
        ...(name ? { name } : {}),
        text: resultText(block.content),
        isError: block.is_error === true,
      });
    }
  }
  return out;
}

/** A tool_result's content: a string, or blocks of which text is shown and others named. */
function resultText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((c) => {
    if (!isObject(c)) return "";
    if (c.type === "text") return str(c.text) ?? "";
    return `[${str(c.type) ?? "block"}]`;
  }).join("\n");
}

/**
 * What `jobs tail` shows of one stream line: the activities, the session start, the end, and
 * each tool's result when it comes. Claude Code's stream holds a command's output only in its
 * result, at its end: a running command shows nothing before.
 */
function liveEvents(line: string): LiveEvent[] {
  const event = readStreamEvent(line);
  if (event === undefined) return [];
  const out: LiveEvent[] = [];
  for (const item of streamItems(event)) {
    if (item.type === "init") {
      out.push({
        kind: "init",
        ...(item.model ? { model: item.model } : {}),
        ...(item.permissionMode ? { permissionMode: item.permissionMode } : {}),
      });
    } else if (item.type === "activity") out.push(item.activity);
    else out.push({ kind: "end" });
  }
  // A failed result is an activity already (an error line); one Claude Code did not run is
  // the denial's.
  if (event.type === "user") {
    for (const block of event.blocks) {
      if (block.type !== "tool_result" || block.is_error === true) continue;
      if (typeof block.tool_use_id === "string" && event.notRun.includes(block.tool_use_id)) {
        continue;
      }
      out.push({ kind: "result", text: resultText(block.content) });
    }
  }
  return out;
}

/** The claude engine's job folder, as everyone else reads it. */
export const claudeFolder: JobFolderReader = {
  activityFile: STREAM_FILE,
  recentActivity: (dir, limit) => recentActivity(join(dir, STREAM_FILE), limit),
  turnFacts: (dir) => transcriptFacts(join(dir, STREAM_FILE)),
  transcriptReader() {
    const names = new ToolNames();
    return (line) => {
      const event = readStreamEvent(line);
      return event === undefined ? undefined : transcriptEntries(event, names);
    };
  },
  liveReader: () => liveEvents,
};
