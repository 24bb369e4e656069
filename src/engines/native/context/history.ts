/**
 * The conversation a follow-up continues, from the previous turn's `messages.jsonl`. Every
 * turn's file holds the whole conversation so far; a follow-up reads it a line at a time,
 * copies it into its own file as it goes, and keeps in memory only the task and the newest
 * exchanges that fit the history budget (history_window.ts), so no number of follow-ups makes
 * the server hold more.
 */
import { type FileHandle, open } from "node:fs/promises";
import { join } from "node:path";
import type { ChatMessage } from "../../../backends/chat_types.ts";
import { CHARS_PER_TOKEN } from "../../../models/tokens.ts";
import type { ContextCap } from "./budget.ts";
import { MESSAGES_FILE, TRANSCRIPT_FILE } from "../folder.ts";
import { HistoryWindow, type LeftOut } from "./history_window.ts";
import { CHUNK_BYTES, copyRange, type LineInfo, readText, scanLines } from "../jsonl_lines.ts";
import { MAX_TURN_GROWTH_CHARS } from "../loop.ts";

/**
 * The most of the earlier conversation a follow-up holds in memory, in bytes of its saved
 * lines, whatever the model's context: 8 MiB, twice what the largest context a backend is
 * believed about holds (MAX_CLAIMED_CONTEXT_TOKENS at 4 bytes a token). Only a maxContext set
 * above that reaches it.
 */
export const HISTORY_MAX_BYTES = 8 * 1024 * 1024;

/**
 * The history budget under `cap`: what the context holds (4 bytes a token, the chars/4
 * estimate), at least what one turn may add (its 4,000,000 characters taken as bytes), so that
 * the previous turn comes back whole and the fitter stubs its old tool output rather than
 * leaving all of it out, and at most HISTORY_MAX_BYTES.
 */
export function historyBudget(cap: ContextCap): number {
  return Math.min(HISTORY_MAX_BYTES, Math.max(MAX_TURN_GROWTH_CHARS, cap.tokens * CHARS_PER_TOKEN));
}

/** The conversation a follow-up continues, and what was left out or dropped to make it. */
export interface History {
  /** The task and the newest whole exchanges within the budget; no system prompt. */
  messages: ChatMessage[];
  /** Older messages not in `messages`: still in the files, not resent. */
  leftOut: LeftOut;
  /** Set when the file was cut mid-entry: what was dropped, for the job's reply. */
  repair?: string;
}

const NEWLINE = new Uint8Array([0x0a]);

/**
 * The previous turn's conversation, checked, with every whole entry but the system prompt
 * appended to `copyTo`. The file is read twice: once to see where its entries are, of which
 * role and how large, copying them as it goes; then only the entries kept are read again and
 * parsed. A crash or a full disk can cut the file mid-entry: the history is then taken up to
 * its last complete entry, never past a cut one (what follows a cut can lack the calls or
 * answers it refers to), and `repair` says so.
 */
export async function readHistory(
  dir: string,
  budgetBytes: number,
  copyTo?: FileHandle,
): Promise<History> {
  const path = join(dir, MESSAGES_FILE);
  let handle: FileHandle;
  try {
    handle = await open(path, "r");
  } catch {
    return { messages: [], leftOut: { messages: 0, bytes: 0 } };
  }
  try {
    const window = new HistoryWindow<LineInfo>(budgetBytes);
    let whole = 0;
    let repair: string | undefined;
    const lines = scanLines(handle);
    const buffer = new Uint8Array(CHUNK_BYTES);
    // Whole entries are copied in runs of adjacent lines, newlines included.
    let run = { start: 0, end: 0 };
    const flush = async () => {
      if (copyTo && run.end > run.start) {
        await copyRange(handle, run.start, run.end - run.start, copyTo, buffer);
      }
      run = { start: 0, end: 0 };
    };
    for await (const line of lines) {
      if (line.blank) continue;
      // This engine writes every entry with its role first (JSON.stringify keeps the order).
      const role = line.closed ? roleOf(line.head) : undefined;
      if (role === undefined) {
        repair = await cutNote(path, handle, line, lines, whole);
        break;
      }
      whole++;
      if (role === "system") {
        await flush();
        continue;
      }
      window.add(line, role, line.length);
      if (run.end !== line.start) await flush();
      if (run.end === 0) run.start = line.start;
      run.end = line.start + line.length + (line.terminated ? 1 : 0);
      if (!line.terminated) {
        await flush();
        await copyTo?.write(NEWLINE);
      }
    }
    await flush();
    const messages = await keptMessages(handle, window, buffer);
    const answered = answerDangling(messages);
    if (copyTo) {
      // Answers for calls a stopped turn left without one, where they belong: at its end.
      for (const m of answered.added) await copyTo.write(JSON.stringify(m) + "\n");
    }
    return {
      messages: answered.messages,
      leftOut: window.leftOut,
      ...(repair ? { repair } : {}),
    };
  } finally {
    await handle.close();
  }
}

function roleOf(head: Uint8Array): string | undefined {
  return /^\s*\{\s*"role"\s*:\s*"(\w+)"/.exec(new TextDecoder().decode(head))?.[1];
}

/**
 * The task and the exchanges the window kept, parsed. An entry that is whole in shape but not
 * a message after all leaves its exchange out.
 */
async function keptMessages(
  handle: FileHandle,
  window: HistoryWindow<LineInfo>,
  buffer: Uint8Array,
): Promise<ChatMessage[]> {
  const out: ChatMessage[] = [];
  const task = window.task && await messageAt(handle, window.task, buffer);
  if (task) out.push(task);
  else if (window.task) window.leave(1, window.task.length);
  for (const exchange of window.exchanges) {
    const messages: ChatMessage[] = [];
    for (const line of exchange) {
      const m = await messageAt(handle, line, buffer);
      if (!m) break;
      messages.push(m);
    }
    if (messages.length === exchange.length) out.push(...messages);
    else window.leave(exchange.length, exchange.reduce((n, l) => n + l.length, 0));
  }
  return out;
}

async function messageAt(
  handle: FileHandle,
  line: LineInfo,
  buffer: Uint8Array,
): Promise<ChatMessage | undefined> {
  try {
    const m = JSON.parse(await readText(handle, line.start, line.length, buffer)) as ChatMessage;
    return m && typeof m === "object" && typeof m.role === "string" ? m : undefined;
  } catch {
    return undefined;
  }
}

async function cutNote(
  path: string,
  handle: FileHandle,
  cut: LineInfo,
  rest: AsyncGenerator<LineInfo>,
  kept: number,
): Promise<string> {
  let dropped = 1;
  for await (const line of rest) if (!line.blank) dropped++;
  const bytes = (await handle.stat()).size - cut.start;
  return `The conversation the previous turn saved (${path}) was cut off mid-entry, as a ` +
    `crash or a full disk leaves it: this turn continues from its last complete entry ` +
    `(${kept} kept; ${dropped} cut or after the cut, ${bytes} bytes, dropped)`;
}

const notRun = (id: string, name: string): ChatMessage => ({
  role: "tool",
  tool_call_id: id,
  name,
  content: "Not run: the job was stopped",
});

/** The job's reply carries a repair of its history ahead of the model's answer. */
export function withRepairNote(text: string, repair: string | undefined): string {
  return repair ? `[history repaired] ${repair}\n\n${text}` : text;
}

/**
 * A turn stopped between a model's tool calls and their results leaves calls without
 * answers, which servers refuse; such a trailing assistant message is answered here.
 * `added` are the answers made.
 */
function answerDangling(
  messages: ChatMessage[],
): { messages: ChatMessage[]; added: ChatMessage[] } {
  const answered = new Set(
    messages.filter((m) => m.role === "tool").map((m) =>
      (m as { tool_call_id: string }).tool_call_id
    ),
  );
  const out: ChatMessage[] = [];
  const added: ChatMessage[] = [];
  for (const m of messages) {
    out.push(m);
    if (m.role !== "assistant" || !m.tool_calls) continue;
    for (const call of m.tool_calls) {
      if (!answered.has(call.id)) {
        const answer = notRun(call.id, call.function.name);
        out.push(answer);
        added.push(answer);
        answered.add(call.id);
      }
    }
  }
  return { messages: out, added };
}

export { MESSAGES_FILE, TRANSCRIPT_FILE };
