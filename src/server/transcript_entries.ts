import type { TranscriptEntry } from "../engines/types.ts";

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json =>
  typeof v === "object" && v !== null && !Array.isArray(v);
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
 * The entries of one `stream.jsonl` line of Claude Code's stream-json: assistant text and
 * tool_use blocks, user tool_result blocks (protocol-facts B2). Undefined for a line that is
 * not a JSON object; an empty list for events that hold no entries (init, result, ...).
 */
export function claudeLineEntries(line: string, names: ToolNames): TranscriptEntry[] | undefined {
  let event: unknown;
  try {
    event = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (!isObject(event)) return undefined;
  const message = event.message;
  if (!isObject(message) || !Array.isArray(message.content)) return [];
  const out: TranscriptEntry[] = [];
  if (event.type === "assistant") {
    for (const block of message.content) {
      if (!isObject(block)) continue;
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
    for (const block of message.content) {
      if (!isObject(block) || block.type !== "tool_result") continue;
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

/** One `transcript.jsonl` line of the native engine: a TranscriptEntry, or undefined. */
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
    case "tool_call":
      return typeof e.id === "string" && typeof e.name === "string"
        ? [{ kind: "tool_call", id: e.id, name: e.name, input: e.input ?? {} }]
        : undefined;
    case "tool_result": {
      if (typeof e.id !== "string" || typeof e.text !== "string") return undefined;
      const name = str(e.name);
      return [{
        kind: "tool_result",
        id: e.id,
        ...(name ? { name } : {}),
        text: e.text,
        isError: e.isError === true,
      }];
    }
    default:
      return undefined;
  }
}
