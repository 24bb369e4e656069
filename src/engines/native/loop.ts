/**
 * The native agent loop: ask the model, run the tool calls it makes in order, feed the
 * results back as `role: "tool"` messages, until it answers without tool calls. It also
 * stops on max_turns, on cancel (the caller aborts `signal`), and when the model loops.
 */
import type {
  ChatBackend,
  ChatMessage,
  ChatReply,
  ChatRequest,
  ChatToolCall,
} from "../../backends/openai.ts";
import type { Activity, PermissionDenial, TranscriptEntry } from "../types.ts";
import type { ToolPolicy } from "./permissions.ts";
import { chatTools } from "./prompt.ts";
import type { ToolContext } from "./tools/types.ts";

/** The default and the hard cap of model requests per turn (issue 3, item 2). */
export const DEFAULT_MAX_TURNS = 25;
export const MAX_TURNS_CAP = 100;
/** The same call with the same arguments this many times in a row is a loop. */
const REPEATED_CALLS = 3;
/**
 * What one turn may add to the conversation (replies and tool results), in characters.
 * Every request resends the whole conversation, so without a cap a backend answering near
 * its per-reply caps for max_turns requests makes the server hold and send gigabytes
 * (measured: 25 replies of 3 MiB, a 1 GB peak; stopped at this cap, under 150 MB). 4
 * million characters is about a million tokens: as much as the largest context windows
 * hold, and far past any model's output limit.
 */
export const MAX_TURN_GROWTH_CHARS = 4_000_000;

export interface LoopDeps {
  client: ChatBackend;
  /**
   * The last step before each request goes out (context.ts: fits it to the model's context,
   * sizes Ollama's; adds the effort); may throw ContextOverflowError. The request as is when
   * absent.
   */
  prepare?(request: ChatRequest): ChatRequest;
  model: string;
  policy: ToolPolicy;
  ctx: ToolContext;
  maxTurns: number;
  signal: AbortSignal;
  activity(a: Activity): void;
  toolCall(): void;
  transcript(entry: TranscriptEntry): void;
  /** Appends messages to the durable history as they are made. */
  remember(messages: ChatMessage[]): void;
}

export interface LoopResult {
  ok: boolean;
  text: string;
  errorText?: string;
  inputTokens: number;
  outputTokens: number;
  turns: number;
  denials: PermissionDenial[];
}

/** Runs the loop over `messages` (history plus the new user message), which it extends. */
export async function runLoop(messages: ChatMessage[], deps: LoopDeps): Promise<LoopResult> {
  const tools = chatTools(deps.policy.tools);
  const result: LoopResult = {
    ok: false,
    text: "",
    inputTokens: 0,
    outputTokens: 0,
    turns: 0,
    denials: [],
  };
  let lastText = "";
  let lastCallKey = "";
  let sameCalls = 0;
  let grown = 0;
  const maxTurns = Math.min(Math.max(1, deps.maxTurns), MAX_TURNS_CAP);
  while (true) {
    if (result.turns >= maxTurns) {
      result.errorText = `Stopped after max_turns (${maxTurns}) model requests without a final ` +
        `answer. Follow up to let it continue, or raise max_turns (at most ${MAX_TURNS_CAP})`;
      return result;
    }
    result.turns++;
    const request: ChatRequest = {
      model: deps.model,
      messages,
      ...(tools.length > 0 ? { tools } : {}),
    };
    const reply: ChatReply = await deps.client.complete(
      deps.prepare ? deps.prepare(request) : request,
      deps.signal,
    );
    result.inputTokens += reply.usage?.promptTokens ?? 0;
    result.outputTokens += reply.usage?.completionTokens ?? 0;
    const text = reply.content.trim();
    const assistant: ChatMessage = {
      role: "assistant",
      content: reply.content,
      ...(reply.toolCalls.length > 0 ? { tool_calls: reply.toolCalls } : {}),
    };
    messages.push(assistant);
    deps.remember([assistant]);
    grown += reply.content.length +
      reply.toolCalls.reduce((n, c) => n + c.function.arguments.length + c.function.name.length, 0);
    if (grown > MAX_TURN_GROWTH_CHARS) {
      result.errorText = `Stopped: in this turn the replies of ${deps.client.options.label} ` +
        `and the tool results passed ${MAX_TURN_GROWTH_CHARS.toLocaleString("en-US")} ` +
        `characters (the cap for one turn, about a million tokens: more than a ` +
        `model's context holds). The model may be stuck repeating itself: start a new job with a ` +
        `narrower task, or use another model`;
      if (reply.toolCalls.length > 0) {
        answerRest(messages, deps, reply.toolCalls, reply.toolCalls[0]!, "Not run: turn too long");
      }
      return result;
    }
    if (text !== "") {
      deps.activity({ kind: "text", text });
      deps.transcript({ kind: "text", text: reply.content });
      result.text = reply.content;
    }
    if (reply.toolCalls.length === 0) {
      result.ok = true;
      return result;
    }
    if (text !== "" && text === lastText) {
      result.errorText = `Stopped: the model gave the same reply twice in a row (loop ` +
        `detected): "${text.slice(0, 120)}"`;
      answerRest(messages, deps, reply.toolCalls, reply.toolCalls[0]!, "Not run: loop detected");
      return result;
    }
    lastText = text;
    for (const call of reply.toolCalls) {
      if (deps.signal.aborted) {
        answerRest(messages, deps, reply.toolCalls, call, "Not run: the job was stopped");
        return result;
      }
      const key = `${call.function.name}\u0000${canonicalArgs(call.function.arguments)}`;
      sameCalls = key === lastCallKey ? sameCalls + 1 : 1;
      lastCallKey = key;
      if (sameCalls >= REPEATED_CALLS) {
        result.errorText = `Stopped: the model called ${call.function.name} with the same ` +
          `arguments ${REPEATED_CALLS} times in a row (loop detected)`;
        // Every tool call needs an answer, or a follow-up's history is invalid.
        answerRest(messages, deps, reply.toolCalls, call, "Not run: loop detected");
        return result;
      }
      const toolMessage = await runCall(call, deps, result);
      grown += (toolMessage.content ?? "").length;
      messages.push(toolMessage);
      deps.remember([toolMessage]);
    }
  }
}

async function runCall(
  call: ChatToolCall,
  deps: LoopDeps,
  result: LoopResult,
): Promise<ChatMessage> {
  const name = call.function.name;
  deps.toolCall();
  let input: Record<string, unknown>;
  let answer: { text: string; isError: boolean };
  try {
    const parsed = call.function.arguments.trim() === "" ? {} : JSON.parse(call.function.arguments);
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
      throw new Error("arguments must be a JSON object");
    }
    input = parsed as Record<string, unknown>;
  } catch (e) {
    input = {};
    answer = {
      text: `Error: the arguments of ${name} are not valid JSON (${(e as Error).message}). ` +
        `Call it again with a JSON object`,
      isError: true,
    };
    deps.activity({ kind: "tool", name, detail: "(bad arguments)" });
    deps.transcript({ kind: "tool_call", id: call.id, name, input: call.function.arguments });
    return finish();
  }
  deps.activity({ kind: "tool", name, detail: describeCall(name, input) });
  deps.transcript({ kind: "tool_call", id: call.id, name, input });
  const refusal = deps.policy.refusal(name, input);
  if (refusal) {
    result.denials.push({ tool: name, detail: describeCall(name, input) });
    answer = { text: refusal, isError: true };
    return finish();
  }
  const tool = deps.policy.tools.find((t) => t.name === name)!;
  try {
    const out = await tool.run(input, deps.ctx);
    answer = { text: out.text, isError: out.isError ?? false };
  } catch (e) {
    answer = { text: `Error: ${name} failed: ${(e as Error).message}`, isError: true };
  }
  return finish();

  function finish(): ChatMessage {
    if (answer.isError) deps.activity({ kind: "error", text: `${name}: ${answer.text}` });
    deps.transcript({
      kind: "tool_result",
      id: call.id,
      name,
      text: answer.text,
      isError: answer.isError,
    });
    return { role: "tool", tool_call_id: call.id, name, content: answer.text };
  }
}

function answerRest(
  messages: ChatMessage[],
  deps: LoopDeps,
  calls: readonly ChatToolCall[],
  from: ChatToolCall,
  text: string,
): void {
  const rest = calls.slice(calls.indexOf(from));
  const answers: ChatMessage[] = rest.map((c) => ({
    role: "tool",
    tool_call_id: c.id,
    name: c.function.name,
    content: text,
  }));
  messages.push(...answers);
  deps.remember(answers);
}

/** Arguments compared by value, so key order and spacing do not hide a loop. */
function canonicalArgs(text: string): string {
  try {
    return JSON.stringify(sortKeys(JSON.parse(text)));
  } catch {
    return text.trim();
  }
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.keys(value).sort().map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
  );
}

/** The one-line detail shown in status, like the Claude engine's. */
export function describeCall(name: string, input: Record<string, unknown>): string {
  const pick = (k: string) => (typeof input[k] === "string" ? (input[k] as string) : "");
  switch (name) {
    case "Bash":
      return pick("command");
    case "Read":
    case "Write":
    case "Edit":
      return pick("file_path");
    case "Glob":
    case "Grep":
      return [pick("pattern"), pick("path")].filter(Boolean).join(" in ");
    default:
      return JSON.stringify(input).slice(0, 200);
  }
}
