/**
 * The native engine's job folder files: `messages.jsonl`, the conversation a follow-up
 * continues, and `transcript.jsonl`, what the delegate did, in TranscriptEntry lines.
 */
import { appendFile, readFile, stat, truncate } from "node:fs/promises";
import { join } from "node:path";
import type { ChatMessage } from "../../backends/openai.ts";
import { errorMessage } from "../../errors.ts";
import type { TurnOutcome } from "../types.ts";
import { MESSAGES_FILE, TRANSCRIPT_FILE } from "./folder.ts";

/** The conversation a follow-up continues, and what was dropped to make it whole. */
export interface History {
  messages: ChatMessage[];
  /** Set when the file was cut mid-entry: what was dropped, for the job's reply. */
  repair?: string;
}

/**
 * The previous turn's messages, checked. A crash or a full disk can cut the file mid-entry:
 * the history is then taken up to its last complete entry, never past a cut one (what
 * follows a cut can lack the calls or answers it refers to), and `repair` says so.
 */
export async function readHistory(dir: string): Promise<History> {
  const path = join(dir, MESSAGES_FILE);
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch {
    return { messages: [] };
  }
  const lines = text.split("\n");
  const out: ChatMessage[] = [];
  for (const [i, raw] of lines.entries()) {
    if (raw.trim() === "") continue;
    const message = parseMessage(raw);
    if (message) {
      out.push(message);
      continue;
    }
    const dropped = lines.slice(i).filter((l) => l.trim() !== "").length;
    const bytes = new TextEncoder().encode(lines.slice(i).join("\n")).length;
    return {
      messages: dropDanglingToolCalls(out),
      repair: `The conversation the previous turn saved (${path}) was cut off mid-entry, as a ` +
        `crash or a full disk leaves it: this turn continues from its last complete entry ` +
        `(${out.length} kept; ${dropped} cut or after the cut, ${bytes} bytes, dropped)`,
    };
  }
  return { messages: dropDanglingToolCalls(out) };
}

function parseMessage(raw: string): ChatMessage | undefined {
  try {
    const m = JSON.parse(raw) as ChatMessage;
    return m && typeof m === "object" && typeof m.role === "string" ? m : undefined;
  } catch {
    return undefined;
  }
}

/** The job's reply carries a repair of its history ahead of the model's answer. */
export function withRepairNote(text: string, repair: string | undefined): string {
  return repair ? `[history repaired] ${repair}\n\n${text}` : text;
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

export const line = (value: unknown) => JSON.stringify(value) + "\n";

/**
 * Appends JSON lines in order without making the loop wait for the disk. The first failed
 * append (a full disk) stops the writer: the file is cut back to its last whole line, later
 * lines are not written, and `flush` rejects, so the turn fails instead of leaving a
 * history that silently misses entries.
 */
export class JsonlWriter {
  #queue: Promise<void> = Promise.resolve();
  #pending: string[] = [];
  /** Bytes known to be in the file, whole lines only; read on the first append. */
  #size: number | undefined;
  #failure: unknown;

  constructor(readonly path: string) {}

  push(value: unknown): void {
    if (this.#failure !== undefined) return;
    this.#pending.push(line(value));
    if (this.#pending.length > 1) return;
    this.#queue = this.#queue.then(() => this.#drain());
  }

  async #drain(): Promise<void> {
    if (this.#failure !== undefined || this.#pending.length === 0) return;
    const batch = this.#pending.join("");
    this.#pending = [];
    try {
      this.#size ??= await sizeOf(this.path);
      await appendFile(this.path, batch, { mode: 0o600 });
      this.#size += new TextEncoder().encode(batch).length;
    } catch (e) {
      this.#failure = e;
      this.#pending = [];
      // An append cut short leaves half a line; truncating frees space, so it works on a
      // full disk too.
      if (this.#size !== undefined) await truncate(this.path, this.#size).catch(() => {});
    }
  }

  /** Waits for every line; rejects when any could not be written. */
  async flush(): Promise<void> {
    await this.#queue;
    await this.#drain();
    if (this.#failure !== undefined) {
      throw new Error(`cannot write ${this.path}: ${errorMessage(this.#failure)}`, {
        cause: this.#failure,
      });
    }
  }
}

/**
 * Waits for the job files; when one could not be written, the turn failed (its answer is
 * kept), because a follow-up would continue from a history that misses what it did.
 */
export async function settleWriters(
  outcome: TurnOutcome,
  writers: JsonlWriter[],
): Promise<TurnOutcome> {
  const failures = (await Promise.allSettled(writers.map((w) => w.flush())))
    .filter((r): r is PromiseRejectedResult => r.status === "rejected")
    .map((r) => errorMessage(r.reason));
  if (failures.length === 0) return outcome;
  return {
    ...outcome,
    ok: false,
    errorText: `Cannot save the job's conversation: ${failures.join("; ")}. The disk may be ` +
      `full: free space, then follow up; the follow-up continues from the last entry saved` +
      (outcome.errorText ? ` (the turn itself: ${outcome.errorText})` : ""),
  };
}

async function sizeOf(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return 0;
    throw e;
  }
}

export { MESSAGES_FILE, TRANSCRIPT_FILE };
