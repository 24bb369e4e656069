/**
 * What the emulated model answers on the OpenAI-compatible `POST /v1/chat/completions`: the
 * scripting types, the view a script sees, and the default behaviour driven by directives in the
 * first user message.
 *
 * Directives (one per line, anywhere in the first user message; other lines are the prompt):
 *   @tool Name {json args}   a tool call; several are issued in order, one per response, each only
 *                            once the previous one's result (a role "tool" message) came back
 *   @bash <command>          shorthand for `@tool Bash {"command": "<command>"}`
 *   @reply <text>            the final answer (several lines are joined with "\n")
 *   @fail <status> <count>   the first <count> requests of this conversation get HTTP <status>
 *   @retry-after <value>     the Retry-After header sent with @fail ("0" by default; "none" omits it)
 *   @hang                    never answer, until the client aborts or the emulator closes
 *   @delay <ms>              wait before answering (before any byte, also when streaming)
 *   @chunk-delay <ms>        stream slowly: wait this long between chunks
 * Without @reply, the final answer is `done: <last tool result, first 200 chars>` after a tool
 * round trip, else `echo: <prompt>`. Requests without tools only ever get text.
 *
 * The same scripts and directives drive Ollama's native `POST /api/chat`
 * (native_chat.ts): there tool results come back as
 * `{"role": "tool", "content": ..., "tool_name": ...}` without ids, and count the same. When the
 * emulator runs in contextMode "real", a script sees the messages left after truncation, so the
 * directives in a first user message that was cut off are gone too.
 */

import { type ContextRecord } from "./context.ts";
import { isRecord } from "./util.ts";

export interface ChatToolCallSpec {
  name: string;
  arguments: Record<string, unknown>;
}

/** Usage a script reports in place of the emulator's counts; each figure as given. */
export interface ReportedUsage {
  prompt?: number;
  completion?: number;
}

export type ChatReply =
  | {
    kind: "text";
    text: string;
    /** Native `/api/chat` only: `message.thinking`, sent before the content when the request
     * asks for thinking (`think`) and the model has the "thinking" capability. */
    thinking?: string;
    chunkDelayMs?: number;
    chunkChars?: number;
    /** Figures reported instead of the emulator's own counts, as a misbehaving backend would
     * (`prompt_eval_count`/`eval_count`, or `usage.prompt_tokens`/`completion_tokens`). */
    usage?: ReportedUsage;
  }
  | {
    kind: "tool_calls";
    calls: ChatToolCallSpec[];
    /** Content sent before the calls. */
    text?: string;
    thinking?: string;
    chunkDelayMs?: number;
    chunkChars?: number;
    /** Figures reported instead of the emulator's own counts, as a misbehaving backend would
     * (`prompt_eval_count`/`eval_count`, or `usage.prompt_tokens`/`completion_tokens`). */
    usage?: ReportedUsage;
  }
  /** In the OpenAI error shape; `retryAfter` becomes a `Retry-After` header. */
  | { kind: "error"; status: number; message: string; retryAfter?: string }
  /** Never answers, until the client disconnects or the emulator closes (then 503). */
  | { kind: "hang" }
  /**
   * Waits before any byte of the response (also of a streamed one), then answers `then`. With
   * `until`, first waits for that promise to settle: a script paces a job by its own events.
   */
  | { kind: "delay"; ms: number; then: ChatReply; until?: Promise<unknown> };

export interface ChatToolResult {
  /** "" for a native tool result, which carries no id. */
  toolCallId: string;
  /** The `name` (OpenAI) or `tool_name` (native) the client sent, else the name of the
   * assistant tool call it answers. */
  name: string;
  /** String content, or the text parts of array content joined by "\n". */
  content: string;
}

export interface ChatRequestView {
  model: string;
  messages: unknown[];
  /** The function names of `tools`, in order. */
  tools: string[];
  stream: boolean;
  /** The text of the first user message. */
  firstUserText: string;
  /** Every role "tool" message so far, in order. */
  toolResults: ChatToolResult[];
  /** Header names are lower-cased. */
  headers: Record<string, string>;
  /** 1 for the first /v1/chat/completions request this emulator received, and so on. */
  requestNumber: number;
  /** 1 for the first request of this conversation (same first user text), and so on. */
  conversationRequestNumber: number;
  /** Which API the request came through; absent means "openai" (`/v1/chat/completions`). */
  api?: "openai" | "native";
  /** Native requests: the `options` object (num_ctx, temperature...), as sent. */
  options?: Record<string, unknown>;
  /** Native requests: `think` as sent (true/false/"low"/"medium"/"high"/"max"). */
  think?: boolean | string;
  /** Native requests: `format` as sent ("json" or a JSON schema). */
  format?: unknown;
  /** The context this request ran with and whether its prompt was cut. */
  context?: ContextRecord;
}

/** Returning undefined falls back to the prompt directives. */
export type ChatScript = (view: ChatRequestView) => ChatReply | undefined;

const MAX_RESULT_ECHO = 200;
const MAX_PROMPT_ECHO = 2000;
// Ollama's ErrMaxQueue text (server/sched.go), what a full queue answers with 503.
const QUEUE_FULL = "server busy, please try again.  maximum pending requests exceeded";

/** String content, or the text of `{type: "text"}` parts joined by "\n". */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((p): p is Record<string, unknown> => isRecord(p) && p.type === "text")
    .map((p) => (typeof p.text === "string" ? p.text : ""))
    .join("\n");
}

/** The ids and names of every assistant tool call, in order. */
function assistantCalls(messages: unknown[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of messages) {
    if (!isRecord(m) || m.role !== "assistant" || !Array.isArray(m.tool_calls)) continue;
    for (const c of m.tool_calls) {
      if (!isRecord(c) || typeof c.id !== "string") continue;
      const fn = isRecord(c.function) ? c.function : {};
      out.set(c.id, typeof fn.name === "string" ? fn.name : "");
    }
  }
  return out;
}

/** The first role "tool" message whose tool_call_id answers no earlier assistant tool call. */
export function unmatchedToolMessage(messages: unknown[]): string | undefined {
  const seen = new Set<string>();
  for (const m of messages) {
    if (!isRecord(m)) continue;
    if (m.role === "assistant" && Array.isArray(m.tool_calls)) {
      for (const c of m.tool_calls) if (isRecord(c) && typeof c.id === "string") seen.add(c.id);
    }
    if (m.role === "tool") {
      const id = typeof m.tool_call_id === "string" ? m.tool_call_id : "";
      if (!seen.has(id)) return id;
    }
  }
  return undefined;
}

export function chatViewOf(
  body: Record<string, unknown>,
  headers: Record<string, string>,
  requestNumber: number,
  conversationRequestNumber: number,
): ChatRequestView {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const calls = assistantCalls(messages);
  const toolResults: ChatToolResult[] = [];
  for (const m of messages) {
    if (!isRecord(m) || m.role !== "tool") continue;
    const toolCallId = typeof m.tool_call_id === "string" ? m.tool_call_id : "";
    toolResults.push({
      toolCallId,
      name: typeof m.name === "string" && m.name
        ? m.name
        : typeof m.tool_name === "string" && m.tool_name
        ? m.tool_name
        : calls.get(toolCallId) ?? "",
      content: contentText(m.content),
    });
  }
  const firstUser = messages.find((m) => isRecord(m) && m.role === "user");
  const tools = Array.isArray(body.tools) ? body.tools : [];
  return {
    model: typeof body.model === "string" ? body.model : "",
    messages,
    tools: tools.map((t) =>
      isRecord(t) && isRecord(t.function) && typeof t.function.name === "string"
        ? t.function.name
        : ""
    ),
    stream: body.stream === true,
    firstUserText: isRecord(firstUser) ? contentText(firstUser.content) : "",
    toolResults,
    headers,
    requestNumber,
    conversationRequestNumber,
  };
}

interface ChatDirectives {
  calls: ChatToolCallSpec[];
  reply?: string;
  fail?: { status: number; count: number };
  retryAfter?: string;
  hang: boolean;
  delayMs?: number;
  chunkDelayMs?: number;
  rest: string;
}

const DIRECTIVE = /^@(tool|bash|reply|fail|retry-after|hang|delay|chunk-delay)(?:\s+(.*))?$/;

/** Throws a RangeError naming the line when a directive cannot be read: a test typo should fail
 * loudly (as a 500 from the emulator) rather than be silently taken as prompt text. */
function parseChatDirectives(text: string): ChatDirectives {
  const d: ChatDirectives = { calls: [], hang: false, rest: "" };
  const replies: string[] = [];
  const rest: string[] = [];
  const ms = (arg: string, line: string) => {
    const n = Number(arg);
    if (arg === "" || !Number.isFinite(n) || n < 0) {
      throw new RangeError(`Cannot read directive "${line}": expected milliseconds`);
    }
    return n;
  };
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    const m = DIRECTIVE.exec(line);
    if (!m) {
      rest.push(raw);
      continue;
    }
    const arg = (m[2] ?? "").trim();
    switch (m[1]) {
      case "tool": {
        const sp = /^(\S+)(?:\s+([\s\S]*))?$/.exec(arg);
        if (!sp) throw new RangeError(`Cannot read directive "${line}": expected a tool name`);
        let args: unknown = {};
        try {
          if (sp[2]?.trim()) args = JSON.parse(sp[2]);
        } catch (cause) {
          throw new RangeError(`Cannot read directive "${line}": arguments are not JSON`, {
            cause,
          });
        }
        if (!isRecord(args)) {
          throw new RangeError(`Cannot read directive "${line}": arguments must be an object`);
        }
        d.calls.push({ name: sp[1] ?? "", arguments: args });
        break;
      }
      case "bash":
        d.calls.push({ name: "Bash", arguments: { command: arg } });
        break;
      case "reply":
        replies.push(arg);
        break;
      case "fail": {
        const [status, count = "1"] = arg.split(/\s+/);
        const s = Number(status), c = Number(count);
        if (!Number.isInteger(s) || s < 400 || s > 599 || !Number.isInteger(c) || c < 0) {
          throw new RangeError(`Cannot read directive "${line}": expected @fail <status> <count>`);
        }
        d.fail = { status: s, count: c };
        break;
      }
      case "retry-after":
        d.retryAfter = arg;
        break;
      case "hang":
        d.hang = true;
        break;
      case "delay":
        d.delayMs = ms(arg, line);
        break;
      case "chunk-delay":
        d.chunkDelayMs = ms(arg, line);
        break;
    }
  }
  if (replies.length > 0) d.reply = replies.join("\n");
  d.rest = rest.join("\n").trim();
  return d;
}

export function defaultChatReply(view: ChatRequestView): ChatReply {
  const d = parseChatDirectives(view.firstUserText);
  let reply: ChatReply;
  if (d.fail && view.conversationRequestNumber <= d.fail.count) {
    const retryAfter = d.retryAfter ?? "0";
    reply = {
      kind: "error",
      status: d.fail.status,
      message: d.fail.status === 503 ? QUEUE_FULL : `emulated failure (HTTP ${d.fail.status})`,
      ...(retryAfter === "none" ? {} : { retryAfter }),
    };
  } else if (d.hang) {
    reply = { kind: "hang" };
  } else {
    const next = d.calls[view.toolResults.length];
    // Side requests without tools can only be answered with text.
    if (next !== undefined && view.tools.length > 0) {
      reply = { kind: "tool_calls", calls: [next], chunkDelayMs: d.chunkDelayMs };
    } else {
      const last = view.toolResults.at(-1);
      const text = d.reply ??
        (last
          ? `done: ${last.content.slice(0, MAX_RESULT_ECHO)}`
          : `echo: ${d.rest.slice(0, MAX_PROMPT_ECHO)}`);
      reply = { kind: "text", text, chunkDelayMs: d.chunkDelayMs };
    }
  }
  return d.delayMs !== undefined && reply.kind !== "hang"
    ? { kind: "delay", ms: d.delayMs, then: reply }
    : reply;
}
