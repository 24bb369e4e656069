import { isObject } from "../../platform/json_object.ts";
import { toolDetail } from "../activity_detail.ts";
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

export type Json = Record<string, unknown>;

/** Token counts of one model message. */
export interface MessageUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheCreationTokens: number;
}

/**
 * The event type of the server's own notes in a claude job's stream file (the verification it
 * ran after a turn: verify.ts); Claude Code never writes this type.
 */
export const SERVER_NOTE = "ollama_delegate";

const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);

/**
 * One line of Claude Code's stream-json, read once. Each reader takes what it needs from
 * it: the running turn its activities and result (`streamItems`), delegate_transcript its
 * entries (`transcriptEntries` in folder.ts).
 */
export type StreamEvent =
  | { type: "init"; sessionId?: string; permissionMode?: string; model?: string }
  /**
   * A system event worth one activity line (a permission denial, an API retry); `retry` when
   * Claude Code says a request to its endpoint failed and it will try again.
   */
  | { type: "notice"; text: string; retry?: true; deniedToolUse?: string }
  /**
   * The model's message: its content blocks that are objects, and the message's id and usage
   * as the endpoint reported them (Claude Code repeats both on each event of one message).
   * `parent`: the Agent tool call whose subagent wrote the message (`parent_tool_use_id`).
   */
  | {
    type: "assistant";
    blocks: Json[];
    messageId?: string;
    usage?: MessageUsage;
    /** The Agent tool call whose subagent wrote it; absent in the main conversation. */
    parent?: string;
  }
  /**
   * Tool results sent back to the model: the content blocks that are objects, and the ids of
   * tool calls Claude Code says it did not run (its `tool_result_meta`: a denial, a refusal).
   */
  | { type: "user"; blocks: Json[]; notRun: string[]; parent?: string }
  | { type: "result"; result: ResultEvent }
  /** A note the server wrote itself (SERVER_NOTE), never the model's words. */
  | { type: "server"; text: string }
  /** Any other event, or a message without content blocks. */
  | { type: "other" };

/**
 * Reads one stdout line of `claude -p --output-format stream-json`; undefined when it is not
 * a JSON object. Nothing here throws.
 */
export function readStreamEvent(line: string): StreamEvent | undefined {
  let event: unknown;
  try {
    event = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (!isObject(event)) return undefined;
  switch (event.type) {
    case "system":
      return systemEvent(event);
    case "assistant":
    case "user": {
      const message = event.message;
      if (!isObject(message) || !Array.isArray(message.content)) return { type: "other" };
      const blocks = message.content.filter(isObject);
      const parent = str(event.parent_tool_use_id);
      if (event.type === "user") {
        return {
          type: "user",
          blocks,
          notRun: notRunIds(event.tool_result_meta),
          ...(parent ? { parent } : {}),
        };
      }
      const usage = isObject(message.usage) ? message.usage : undefined;
      const id = str(message.id);
      return {
        type: "assistant",
        blocks,
        ...(id ? { messageId: id } : {}),
        ...(parent ? { parent } : {}),
        ...(usage
          ? {
            usage: {
              inputTokens: num(usage.input_tokens),
              outputTokens: num(usage.output_tokens),
              cacheReadTokens: num(usage.cache_read_input_tokens),
              cacheCreationTokens: num(usage.cache_creation_input_tokens),
            },
          }
          : {}),
      };
    }
    case "result":
      return { type: "result", result: resultOf(event) };
    case SERVER_NOTE:
      return typeof event.text === "string"
        ? { type: "server", text: event.text }
        : { type: "other" };
    default:
      return { type: "other" };
  }
}

/**
 * What one line means to a running turn. Lines that are not JSON objects, or events we do
 * not show, give no items.
 */
export function parseStreamLine(line: string): StreamItem[] {
  const event = readStreamEvent(line);
  return event === undefined ? [] : streamItems(event);
}

/** The activities, session start and result an event holds for a running turn. */
export function streamItems(event: StreamEvent): StreamItem[] {
  switch (event.type) {
    case "init": {
      const { type: _, ...init } = event;
      return [{ type: "init", ...init }];
    }
    case "notice":
      return [{ type: "activity", toolCall: false, activity: { kind: "error", text: event.text } }];
    case "assistant":
      return assistantItems(event.blocks);
    case "user":
      return toolResultItems(event.blocks);
    case "result":
      return [{ type: "result", result: event.result }];
    case "server":
      return [{
        type: "activity",
        toolCall: false,
        activity: { kind: "text", text: event.text.slice(0, TEXT_KEEP) },
      }];
    case "other":
      return [];
  }
}

function systemEvent(event: Json): StreamEvent {
  switch (event.subtype) {
    case "init": {
      const init: StreamEvent = { type: "init" };
      const sessionId = str(event.session_id);
      const permissionMode = str(event.permissionMode);
      const model = str(event.model);
      if (sessionId) init.sessionId = sessionId;
      if (permissionMode) init.permissionMode = permissionMode;
      if (model) init.model = model;
      return init;
    }
    case "permission_denied": {
      const notice: StreamEvent = {
        type: "notice",
        text: `permission denied: ${str(event.tool_name) ?? "tool"}: ${str(event.message) ?? ""}`,
      };
      const id = str(event.tool_use_id);
      return id === undefined ? notice : { ...notice, deniedToolUse: id };
    }
    case "api_retry":
      return {
        type: "notice",
        retry: true,
        text: `API retry ${num(event.attempt)}/${num(event.max_retries)}: ${
          event.error_status ?? ""
        } ${str(event.error) ?? ""}`.trim(),
      };
    default:
      return { type: "other" };
  }
}

/** Ids of the tool calls that `tool_result_meta` marks as not run (`non_execution_kind`). */
function notRunIds(meta: unknown): string[] {
  if (!Array.isArray(meta)) return [];
  return meta.filter(isObject).flatMap((m) =>
    typeof m.id === "string" && m.non_execution_kind !== undefined ? [m.id] : []
  );
}

function assistantItems(blocks: readonly Json[]): StreamItem[] {
  const items: StreamItem[] = [];
  for (const block of blocks) {
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

function toolResultItems(blocks: readonly Json[]): StreamItem[] {
  const items: StreamItem[] = [];
  for (const block of blocks) {
    if (block.type !== "tool_result" || block.is_error !== true) continue;
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
