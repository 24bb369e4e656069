/**
 * Context windows as a local Ollama runs them, and the models it keeps loaded.
 *
 * Which context a request runs with (Ollama's order): `options.num_ctx` of a native request
 * (`/api/chat`, `/api/generate`), else the model's Modelfile `num_ctx`, else the server's
 * `OLLAMA_CONTEXT_LENGTH` (emulator option `serverContextLength`), else a default
 * (`defaultContextLength`: in contextMode "real" 4096 unless a test picks another, the old
 * default that most "my model forgot the task" reports come from; in "ideal" mode the model's
 * maximum, so that `/api/ps` agrees with prompts never being cut). It is capped at the model's
 * own maximum (`contextLength`). Cloud models always run with their maximum.
 * `/v1/chat/completions` and `/v1/messages` cannot set `num_ctx`.
 *
 * Loading (loader.ts): the emulator remembers, per model, the context it is
 * loaded with and until when (`keep_alive`, default 5m; 0 unloads after the request, a
 * negative value keeps it forever).
 * A request that needs another context reloads the model, which tests can count: a client that
 * changes `num_ctx` every turn pays a reload every turn.
 *
 * Truncation (contextMode "real"): a prompt larger than the context is cut silently from the
 * front, the way server/prompt.go chatPrompt does: oldest messages first, system messages kept;
 * when even the last message does not fit beside them, the runner keeps only the tail of the
 * prompt (about half the context, llm/llama_server.go contextShiftPromptLimit), so the system
 * prompt and tool definitions go too. Prompt sizes are estimated as chars/4 of the JSON of the
 * messages, tools and system prompt. In contextMode "ideal" (the default) nothing is cut and
 * usage is reported as before; every request is recorded either way (`contextRecords`).
 */

import { isRecord } from "./util.ts";
import { ModelLoader } from "./loader.ts";
import { type ModelEntry, modelfileNumCtx } from "./models.ts";

export type ContextMode = "ideal" | "real";
export type ContextSource = "request" | "modelfile" | "server" | "default" | "cloud";

export interface ContextOptions {
  /** "ideal" (default): nothing is truncated. "real": prompts over the context are cut. */
  contextMode?: ContextMode;
  /** The server's default context when nothing else sets one. Defaults to 4096 in "real"
   * mode and to the model's maximum in "ideal" mode. */
  defaultContextLength?: number;
  /** The server's OLLAMA_CONTEXT_LENGTH; unset by default. */
  serverContextLength?: number;
  /** The server's OLLAMA_KEEP_ALIVE: seconds, or a Go duration such as "5m". Defaults to "5m". */
  keepAlive?: number | string;
}

/** What the emulator decided about one inference request's prompt. */
export interface ContextRecord {
  path: string;
  model: string;
  /** chars/4 of the whole prompt as sent (messages, tools, system). */
  estimatedTokens: number;
  /** The context the request ran with. */
  contextLength: number;
  source: ContextSource;
  /** True when the prompt did not fit (in "ideal" mode it is still sent whole). */
  overflow: boolean;
  /** True when the emulator cut the prompt ("real" mode only). */
  truncated: boolean;
  /** "messages": whole messages dropped; "tokens": only the tail of the last message kept. */
  truncation?: "messages" | "tokens";
  /** chars/4 of what the model saw: the prompt tokens reported in "real" mode. */
  keptTokens: number;
  droppedMessages: number;
  /** The model was not in memory with this context and was loaded for this request. */
  load: boolean;
  /** It was in memory with another context: a reload, which real servers pay for in seconds. */
  reload: boolean;
  at: number;
}

export const DEFAULT_CONTEXT = 4096;

export function estimateTokens(chars: number): number {
  return Math.max(1, Math.ceil(chars / 4));
}

/** The context a request runs with, and where it came from. */
export function resolveContext(
  entry: ModelEntry,
  requestNumCtx: unknown,
  opts: ContextOptions,
): { contextLength: number; source: ContextSource } {
  if (entry.remote) return { contextLength: entry.contextLength, source: "cloud" };
  const pick = (n: number, source: ContextSource) => ({
    contextLength: Math.min(n, entry.contextLength),
    source,
  });
  if (typeof requestNumCtx === "number" && Number.isInteger(requestNumCtx) && requestNumCtx > 0) {
    return pick(requestNumCtx, "request");
  }
  const modelfile = modelfileNumCtx(entry);
  if (modelfile !== undefined) return pick(modelfile, "modelfile");
  if (opts.serverContextLength !== undefined) return pick(opts.serverContextLength, "server");
  // An ideal server is one set up large enough: what /api/ps shows must not contradict the
  // whole prompts it reads (clients check the loaded context against their request size).
  const fallback = opts.contextMode === "real" ? DEFAULT_CONTEXT : entry.contextLength;
  return pick(opts.defaultContextLength ?? fallback, "default");
}

// ---------------------------------------------------------------------------------------------
// Fitting a prompt into a context

export interface PromptParts {
  messages: unknown[];
  /** Sent beside the messages (tools, a top-level system prompt): counted, never dropped by
   * message-level truncation. */
  tools?: unknown[];
  system?: unknown;
}

export interface FittedPrompt {
  messages: unknown[];
  /** False when the runner cut the front of the prompt, system prompt and tools included. */
  keptSystem: boolean;
  estimatedTokens: number;
  keptTokens: number;
  droppedMessages: number;
  truncation?: "messages" | "tokens";
}

function promptChars(messages: unknown[], tools: unknown[], system: unknown): number {
  return JSON.stringify(messages).length +
    (tools.length > 0 ? JSON.stringify(tools).length : 0) +
    (system === undefined || system === "" ? 0 : JSON.stringify(system).length);
}

function isSystemMessage(m: unknown): boolean {
  return isRecord(m) && m.role === "system";
}

/** A message's text: string content, or every text (and tool result text) inside blocks. */
function messageText(m: Record<string, unknown>): string {
  const walk = (c: unknown): string[] => {
    if (typeof c === "string") return [c];
    if (!Array.isArray(c)) return [];
    return c.flatMap((b) =>
      isRecord(b) ? (typeof b.text === "string" ? [b.text] : walk(b.content)) : []
    );
  };
  return walk(m.content).join("\n");
}

/** The last message with its text cut from the front so that it alone takes `budget` tokens. */
function tailOf(last: unknown, budget: number): unknown[] {
  if (!isRecord(last)) return [last];
  const text = messageText(last);
  const { tool_calls: _calls, ...rest } = last;
  let keep = Math.max(0, budget * 4 - JSON.stringify([{ ...rest, content: "" }]).length);
  for (let i = 0; i < 64; i++) {
    const cut = [{ ...rest, content: keep > 0 ? text.slice(-keep) : "" }];
    const over = JSON.stringify(cut).length - budget * 4;
    if (over <= 0 || keep === 0) return cut;
    keep = Math.max(0, keep - over);
  }
  return [{ ...rest, content: "" }];
}

/** Cuts `parts` to `contextLength` tokens as Ollama would (see the module comment). */
export function fitPrompt(parts: PromptParts, contextLength: number): FittedPrompt {
  const tools = parts.tools ?? [];
  const msgs = parts.messages;
  const tokens = (messages: unknown[]) =>
    estimateTokens(promptChars(messages, tools, parts.system));
  const estimated = tokens(msgs);
  const base = { keptSystem: true, estimatedTokens: estimated, droppedMessages: 0 };
  if (estimated <= contextLength) return { ...base, messages: msgs, keptTokens: estimated };
  for (let i = 1; i < msgs.length; i++) {
    const kept = [...msgs.slice(0, i).filter(isSystemMessage), ...msgs.slice(i)];
    const t = tokens(kept);
    if (t <= contextLength) {
      return {
        ...base,
        messages: kept,
        keptTokens: t,
        droppedMessages: msgs.length - kept.length,
        truncation: "messages",
      };
    }
  }
  const budget = Math.max(1, contextLength - Math.max(Math.floor(contextLength / 2), 1));
  const tail = msgs.length > 0 ? tailOf(msgs[msgs.length - 1], budget) : [];
  return {
    messages: tail,
    keptSystem: false,
    estimatedTokens: estimated,
    keptTokens: estimateTokens(JSON.stringify(tail).length),
    droppedMessages: Math.max(0, msgs.length - 1),
    truncation: "tokens",
  };
}

/** Decides, records and applies the context of each inference request. */
export class ContextKeeper {
  readonly loader: ModelLoader;
  readonly records: ContextRecord[] = [];
  readonly mode: ContextMode;

  constructor(readonly opts: ContextOptions) {
    this.loader = new ModelLoader(opts);
    this.mode = opts.contextMode ?? "ideal";
  }

  resolve(entry: ModelEntry, numCtx: unknown): { contextLength: number; source: ContextSource } {
    return resolveContext(entry, numCtx, this.opts);
  }

  /** Loads the model for a request and fits its prompt; `numCtx` only from native requests. */
  admit(args: {
    path: string;
    entry: ModelEntry;
    parts: PromptParts;
    numCtx?: unknown;
    keepAlive: number;
  }): { fitted: FittedPrompt; record: ContextRecord } {
    const { contextLength, source } = resolveContext(args.entry, args.numCtx, this.opts);
    const { load, reload } = this.loader.use(args.entry, contextLength, args.keepAlive);
    const whole = fitPrompt(args.parts, Number.MAX_SAFE_INTEGER);
    const fitted = this.mode === "real" && !args.entry.remote
      ? fitPrompt(args.parts, contextLength)
      : whole;
    const record: ContextRecord = {
      path: args.path,
      model: args.entry.display,
      estimatedTokens: whole.estimatedTokens,
      contextLength,
      source,
      overflow: whole.estimatedTokens > contextLength,
      truncated: fitted.truncation !== undefined,
      ...(fitted.truncation ? { truncation: fitted.truncation } : {}),
      keptTokens: fitted.keptTokens,
      droppedMessages: fitted.droppedMessages,
      load,
      reload,
      at: Date.now(),
    };
    this.records.push(record);
    return { fitted, record };
  }
}
