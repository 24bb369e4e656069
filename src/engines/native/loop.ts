/**
 * The native agent loop: ask the model, run the tool calls it makes in order, feed the
 * results back as `role: "tool"` messages, until it answers without tool calls. Calls the model
 * wrote as text are recovered and run the same way (text_calls/recover_reply.ts); a reply that
 * looks like a call but holds none that can run is answered with what was wrong, a few times
 * at most (loop_corrections.ts), and never taken for the final answer. As max_turns nears, the
 * last tool result counts down, and the last request goes without tools so the model must
 * answer (loop_aids.ts). It also stops on cancel (the caller aborts `signal`) and when the
 * model loops; a stop before the final answer keeps what the model wrote, marked as partial.
 * Each call is run by loop_tool_calls.ts.
 */
import type {
  ChatBackend,
  ChatMessage,
  ChatReply,
  ChatRequest,
} from "../../backends/chat_types.ts";
import type { PermissionDenial, ResponseTokens } from "../types.ts";
import { estimateTokens } from "../../models/tokens.ts";
import { RequestSize } from "./context/shortening.ts";
import { answerRest, runCall, type ToolCallDeps } from "./loop_tool_calls.ts";
import { chatTools } from "./prompt.ts";
import { offeredTools, recoverReply } from "./text_calls/recover_reply.ts";
import { countdownLine, partialText } from "./loop_aids.ts";
import { Corrections } from "./loop_corrections.ts";
import { formatCount } from "../../platform/count_text.ts";

/**
 * The default and the hard cap of model requests per turn: the default leaves room for a task of
 * a few files, and the cap bounds what one turn can spend when a model never stops calling tools.
 */
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

export interface LoopDeps extends ToolCallDeps {
  client: ChatBackend;
  /**
   * The last step before each request goes out (context/fitter.ts: fits it to the model's context,
   * sizes Ollama's; adds the effort); may throw ContextOverflowError. The request as is when
   * absent.
   */
  prepare?(request: ChatRequest): ChatRequest;
  model: string;
  maxTurns: number;
  signal: AbortSignal;
  /** A `warning:` line for the job (the turn limit made the model answer without tools). */
  warning?(text: string): void;
  /**
   * Each response's tokens as the backend reported them, beside the server's estimates of the
   * request and the reply, before its tool calls run (a job's budget is checked then).
   */
  response?(tokens: ResponseTokens): void;
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
  const offered = offeredTools(deps.policy.tools);
  const result: LoopResult = {
    ok: false,
    text: "",
    inputTokens: 0,
    outputTokens: 0,
    turns: 0,
    denials: [],
  };
  /** What the model wrote along the way: the result when it stops before its answer. */
  const said: string[] = [];
  const stop = (why: string): LoopResult => {
    result.text = partialText(said, why);
    return result;
  };
  let lastText = "";
  const corrections = new Corrections(messages, deps, offered, maxTurnsOf(deps));
  let lastCallKey = "";
  let sameCalls = 0;
  let grown = 0;
  // Each request resends the conversation: its messages' sizes are measured once.
  const sizes = new WeakMap<ChatMessage, number>();
  const measure = (m: ChatMessage): number => {
    let n = sizes.get(m);
    if (n === undefined) sizes.set(m, n = JSON.stringify(m).length);
    return n;
  };
  const maxTurns = maxTurnsOf(deps);
  while (true) {
    if (result.turns >= maxTurns) {
      result.errorText = `Stopped after max_turns (${maxTurns}) model requests without a final ` +
        `answer. Follow up to let it continue, or raise max_turns (at most ${MAX_TURNS_CAP})`;
      return stop(`stopped at max_turns ${maxTurns}`);
    }
    result.turns++;
    // The last request allowed goes without tools, so the model has to write its answer. With
    // max_turns 1 there is no room for that: its only request keeps the tools it asked for.
    const lastTurn = maxTurns > 1 && result.turns === maxTurns;
    const request: ChatRequest = {
      model: deps.model,
      messages,
      ...(tools.length > 0 && !lastTurn ? { tools } : {}),
    };
    let reply: ChatReply;
    let sent: ChatRequest | undefined;
    try {
      sent = deps.prepare ? deps.prepare(request) : request;
      reply = await deps.client.complete(sent, deps.signal);
    } catch (e) {
      if (!deps.signal.aborted) throw e;
      result.errorText = "Stopped before the model answered";
      return stop("stopped before the model's final answer: the job was cancelled or timed out");
    }
    result.inputTokens += reply.usage?.promptTokens ?? 0;
    result.outputTokens += reply.usage?.completionTokens ?? 0;
    const replyChars = reply.content.length +
      reply.toolCalls.reduce((n, c) => n + c.function.arguments.length + c.function.name.length, 0);
    deps.response?.({
      id: String(result.turns),
      reported: {
        inputTokens: reply.usage?.promptTokens ?? 0,
        outputTokens: reply.usage?.completionTokens ?? 0,
        cacheReadTokens: 0,
        cacheCreationTokens: 0,
      },
      requestTokens: new RequestSize(sent.messages, sent.tools ?? [], measure).tokens,
      replyTokens: estimateTokens(replyChars + (reply.thinkingChars ?? 0)),
    });
    grown += replyChars;
    // A reply without structured calls may hold calls written as text: taken as what the model
    // meant, and kept in the history as structured calls, so that both chat APIs accept it.
    const found = reply.toolCalls.length === 0 ? recoverReply(reply.content, offered) : undefined;
    if (found?.kind === "unrun") {
      if (reply.content.trim() !== "") said.push(reply.content.trim());
      const why = corrections.unrun(reply.content, found.reason, lastTurn);
      if (why) {
        result.errorText = why;
        return stop("stopped: the model's tool call written as text could not be run");
      }
      continue;
    }
    const recovered = found?.kind === "calls" ? found : undefined;
    const content = recovered ? recovered.content : reply.content;
    const toolCalls = recovered ? recovered.toolCalls : reply.toolCalls;
    const text = content.trim();
    const assistant: ChatMessage = {
      role: "assistant",
      content,
      ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
    };
    messages.push(assistant);
    deps.remember([assistant]);
    if (text !== "") said.push(text);
    if (grown > MAX_TURN_GROWTH_CHARS) {
      result.errorText = `Stopped: in this turn the replies of ${deps.client.options.label} ` +
        `and the tool results passed ${formatCount(MAX_TURN_GROWTH_CHARS)} ` +
        `characters (the cap for one turn, about a million tokens: more than a ` +
        `model's context holds). The model may be stuck repeating itself: start a new job with a ` +
        `narrower task, or use another model`;
      if (toolCalls.length > 0) {
        answerRest(messages, deps, toolCalls, toolCalls[0]!, "Not run: turn too long");
      }
      return stop("stopped: the turn grew too long");
    }
    if (text !== "") {
      deps.activity({ kind: "text", text });
      deps.transcript({ kind: "text", text: content });
      result.text = content;
    }
    if (toolCalls.length === 0) {
      result.ok = true;
      if (lastTurn) {
        deps.warning?.(
          `max_turns (${maxTurns}) reached: the model wrote this answer in a last turn without ` +
            `tools, so its work may be unfinished. Follow up to let it continue`,
        );
      }
      return result;
    }
    if (lastTurn) {
      // Calls made although no tools were offered are not run: the turn limit is reached.
      answerRest(messages, deps, toolCalls, toolCalls[0]!, "Not run: max_turns reached");
      result.errorText = `Stopped after max_turns (${maxTurns}) model requests without a final ` +
        `answer: the last request went without tools and the model still called one. Follow ` +
        `up to let it continue, or raise max_turns (at most ${MAX_TURNS_CAP})`;
      return stop(`stopped at max_turns ${maxTurns}`);
    }
    if (text !== "" && text === lastText) {
      result.errorText = `Stopped: the model gave the same reply twice in a row (loop ` +
        `detected): "${text.slice(0, 120)}"`;
      answerRest(messages, deps, toolCalls, toolCalls[0]!, "Not run: loop detected");
      return stop("stopped: the model repeated itself");
    }
    lastText = text;
    const countdown = countdownLine(maxTurns - result.turns);
    for (const [i, call] of toolCalls.entries()) {
      if (deps.signal.aborted) {
        answerRest(messages, deps, toolCalls, call, "Not run: the job was stopped");
        return stop("stopped before the model's final answer: the job was cancelled or timed out");
      }
      const key = `${call.function.name}\u0000${canonicalArgs(call.function.arguments)}`;
      sameCalls = key === lastCallKey ? sameCalls + 1 : 1;
      lastCallKey = key;
      // A call written as text that cannot run runs nothing: Corrections bounds those.
      if (sameCalls >= REPEATED_CALLS && !recovered?.recovered.get(call.id)?.error) {
        result.errorText = `Stopped: the model called ${call.function.name} with the same ` +
          `arguments ${REPEATED_CALLS} times in a row (loop detected)`;
        // Every tool call needs an answer, or a follow-up's history is invalid.
        answerRest(messages, deps, toolCalls, call, "Not run: loop detected");
        return stop("stopped: the model repeated a call");
      }
      const toolMessage = await runCall(call, deps, result, recovered?.recovered.get(call.id));
      // The last result of the reply carries the countdown, where the model reads next.
      if (countdown && i === toolCalls.length - 1) toolMessage.content += `\n\n${countdown}`;
      grown += (toolMessage.content ?? "").length;
      messages.push(toolMessage);
      deps.remember([toolMessage]);
    }
    // Calls written as text of which none could run were answered with their errors; a model
    // that keeps writing such calls is stopped rather than let run to max_turns.
    const why = corrections.afterCalls(recovered);
    if (why) {
      result.errorText = why;
      return stop("stopped: the model's tool calls written as text could not be run");
    }
  }
}

function maxTurnsOf(deps: LoopDeps): number {
  return Math.min(Math.max(1, deps.maxTurns), MAX_TURNS_CAP);
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
