import type { Activity, PermissionDenial, Usage } from "../types.ts";

/** Longest text kept per activity entry; the server cuts further when rendering. */
const TEXT_KEEP = 1000;

/** The parts of Claude Code's final `result` event that we show. */
export interface ResultEvent {
  isError: boolean;
  subtype: string;
  text: string;
  errors: string[];
  usage: Usage;
  apiErrorStatus?: number;
  permissionDenials: PermissionDenial[];
}

/** What one stream-json line means to us. */
export type StreamItem =
  | { type: "init"; sessionId?: string; permissionMode?: string; model?: string }
  | { type: "activity"; activity: Activity; toolCall: boolean }
  | { type: "result"; result: ResultEvent };

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);

/** The detail shown for a tool call: the first of the inputs people recognise. */
export function toolDetail(input: unknown): string {
  if (!isObject(input)) return "";
  for (const key of ["command", "file_path", "pattern", "path", "url", "description", "prompt"]) {
    const value = str(input[key]);
    if (value) return value.slice(0, TEXT_KEEP);
  }
  return "";
}

/**
 * Interprets one stdout line of `claude -p --output-format stream-json`. Lines that are not
 * JSON objects, or events we do not show, give no items; nothing here throws.
 */
export function parseStreamLine(line: string): StreamItem[] {
  let event: unknown;
  try {
    event = JSON.parse(line);
  } catch {
    return [];
  }
  if (!isObject(event)) return [];
  switch (event.type) {
    case "system":
      return systemItems(event);
    case "assistant":
      return assistantItems(event);
    case "user":
      return toolResultItems(event);
    case "result":
      return [{ type: "result", result: resultOf(event) }];
    default:
      return [];
  }
}

function systemItems(event: Json): StreamItem[] {
  switch (event.subtype) {
    case "init": {
      const item: StreamItem = { type: "init" };
      const sessionId = str(event.session_id);
      const permissionMode = str(event.permissionMode);
      const model = str(event.model);
      if (sessionId) item.sessionId = sessionId;
      if (permissionMode) item.permissionMode = permissionMode;
      if (model) item.model = model;
      return [item];
    }
    case "permission_denied": {
      const text = `permission denied: ${str(event.tool_name) ?? "tool"}: ${
        str(event.message) ?? ""
      }`;
      return [{ type: "activity", toolCall: false, activity: { kind: "error", text } }];
    }
    case "api_retry": {
      const text = `API retry ${num(event.attempt)}/${num(event.max_retries)}: ${
        event.error_status ?? ""
      } ${str(event.error) ?? ""}`.trim();
      return [{ type: "activity", toolCall: false, activity: { kind: "error", text } }];
    }
    default:
      return [];
  }
}

function assistantItems(event: Json): StreamItem[] {
  const message = event.message;
  if (!isObject(message) || !Array.isArray(message.content)) return [];
  const items: StreamItem[] = [];
  for (const block of message.content) {
    if (!isObject(block)) continue;
    if (block.type === "tool_use") {
      items.push({
        type: "activity",
        toolCall: true,
        activity: {
          kind: "tool",
          name: str(block.name) ?? "tool",
          detail: toolDetail(block.input),
        },
      });
    } else if (block.type === "text") {
      const text = str(block.text)?.trim();
      if (text) {
        items.push({
          type: "activity",
          toolCall: false,
          activity: { kind: "text", text: text.slice(0, TEXT_KEEP) },
        });
      }
    }
  }
  return items;
}

function toolResultItems(event: Json): StreamItem[] {
  const message = event.message;
  if (!isObject(message) || !Array.isArray(message.content)) return [];
  const items: StreamItem[] = [];
  for (const block of message.content) {
    if (!isObject(block) || block.type !== "tool_result" || block.is_error !== true) continue;
    const content = typeof block.content === "string"
      ? block.content
      : Array.isArray(block.content)
      ? block.content.map((c) => (isObject(c) ? str(c.text) ?? "" : "")).join(" ")
      : "";
    items.push({
      type: "activity",
      toolCall: false,
      activity: { kind: "error", text: `tool error: ${content.trim().slice(0, TEXT_KEEP)}` },
    });
  }
  return items;
}

function resultOf(event: Json): ResultEvent {
  const usage = isObject(event.usage) ? event.usage : {};
  const denials = Array.isArray(event.permission_denials) ? event.permission_denials : [];
  const result: ResultEvent = {
    isError: event.is_error === true,
    subtype: str(event.subtype) ?? "",
    text: str(event.result) ?? "",
    errors: Array.isArray(event.errors) ? event.errors.map(String) : [],
    usage: {
      inputTokens: num(usage.input_tokens),
      outputTokens: num(usage.output_tokens),
      cacheReadTokens: num(usage.cache_read_input_tokens),
      cacheCreationTokens: num(usage.cache_creation_input_tokens),
      numTurns: num(event.num_turns),
      durationMs: num(event.duration_ms),
    },
    permissionDenials: denials.filter(isObject).map((d) => ({
      tool: str(d.tool_name) ?? "tool",
      detail: toolDetail(d.tool_input).slice(0, 200),
    })),
  };
  if (typeof event.api_error_status === "number") result.apiErrorStatus = event.api_error_status;
  return result;
}

/**
 * Splits a byte stream into lines without holding more than one line, and drops a line
 * longer than `maxLine` (it stays in the transcript on disk; we only skip parsing it).
 */
export class LineSplitter {
  #decoder = new TextDecoder();
  #partial = "";
  #skipping = false;

  constructor(private readonly maxLine: number, private readonly onLine: (line: string) => void) {}

  push(chunk: Uint8Array): void {
    const text = this.#decoder.decode(chunk, { stream: true });
    let start = 0;
    for (let nl = text.indexOf("\n"); nl !== -1; nl = text.indexOf("\n", start)) {
      const piece = text.slice(start, nl);
      start = nl + 1;
      if (this.#skipping) {
        this.#skipping = false;
        this.#partial = "";
        continue;
      }
      const line = this.#partial + piece;
      this.#partial = "";
      if (line.length <= this.maxLine) this.onLine(line);
    }
    if (this.#skipping) return;
    this.#partial += text.slice(start);
    if (this.#partial.length > this.maxLine) {
      this.#partial = "";
      this.#skipping = true;
    }
  }

  /** Delivers a last line that had no newline (dropping it lost the result event). */
  end(): void {
    const rest = this.#partial + this.#decoder.decode();
    this.#partial = "";
    if (!this.#skipping && rest.trim() !== "") this.onLine(rest);
    this.#skipping = false;
  }
}
