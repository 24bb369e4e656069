/**
 * The native engine's job folder files: `messages.jsonl`, the conversation a follow-up
 * continues, and `transcript.jsonl`, what the delegate did, in TranscriptEntry lines.
 */
import { appendFile, open, readFile } from "node:fs/promises";
import { join } from "node:path";
import type { ChatMessage } from "../../backends/openai.ts";
import type { Activity, TranscriptEntry } from "../types.ts";
import { describeCall } from "./loop.ts";

export const MESSAGES_FILE = "messages.jsonl";
export const TRANSCRIPT_FILE = "transcript.jsonl";

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

/** The conversation a follow-up continues: the previous turn's messages, checked. */
export async function readHistory(dir: string): Promise<ChatMessage[]> {
  let text: string;
  try {
    text = await readFile(join(dir, MESSAGES_FILE), "utf8");
  } catch {
    return [];
  }
  const out: ChatMessage[] = [];
  for (const raw of text.split("\n")) {
    if (raw.trim() === "") continue;
    try {
      const m = JSON.parse(raw) as ChatMessage;
      if (m && typeof m === "object" && typeof m.role === "string") out.push(m);
    } catch {
      // A line cut by a crash mid-write: the rest is still a valid history.
    }
  }
  return dropDanglingToolCalls(out);
}

/**
 * A turn stopped between a model's tool calls and their results leaves calls without
 * answers, which servers refuse; such a trailing assistant message is answered here.
 */
function dropDanglingToolCalls(messages: ChatMessage[]): ChatMessage[] {
  const answered = new Set(
    messages.filter((m) => m.role === "tool").map((m) =>
      (m as { tool_call_id: string }).tool_call_id
    ),
  );
  const out: ChatMessage[] = [];
  for (const m of messages) {
    out.push(m);
    if (m.role !== "assistant" || !m.tool_calls) continue;
    for (const call of m.tool_calls) {
      if (!answered.has(call.id)) {
        out.push({
          role: "tool",
          tool_call_id: call.id,
          name: call.function.name,
          content: "Not run: the job was stopped",
        });
        answered.add(call.id);
      }
    }
  }
  return out;
}

export async function readTail(path: string, maxBytes: number): Promise<TranscriptEntry[]> {
  let text: string;
  try {
    // Only the tail is read: a long job's transcript can be large.
    const handle = await open(path, "r");
    try {
      const { size } = await handle.stat();
      const start = Math.max(0, size - maxBytes);
      const buffer = new Uint8Array(size - start);
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, start);
      text = new TextDecoder().decode(buffer.subarray(0, bytesRead));
      if (start > 0) text = text.slice(text.indexOf("\n") + 1);
    } finally {
      await handle.close();
    }
  } catch {
    return [];
  }
  const out: TranscriptEntry[] = [];
  for (const raw of text.split("\n")) {
    if (raw.trim() === "") continue;
    try {
      out.push(JSON.parse(raw) as TranscriptEntry);
    } catch {
      // Skip a torn line.
    }
  }
  return out;
}

export const line = (value: unknown) => JSON.stringify(value) + "\n";

/** Appends JSON lines in order without making the loop wait for the disk. */
export class JsonlWriter {
  #queue: Promise<void> = Promise.resolve();
  #pending: string[] = [];

  constructor(readonly path: string) {}

  push(value: unknown): void {
    this.#pending.push(line(value));
    if (this.#pending.length > 1) return;
    this.#queue = this.#queue.then(async () => {
      const batch = this.#pending.join("");
      this.#pending = [];
      await appendFile(this.path, batch, { mode: 0o600 }).catch(() => {});
    });
  }

  async flush(): Promise<void> {
    await this.#queue;
    if (this.#pending.length > 0) {
      const batch = this.#pending.join("");
      this.#pending = [];
      await appendFile(this.path, batch, { mode: 0o600 }).catch(() => {});
    }
  }
}
