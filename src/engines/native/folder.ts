/**
 * The native engine's files in a job folder: `messages.jsonl`, the conversation a follow-up
 * continues (context/history.ts writes and reads it), and `transcript.jsonl`, what the delegate did,
 * in TranscriptEntry lines, with the output of commands that ran long as it came
 * (`{"kind":"output","id":<call id>,"text":...}`, tools/live_output.ts) between them, which only
 * `jobs tail` shows. Only this engine parses them; the job layer, the server and the terminal
 * ask through `nativeFolder`.
 */
import { isObject } from "../../platform/json_object.ts";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { readFileTail } from "../../platform/file_ends.ts";
import { describeCall, toolDetail } from "../activity_detail.ts";
import type { Activity, JobFolderReader, LiveEvent, TranscriptEntry, TurnFacts } from "../types.ts";

export const MESSAGES_FILE = "messages.jsonl";
export const TRANSCRIPT_FILE = "transcript.jsonl";
/** The kind of a transcript line that holds a running command's output, no entry. */
export const LIVE_OUTPUT = "output";

const ENTRY_KINDS: ReadonlySet<string> = new Set(["text", "tool_call", "tool_result"]);

/** The tail of a transcript read back for status; enough for 100 activities. */
const TAIL_BYTES = 256 * 1024;

export function activityOf(entry: TranscriptEntry): Activity[] {
  switch (entry.kind) {
    case "text":
      return entry.text.trim() ? [{ kind: "text", text: entry.text.trim() }] : [];
    case "tool_call":
      return [{
        kind: "tool",
        name: entry.name,
        detail: typeof entry.input === "object" && entry.input !== null
          ? describeCall(entry.name, entry.input as Record<string, unknown>)
          : "",
      }];
    case "tool_result":
      return entry.isError
        ? [{ kind: "error", text: `${entry.name ?? "tool"}: ${entry.text}` }]
        : [];
  }
}

/** The entries among a transcript's last `maxBytes` (a long job's transcript can be large). */
export async function readTail(path: string, maxBytes: number): Promise<TranscriptEntry[]> {
  const tail = await readFileTail(path, maxBytes).catch(() => undefined);
  if (!tail) return [];
  const text = tail.text;
  const out: TranscriptEntry[] = [];
  for (const raw of text.split("\n")) {
    if (raw.trim() === "") continue;
    try {
      const entry = JSON.parse(raw) as TranscriptEntry;
      // A command's output as it came is no entry: its result holds it.
      if (ENTRY_KINDS.has(entry?.kind)) out.push(entry);
    } catch {
      // Skip a torn line.
    }
  }
  return out;
}

type Json = Record<string, unknown>;

/** One `transcript.jsonl` line: its TranscriptEntry, or undefined when it is not one. */
export function nativeLineEntries(line: string): TranscriptEntry[] | undefined {
  let e: unknown;
  try {
    e = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (!isObject(e)) return undefined;
  switch (e.kind) {
    case "text":
      return typeof e.text === "string" ? [{ kind: "text", text: e.text }] : undefined;
    case "tool_call": {
      if (typeof e.id !== "string" || typeof e.name !== "string") return undefined;
      const strings = (v: unknown) =>
        Array.isArray(v) ? v.filter((k): k is string => typeof k === "string").slice(0, 20) : [];
      const ignored = strings(e.ignored);
      const mapped = strings(e.mapped);
      return [{
        kind: "tool_call",
        id: e.id,
        name: e.name,
        input: e.input ?? {},
        ...(ignored.length > 0 ? { ignored } : {}),
        ...(mapped.length > 0 ? { mapped } : {}),
      }];
    }
    case "tool_result": {
      if (typeof e.id !== "string" || typeof e.text !== "string") return undefined;
      const name = typeof e.name === "string" ? e.name : undefined;
      return [{
        kind: "tool_result",
        id: e.id,
        ...(name ? { name } : {}),
        text: e.text,
        isError: e.isError === true,
      }];
    }
    case LIVE_OUTPUT:
      return [];
    default:
      return undefined;
  }
}

/** What `jobs tail` shows of one transcript line; a torn line shows nothing. */
function liveEvents(line: string): LiveEvent[] {
  let entry: TranscriptEntry | { kind: typeof LIVE_OUTPUT; text: unknown };
  try {
    entry = JSON.parse(line);
  } catch {
    return [];
  }
  switch (entry?.kind) {
    case LIVE_OUTPUT:
      return typeof entry.text === "string" ? [{ kind: "output", text: entry.text }] : [];
    case "text":
      return [{ kind: "text", text: entry.text }];
    case "tool_call":
      return [{ kind: "tool", name: entry.name, detail: toolDetail(entry.input) }];
    case "tool_result":
      return [{ kind: entry.isError ? "error" : "result", text: entry.text }];
    default:
      return [];
  }
}

/** The native engine's job folder, as everyone else reads it. */
export const nativeFolder: JobFolderReader = {
  activityFile: TRANSCRIPT_FILE,
  runningOutput: true,
  async recentActivity(dir: string, limit: number): Promise<Activity[]> {
    const entries = await readTail(join(dir, TRANSCRIPT_FILE), TAIL_BYTES);
    return entries.flatMap(activityOf).slice(-limit);
  },
  async turnFacts(dir: string): Promise<TurnFacts> {
    const entries = await readTail(join(dir, TRANSCRIPT_FILE), Number.MAX_SAFE_INTEGER);
    let started = false;
    try {
      await readFile(join(dir, MESSAGES_FILE));
      started = true;
    } catch {
      // Never got as far as the first request.
    }
    return {
      toolCalls: entries.filter((e) => e.kind === "tool_call").length,
      sessionCreated: started,
    };
  },
  transcriptReader: () => nativeLineEntries,
  liveReader: () => liveEvents,
};
