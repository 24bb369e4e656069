/**
 * What the emulated model answers on the Anthropic-compatible `POST /v1/messages` (the path the
 * real Claude Code CLI uses): the reply types, the view a `script` sees, and the default
 * behaviour driven by directives in the first user message (`@bash`, `@delay`, `@hang`,
 * `@reply`; see emulator.ts).
 */

import { type ContextRecord } from "./context.ts";
import { isRecord } from "./util.ts";

const MAX_ECHO_CHARS = 2000;

/**
 * Usage a script reports in place of the emulator's counts, as a misbehaving backend would
 * (`input_tokens` on message_start and message_delta, `output_tokens` on message_delta).
 */
export interface ReportedMessageUsage {
  input?: number;
  output?: number;
}

export type Reply =
  | { kind: "text"; text: string; delayMs?: number; usage?: ReportedMessageUsage }
  | {
    kind: "tool_use";
    name: string;
    input: Record<string, unknown>;
    text?: string;
    delayMs?: number;
    usage?: ReportedMessageUsage;
  }
  /** Rendered in the Anthropic error shape, with the error type Ollama uses for that status. */
  | { kind: "error"; status: number; message: string }
  /** Never answers, until the client disconnects or the emulator closes. */
  | { kind: "hang" };

export interface MessagesRequestView {
  model: string;
  /** The system prompt: a string, or the text of its text blocks joined by "\n". */
  system: string;
  messages: unknown[];
  tools: unknown[];
  /** The most recent non-empty user text (tool results and `<system-reminder>` sections
   * excluded). */
  lastUserText: string;
  /** The content of the latest tool_result block in the conversation, as text. */
  lastToolResult?: string;
  /** The text of the first user message, `<system-reminder>` sections excluded. */
  firstUserText: string;
  headers: Record<string, string>;
  /** The context this request ran with and whether its prompt was cut (in contextMode "real"
   * the view holds only what was kept). */
  context?: ContextRecord;
}

// ---------------------------------------------------------------------------------------------
// Reading a Messages request

function blocksOf(content: unknown): unknown[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  return Array.isArray(content) ? content : [];
}

/** Claude Code prepends context as `<system-reminder>` sections; they are not the user's words. */
function stripReminders(text: string): string {
  return text.replace(/<system-reminder>[\s\S]*?<\/system-reminder>/g, "").trim();
}

function userTextOf(message: unknown): string {
  if (!isRecord(message)) return "";
  const texts: string[] = [];
  for (const block of blocksOf(message.content)) {
    if (isRecord(block) && block.type === "text" && typeof block.text === "string") {
      const t = stripReminders(block.text);
      if (t) texts.push(t);
    }
  }
  return texts.join("\n");
}

function toolResultText(block: Record<string, unknown>): string {
  const c = block.content;
  if (typeof c === "string") return c;
  if (!Array.isArray(c)) return "";
  return c
    .filter((b): b is Record<string, unknown> => isRecord(b) && b.type === "text")
    .map((b) => (typeof b.text === "string" ? b.text : ""))
    .join("\n");
}

export function toolResultsOf(messages: unknown[]): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const m of messages) {
    if (!isRecord(m)) continue;
    for (const b of blocksOf(m.content)) {
      if (isRecord(b) && b.type === "tool_result") out.push(b);
    }
  }
  return out;
}

/** A tool call a scripted model makes (callsInOrder). */
export interface ScriptedCall {
  name: string;
  input: Record<string, unknown>;
}

/**
 * A model that makes `calls` one after another, one a request, then answers with `last(view)`
 * ("done" without it). The result the delegate got for call i is kept at `results[i]`.
 * Requests without tools (titles, summaries) get the emulator's default answer.
 */
export function callsInOrder(
  calls: readonly ScriptedCall[],
  options: { results?: string[]; last?: (view: MessagesRequestView) => string } = {},
): (view: MessagesRequestView) => Reply | undefined {
  return (view) => {
    if (view.tools.length === 0) return undefined;
    const done = toolResultsOf(view.messages).length;
    if (done > 0 && options.results) options.results[done - 1] = view.lastToolResult ?? "";
    const call = calls[done];
    if (call) return { kind: "tool_use", name: call.name, input: call.input };
    return { kind: "text", text: options.last?.(view) ?? "done" };
  };
}

function systemTextOf(system: unknown): string {
  if (typeof system === "string") return system;
  if (!Array.isArray(system)) return "";
  return system
    .filter((b): b is Record<string, unknown> => isRecord(b) && b.type === "text")
    .map((b) => (typeof b.text === "string" ? b.text : ""))
    .join("\n");
}

export function viewOf(
  body: Record<string, unknown>,
  headers: Record<string, string>,
): MessagesRequestView {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const users = messages.filter((m) => isRecord(m) && m.role === "user");
  let lastUserText = "";
  for (let i = users.length - 1; i >= 0 && !lastUserText; i--) lastUserText = userTextOf(users[i]);
  const results = toolResultsOf(messages);
  const lastResult = results[results.length - 1];
  return {
    model: typeof body.model === "string" ? body.model : "",
    system: systemTextOf(body.system),
    messages,
    tools: Array.isArray(body.tools) ? body.tools : [],
    lastUserText,
    lastToolResult: lastResult ? toolResultText(lastResult) : undefined,
    firstUserText: users.length > 0 ? userTextOf(users[0]) : "",
    headers,
  };
}

// ---------------------------------------------------------------------------------------------
// Default (prompt-directive) behaviour

interface Directives {
  bash: string[];
  delayMs?: number;
  hang: boolean;
  reply?: string;
  /** The prompt with directive lines removed. */
  rest: string;
}

function parseDirectives(text: string): Directives {
  const d: Directives = { bash: [], hang: false, rest: "" };
  const replies: string[] = [];
  const rest: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    const m = /^@(bash|delay|hang|reply)(?:\s+(.*))?$/.exec(line.trim());
    if (!m) {
      rest.push(line);
      continue;
    }
    const arg = (m[2] ?? "").trim();
    if (m[1] === "bash") d.bash.push(arg);
    else if (m[1] === "delay") {
      const ms = Number(arg);
      if (Number.isFinite(ms) && ms >= 0) d.delayMs = ms;
    } else if (m[1] === "hang") d.hang = true;
    else replies.push(arg);
  }
  if (replies.length > 0) d.reply = replies.join("\n");
  d.rest = rest.join("\n").trim();
  return d;
}

export function defaultReply(view: MessagesRequestView): Reply {
  const d = parseDirectives(view.firstUserText);
  if (d.hang) return { kind: "hang" };
  const done = toolResultsOf(view.messages).length;
  const next = d.bash[done];
  // Side requests (titles, summaries...) carry no tools; they can only be answered with text.
  if (next !== undefined && view.tools.length > 0) {
    return {
      kind: "tool_use",
      name: "Bash",
      input: { command: next, description: "emulator scripted command" },
      delayMs: d.delayMs,
    };
  }
  let text: string;
  if (d.reply !== undefined) text = d.reply;
  else if (view.lastToolResult !== undefined) {
    text = `tool result: ${view.lastToolResult.slice(0, MAX_ECHO_CHARS)}`;
  } else text = `echo: ${d.rest.slice(0, MAX_ECHO_CHARS)}`;
  return { kind: "text", text, delayMs: d.delayMs };
}
