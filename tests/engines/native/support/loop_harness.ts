/** What the native loop's tests share: tools that record their inputs, deps, checks. */
import assert from "node:assert/strict";
import { ChatClient, type ChatMessage } from "../../../../src/backends/openai/chat.ts";
import type { Activity, TranscriptEntry } from "../../../../src/engines/types.ts";
import { DEFAULT_MAX_TURNS, type LoopDeps } from "../../../../src/engines/native/loop.ts";
import { toolPolicy } from "../../../../src/engines/native/permissions.ts";
import type {
  JsonSchema,
  NativeTool,
  ToolContext,
  ToolName,
  ToolResult,
} from "../../../../src/engines/native/tools/types.ts";
import type { PermissionMode } from "../../../../src/settings/types.ts";

export type Json = Record<string, unknown>;

/** A tool for the test: records its inputs, answers with `answer`. */
export interface TestTool extends NativeTool {
  inputs: Record<string, unknown>[];
}

export function testTool(
  name: ToolName,
  readOnly: boolean,
  answer: (input: Record<string, unknown>) => ToolResult | Promise<ToolResult> = (input) => ({
    text: `${name} ran with ${JSON.stringify(input)}`,
  }),
  parameters: JsonSchema = { type: "object", properties: {} },
): TestTool {
  const inputs: Record<string, unknown>[] = [];
  return {
    name,
    readOnly,
    description: `${name} for tests`,
    parameters,
    inputs,
    run(input) {
      inputs.push(input);
      return Promise.resolve(answer(input));
    },
  };
}

export interface Harness {
  deps: LoopDeps;
  activities: Activity[];
  transcript: TranscriptEntry[];
  remembered: ChatMessage[];
  warnings: string[];
  toolCalls: () => number;
  recoveredCalls: () => number;
}

export function harness(
  url: string,
  tools: NativeTool[],
  opts: {
    mode?: PermissionMode;
    allowed?: string[];
    disallowed?: string[];
    maxTurns?: number;
    signal?: AbortSignal;
  } = {},
): Harness {
  const activities: Activity[] = [];
  const transcript: TranscriptEntry[] = [];
  const remembered: ChatMessage[] = [];
  const warnings: string[] = [];
  let calls = 0;
  let recovered = 0;
  const signal = opts.signal ?? new AbortController().signal;
  const ctx: ToolContext = {
    cwd: "/nonexistent/job",
    roots: ["/nonexistent/job"],
    signal,
    fileChanged: () => {},
    commandRun: () => {},
  };
  return {
    deps: {
      client: new ChatClient({ baseUrl: url, label: "ollama", backoffMs: () => 10 }),
      model: "qwen3:8b",
      policy: toolPolicy(tools, opts.mode ?? "acceptEdits", opts.allowed, opts.disallowed),
      ctx,
      maxTurns: opts.maxTurns ?? DEFAULT_MAX_TURNS,
      signal,
      activity: (a) => activities.push(a),
      toolCall: (info) => {
        calls++;
        if (info?.recovered) recovered++;
      },
      warning: (text) => warnings.push(text),
      transcript: (e) => transcript.push(e),
      remember: (m) => remembered.push(...m),
    },
    activities,
    transcript,
    remembered,
    warnings,
    toolCalls: () => calls,
    recoveredCalls: () => recovered,
  };
}

export const user = (content: string): ChatMessage[] => [{ role: "user", content }];

/** The emulator's prompt-token estimate for one recorded request. */
export function emulatedPromptTokens(body: Json): number {
  const tools = Array.isArray(body.tools) && body.tools.length > 0
    ? JSON.stringify(body.tools).length
    : 0;
  return Math.max(1, Math.ceil((JSON.stringify(body.messages).length + tools) / 4));
}

/**
 * Every assistant tool call is answered by exactly one tool message, right after it and in
 * call order, as OpenAI-compatible servers require of a history sent back.
 */
export function assertEveryCallAnswered(messages: readonly ChatMessage[]): void {
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role !== "assistant" || !m.tool_calls?.length) continue;
    const answers = messages.slice(i + 1, i + 1 + m.tool_calls.length);
    assert.deepEqual(
      answers.map((a) => (a.role === "tool" ? a.tool_call_id : `(${a.role})`)),
      m.tool_calls.map((c) => c.id),
      `the tool calls of message ${i} are each answered, in order`,
    );
  }
}

/** What the loop appended to `messages` is exactly what it handed to remember(). */
export function assertRemembered(h: Harness, messages: ChatMessage[], initial: number): void {
  assert.deepEqual(h.remembered, messages.slice(initial));
}

export const toolMessages = (messages: readonly ChatMessage[]) =>
  messages.filter((m): m is Extract<ChatMessage, { role: "tool" }> => m.role === "tool");

/** A bare OpenAI-style server whose n-th reply is `frames(n)`, recording the request bodies. */
export async function withRawServer(
  reply: (n: number) => unknown[],
  fn: (url: string, bodies: Json[]) => Promise<void>,
): Promise<void> {
  const bodies: Json[] = [];
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen: () => {} }, async (req) => {
    bodies.push(await req.json());
    const text = reply(bodies.length).map((f) => `data: ${JSON.stringify(f)}\n\n`).join("") +
      "data: [DONE]\n\n";
    return new Response(text, { headers: { "content-type": "text/event-stream" } });
  });
  try {
    await fn(`http://127.0.0.1:${server.addr.port}`, bodies);
  } finally {
    await server.shutdown();
  }
}

export const callsFrame = (calls: Array<[id: string, name: string, args: string]>) => ({
  choices: [{
    index: 0,
    delta: {
      tool_calls: calls.map(([id, name, args], index) => ({
        index,
        id,
        type: "function",
        function: { name, arguments: args },
      })),
    },
    finish_reason: "tool_calls",
  }],
});

export const textFrame = (text: string) => ({
  choices: [{ index: 0, delta: { content: text }, finish_reason: "stop" }],
});
