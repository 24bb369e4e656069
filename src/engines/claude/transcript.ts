import { createReadStream } from "node:fs";
import { open } from "node:fs/promises";
import type { Activity } from "../types.ts";
import { LineSplitter, parseStreamLine, type StreamItem } from "./stream.ts";

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
  let handle;
  try {
    handle = await open(path, "r");
  } catch {
    return [];
  }
  try {
    const { size } = await handle.stat();
    // One byte before the tail is read too: when it is a newline, the tail's first line is
    // whole and must not be dropped as a partial one.
    const start = Math.max(0, size - tailBytes - 1);
    const buffer = new Uint8Array(size - start);
    await handle.read(buffer, 0, buffer.length, start);
    let text = new TextDecoder().decode(buffer);
    if (start > 0) text = text.slice(text.indexOf("\n") + 1);
    const out: Activity[] = [];
    for (const line of text.split("\n")) {
      for (const item of parseStreamLine(line)) {
        if (item.type === "activity") out.push(item.activity);
      }
    }
    return out.slice(-limit);
  } finally {
    await handle.close();
  }
}
