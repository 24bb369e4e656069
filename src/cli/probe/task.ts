/**
 * The tiny task `doctor --probe` gives each model, as each engine would send it: Ollama's
 * native `/api/chat` for the native engine, the Anthropic-compatible `/v1/messages` that
 * Claude Code talks to for the claude engine. Two of the engines' own tools are offered, by
 * their Claude Code names, and any call of one counts.
 */
import { errorDetail } from "../../backends/http_util.ts";
import { isObject } from "../../platform/json_object.ts";
import { randomBytes } from "node:crypto";
import { OllamaChatClient } from "../../backends/ollama/chat.ts";
import { readBounded, REPLY_LIMITS } from "../../backends/bounded.ts";
import { DelegateError, errorMessage } from "../../errors.ts";
import type { EngineFacts, ProbeTool } from "../../engines/facts.ts";

export const PROBE_TOOLS: readonly (ProbeTool & { description: string })[] = [
  {
    name: "Read",
    description: "Read a text file. file_path: relative to the working directory.",
    parameters: {
      type: "object",
      properties: { file_path: { type: "string", description: "The file to read" } },
      required: ["file_path"],
    },
  },
  {
    name: "Bash",
    description: "Run a shell command in the working directory and return its output.",
    parameters: {
      type: "object",
      properties: { command: { type: "string", description: "The command to run" } },
      required: ["command"],
    },
  },
];

const SYSTEM = "You are a careful coding agent. Working directory: /work/project\n" +
  "Tools: Read, Bash. Look before you answer: use a tool rather than guess.";
const TASK = "What does the file notes.txt in the working directory say? Read it first.";

/** Replies stay short: a call or a sentence. Thinking models get room to think first. */
const MAX_REPLY_TOKENS = 1024;

/** What a model did with the task on one path. */
export type CallKind = "structured" | "text" | "none";

export interface PathOutcome {
  call: CallKind;
  /** The tool it called, and a problem with the call's arguments (then it did not work). */
  tool?: string;
  argumentsError?: string;
  /** The text format of a call written as text (hermes, qwen3-coder...). */
  format?: string;
  /** The start of a reply without a call. */
  said?: string;
  /** Wall time of the request, in seconds. */
  seconds: number;
}

/** Ollama's counts and timings of the native request (prompt_eval_*, eval_*, load_duration). */
export interface NativeOutcome extends PathOutcome {
  promptTokens?: number;
  promptMs?: number;
  evalTokens?: number;
  evalMs?: number;
  loadMs?: number;
}

/**
 * A different first line each run: Ollama reuses a cached prompt prefix, and a prompt it had
 * cached would make the prompt speed look far better than a real turn's.
 */
function freshSystem(): string {
  return `Session ${randomBytes(6).toString("hex")}.\n${SYSTEM}`;
}

/** How a reply's calls are read: by the engine that recovers calls written as text. */
export type CallReading = Pick<EngineFacts, "textCalls" | "checkArguments">;

function classify(
  structured: Array<{ name: string; arguments: unknown }>,
  text: string,
  reading: CallReading,
): Omit<PathOutcome, "seconds"> {
  const first = structured[0];
  if (first) {
    const tool = PROBE_TOOLS.find((t) => t.name === first.name);
    const error = tool
      ? reading.checkArguments?.(tool, first.arguments)
      : `it called "${first.name}", a tool it was not offered`;
    return { call: "structured", tool: first.name, ...(error ? { argumentsError: error } : {}) };
  }
  const call = reading.textCalls?.(text, PROBE_TOOLS)?.[0];
  if (call) {
    return {
      call: "text",
      tool: call.name,
      format: call.format,
      ...(call.error ? { argumentsError: call.error } : {}),
    };
  }
  const said = text.replace(/\s+/g, " ").trim().slice(0, 80);
  return { call: "none", ...(said ? { said } : {}) };
}

/** A timeout reads as such, not as "cannot reach Ollama". */
function probeError(path: string, timeoutMs: number, e: unknown): DelegateError {
  const timedOut = (x: unknown) => (x as Error | undefined)?.name === "TimeoutError";
  if (timedOut(e) || timedOut((e as { cause?: unknown }).cause)) {
    return new DelegateError(`${path}: no answer within ${timeoutMs / 1000} s`, { cause: e });
  }
  return new DelegateError(`${path}: ${errorMessage(e)}`, { cause: e });
}

/**
 * The native engine's path: one `/api/chat` request with the tools, through the client the
 * native engine uses on Ollama (streamed, its retries, keep_alive as the engine sends it).
 */
export async function probeNative(
  baseUrl: string,
  model: string,
  options: { timeoutMs: number; keepAlive?: string; reading: CallReading },
): Promise<NativeOutcome> {
  const client = new OllamaChatClient({
    baseUrl,
    label: "Ollama",
    ...(options.keepAlive ? { keepAlive: options.keepAlive } : {}),
  });
  const signal = AbortSignal.timeout(options.timeoutMs);
  const started = performance.now();
  let reply;
  try {
    reply = await client.complete({
      model,
      messages: [{ role: "system", content: freshSystem() }, { role: "user", content: TASK }],
      tools: PROBE_TOOLS.map((t) => ({
        type: "function" as const,
        function: { name: t.name, description: t.description, parameters: t.parameters },
      })),
      max_tokens: MAX_REPLY_TOKENS,
    }, signal);
  } catch (e) {
    throw probeError("/api/chat", options.timeoutMs, signal.aborted ? signal.reason : e);
  }
  const seconds = (performance.now() - started) / 1000;
  const calls = reply.toolCalls.map((c) => ({
    name: c.function.name,
    arguments: parseArguments(c.function.arguments),
  }));
  const outcome: NativeOutcome = {
    ...classify(calls, reply.content, options.reading),
    seconds: round3(seconds),
  };
  if (reply.usage) {
    outcome.promptTokens = reply.usage.promptTokens;
    outcome.evalTokens = reply.usage.completionTokens;
  }
  if (reply.timings) {
    outcome.promptMs = reply.timings.promptEvalMs;
    outcome.evalMs = reply.timings.evalMs;
    outcome.loadMs = reply.timings.loadMs;
  }
  return outcome;
}

/** The client hands arguments on as JSON text; text that is no JSON is checked as is. */
function parseArguments(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

const round3 = (n: number) => Math.round(n * 1000) / 1000;

/**
 * The claude engine's path: one Anthropic Messages request, as Claude Code sends it, not
 * streamed. Claude Code runs only structured `tool_use` blocks: a call written as text is
 * reported as such, and does nothing there.
 */
export async function probeMessages(
  baseUrl: string,
  model: string,
  options: { timeoutMs: number; reading: CallReading },
): Promise<PathOutcome> {
  const started = performance.now();
  let body: unknown;
  let status: number;
  try {
    const response = await fetch(`${baseUrl}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" },
      body: JSON.stringify({
        model,
        max_tokens: MAX_REPLY_TOKENS,
        system: freshSystem(),
        messages: [{ role: "user", content: TASK }],
        tools: PROBE_TOOLS.map((t) => ({
          name: t.name,
          description: t.description,
          input_schema: t.parameters,
        })),
      }),
      signal: AbortSignal.timeout(options.timeoutMs),
    });
    status = response.status;
    const max = response.ok ? REPLY_LIMITS.jsonBodyBytes : REPLY_LIMITS.errorBodyBytes;
    const read = await readBounded(response.body, max);
    const text = new TextDecoder().decode(read.bytes);
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
    if (response.ok && !read.complete) {
      throw new DelegateError(`the answer is over the cap of ${max} bytes`);
    }
  } catch (e) {
    throw probeError("/v1/messages", options.timeoutMs, e);
  }
  if (status < 200 || status > 299) {
    const detail = errorDetail(body, String(body));
    throw new DelegateError(`/v1/messages: HTTP ${status}: ${detail.slice(0, 300)}`);
  }
  const content = isObject(body) && Array.isArray(body.content) ? body.content : undefined;
  if (!content) throw new DelegateError("/v1/messages: the answer has no content list");
  const calls: Array<{ name: string; arguments: unknown }> = [];
  let text = "";
  for (const block of content) {
    if (!isObject(block)) continue;
    if (block.type === "tool_use" && typeof block.name === "string") {
      calls.push({ name: block.name, arguments: block.input });
    } else if (block.type === "text" && typeof block.text === "string") {
      text += block.text;
    }
  }
  return {
    ...classify(calls, text, options.reading),
    seconds: round3((performance.now() - started) / 1000),
  };
}
