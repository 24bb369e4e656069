/**
 * A loopback stand-in for an Ollama server, for tests and benchmarks.
 *
 * It speaks enough of Ollama's documented HTTP API (the native `/api/*` endpoints and the
 * Anthropic-compatible `/v1/messages`) that both our own Ollama client and the real Claude Code
 * CLI (via `ANTHROPIC_BASE_URL`) can run against it without a GPU or a model. Status codes, body
 * shapes and the SSE event order follow Ollama's behaviour, because tests that pass against a
 * friendlier fake would hide bugs that only show up against the real server.
 *
 * The model's behaviour is scripted either by a `script` callback or, when none answers, by
 * directives in the first user message (`@bash`, `@delay`, `@hang`, `@reply`), so that a test can
 * drive a delegated `claude -p` purely through the prompt it sends.
 *
 * The OpenAI-compatible `/v1/chat/completions` (ollama_emulator_openai.ts) has its own
 * `chatScript` hook and a larger directive set (`@tool`, `@fail`...; see
 * ollama_emulator_chat_script.ts), and `/v1/models` lists the same models as `/api/tags`.
 *
 * Standalone: `deno run -A tests/support/ollama_emulator.ts --port 0 [--models a,b:cloud]`
 * prints `{"url":"http://127.0.0.1:PORT"}` and serves until SIGTERM, SIGINT or stdin EOF.
 */

import { type ChatScript } from "./ollama_emulator_chat_script.ts";
import { createChatCompletions } from "./ollama_emulator_openai.ts";
import {
  isRecord,
  jsonResponse,
  randomAlnum,
  randomHex,
  splitText,
  wait,
} from "./ollama_emulator_util.ts";

export type {
  ChatReply,
  ChatRequestView,
  ChatScript,
  ChatToolCallSpec,
  ChatToolResult,
} from "./ollama_emulator_chat_script.ts";

export interface EmulatedModel {
  /** e.g. "qwen3:8b", "glm-5:cloud"; a name without a tag is listed as "<name>:latest". */
  name: string;
  /** Defaults to ["completion", "tools"]. */
  capabilities?: string[];
  /** Defaults to 32768. Reported as `/api/show` model_info["<arch>.context_length"] and
   * `/api/tags` details.context_length. */
  contextLength?: number;
  /** A cloud stub (remote_host/remote_model set, tiny size, empty details). Defaults to true iff
   * the name ends in ":cloud" or "-cloud". */
  remote?: boolean;
  /** When set, inference answers HTTP 410 `{"error": retiredText}`: a retired cloud model, whose
   * upstream error is relayed verbatim rather than in the Anthropic error shape. */
  retiredText?: string;
}

export interface RecordedRequest {
  method: string;
  path: string;
  /** The query string without the leading "?" ("" when absent). */
  query: string;
  /** Header names are lower-cased. */
  headers: Record<string, string>;
  bodyText: string;
  /** The parsed body, when it is valid JSON. */
  json?: unknown;
  /** Date.now() when the request arrived. */
  at: number;
}

export type Reply =
  | { kind: "text"; text: string; delayMs?: number }
  | {
    kind: "tool_use";
    name: string;
    input: Record<string, unknown>;
    text?: string;
    delayMs?: number;
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
}

export interface EmulatorOptions {
  /** Defaults to DEFAULT_EMULATED_MODELS. */
  models?: EmulatedModel[];
  /** Reported by `/api/version`; defaults to "0.33.0". */
  version?: string;
  /** Returning undefined falls back to the prompt-directive behaviour. */
  script?: (req: MessagesRequestView) => Reply | undefined;
  /** The same, for `/v1/chat/completions`. */
  chatScript?: ChatScript;
  /** Defaults to 0 (an ephemeral port). */
  port?: number;
  /** Defaults to "127.0.0.1". */
  hostname?: string;
}

export interface OllamaEmulator {
  url: string;
  port: number;
  /** Every request received, on any route, in arrival order. */
  requests: RecordedRequest[];
  /** Only the POST /v1/messages requests (whatever their query string). */
  messageRequests(): RecordedRequest[];
  /** Only the POST /v1/chat/completions requests, valid or not. */
  chatRequests(): RecordedRequest[];
  setModels(models: EmulatedModel[]): void;
  setScript(fn?: EmulatorOptions["script"]): void;
  setChatScript(fn?: ChatScript): void;
  /** Stops the server; hanging or delayed responses are released first so nothing leaks. */
  close(): Promise<void>;
}

export const DEFAULT_EMULATED_MODELS: readonly EmulatedModel[] = [
  { name: "qwen3:8b" },
  { name: "gpt-oss:120b-cloud" },
];

const DEFAULT_VERSION = "0.33.0";
const DEFAULT_CAPABILITIES = ["completion", "tools"];
const DEFAULT_CONTEXT_LENGTH = 32768;
const CLOUD_HOST = "https://ollama.com:443";
const MAX_ECHO_CHARS = 2000;

const TEXT_TYPE = "text/plain; charset=utf-8";

// ---------------------------------------------------------------------------------------------
// Model names

interface ParsedName {
  host: string;
  namespace: string;
  model: string;
  tag: string;
}

/** Splits a reference the way Ollama does, filling in its registry/namespace/tag defaults, so
 * that "llama3", "library/llama3" and "llama3:latest" all name the same model. */
function parseName(raw: string): ParsedName {
  let rest = raw.trim();
  let tag = "latest";
  const colon = rest.lastIndexOf(":");
  if (colon > rest.lastIndexOf("/")) {
    tag = rest.slice(colon + 1) || "latest";
    rest = rest.slice(0, colon);
  }
  const parts = rest.split("/");
  const model = parts.pop() ?? "";
  const namespace = parts.pop() ?? "library";
  const host = parts.pop() ?? "registry.ollama.ai";
  return { host, namespace, model, tag };
}

function fullName(raw: string): string {
  const p = parseName(raw);
  return `${p.host}/${p.namespace}/${p.model}:${p.tag}`;
}

/** The shortest display form Ollama lists: default registry and namespace dropped, tag kept. */
function displayName(raw: string): string {
  const p = parseName(raw);
  if (p.host === "registry.ollama.ai") {
    return p.namespace === "library" ? `${p.model}:${p.tag}` : `${p.namespace}/${p.model}:${p.tag}`;
  }
  return `${p.host}/${p.namespace}/${p.model}:${p.tag}`;
}

function matchKey(raw: string): string {
  return fullName(raw).toLowerCase();
}

function isCloudName(raw: string): boolean {
  return /[:-]cloud$/i.test(raw.trim());
}

function stripCloudSuffix(raw: string): string {
  return raw.trim().replace(/[:-]cloud$/i, "");
}

interface ModelEntry {
  spec: EmulatedModel;
  display: string;
  key: string;
  remote: boolean;
  capabilities: string[];
  contextLength: number;
  arch: string;
  modifiedAt: Date;
  size: number;
  digest: string;
}

function architectureOf(raw: string): string {
  const arch = parseName(stripCloudSuffix(raw)).model.toLowerCase().replace(/[^a-z0-9]/g, "");
  return arch || "llama";
}

function parameterSizeOf(raw: string): string {
  const m = /(\d+(?:\.\d+)?)([bm])\b/i.exec(parseName(raw).tag);
  return m ? `${m[1]}${(m[2] ?? "b").toUpperCase()}` : "8.2B";
}

/** A stable fake digest, so listings do not change between calls. */
function fakeDigest(seed: string): string {
  let out = "";
  let h = 0x811c9dc5;
  for (let round = 0; out.length < 64; round++) {
    for (const ch of `${round}:${seed}`) {
      h ^= ch.codePointAt(0) ?? 0;
      h = Math.imul(h, 0x01000193) >>> 0;
    }
    out += h.toString(16).padStart(8, "0");
  }
  return out.slice(0, 64);
}

function buildEntries(models: readonly EmulatedModel[], now: number): ModelEntry[] {
  return models.map((spec, i) => {
    const remote = spec.remote ?? isCloudName(spec.name);
    return {
      spec,
      display: displayName(spec.name),
      key: matchKey(spec.name),
      remote,
      capabilities: [...(spec.capabilities ?? DEFAULT_CAPABILITIES)],
      contextLength: spec.contextLength ?? DEFAULT_CONTEXT_LENGTH,
      arch: architectureOf(spec.name),
      // Distinct times keep "newest first" orderings deterministic.
      modifiedAt: new Date(now - i * 60_000),
      size: remote ? 340 + (spec.name.length % 40) : 5_225_388_164 + i,
      digest: fakeDigest(spec.name),
    };
  });
}

function detailsOf(e: ModelEntry): Record<string, unknown> {
  if (e.remote) {
    return {
      parent_model: "",
      format: "",
      family: "",
      families: null,
      parameter_size: "",
      quantization_level: "",
      context_length: e.contextLength,
    };
  }
  return {
    parent_model: "",
    format: "gguf",
    family: e.arch,
    families: [e.arch],
    parameter_size: parameterSizeOf(e.spec.name),
    quantization_level: "Q4_K_M",
    context_length: e.contextLength,
  };
}

function remoteFields(e: ModelEntry): Record<string, unknown> {
  return e.remote ? { remote_model: stripCloudSuffix(e.display), remote_host: CLOUD_HOST } : {};
}

// ---------------------------------------------------------------------------------------------
// Small helpers

function textResponse(status: number, body: string, head = false): Response {
  return new Response(head ? null : body, { status, headers: { "content-type": TEXT_TYPE } });
}

function notFound(head = false): Response {
  // gin's default for an unrouted path or method.
  return textResponse(404, "404 page not found", head);
}

function anthropicErrorType(status: number): string {
  switch (status) {
    case 400:
      return "invalid_request_error";
    case 401:
      return "authentication_error";
    case 403:
      return "permission_error";
    case 404:
      return "not_found_error";
    case 429:
      return "rate_limit_error";
    case 503:
    case 529:
      return "overloaded_error";
    default:
      return "api_error";
  }
}

function anthropicError(status: number, message: string): Response {
  return jsonResponse(status, {
    type: "error",
    error: { type: anthropicErrorType(status), message },
    request_id: `req_${randomHex(12)}`,
  });
}

function headersOf(req: Request): Record<string, string> {
  const out: Record<string, string> = {};
  req.headers.forEach((value, name) => {
    out[name.toLowerCase()] = value;
  });
  return out;
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

function toolResultsOf(messages: unknown[]): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const m of messages) {
    if (!isRecord(m)) continue;
    for (const b of blocksOf(m.content)) {
      if (isRecord(b) && b.type === "tool_result") out.push(b);
    }
  }
  return out;
}

function systemTextOf(system: unknown): string {
  if (typeof system === "string") return system;
  if (!Array.isArray(system)) return "";
  return system
    .filter((b): b is Record<string, unknown> => isRecord(b) && b.type === "text")
    .map((b) => (typeof b.text === "string" ? b.text : ""))
    .join("\n");
}

function viewOf(
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

function defaultReply(view: MessagesRequestView): Reply {
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

// ---------------------------------------------------------------------------------------------
// Rendering a reply

type ContentBlock =
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> };

function contentOf(reply: Extract<Reply, { kind: "text" | "tool_use" }>): ContentBlock[] {
  const blocks: ContentBlock[] = [];
  const text = reply.kind === "text" ? reply.text : reply.text ?? "";
  if (text) blocks.push({ type: "text", text });
  if (reply.kind === "tool_use") {
    blocks.push({
      type: "tool_use",
      id: `call_${randomAlnum(8)}`,
      name: reply.name,
      input: reply.input,
    });
  }
  return blocks;
}

function estimateTokens(chars: number): number {
  return Math.max(1, Math.ceil(chars / 4));
}

function outputTokensOf(blocks: ContentBlock[]): number {
  let chars = 0;
  for (const b of blocks) {
    chars += b.type === "text" ? b.text.length : JSON.stringify(b.input).length;
  }
  return estimateTokens(chars);
}

function frame(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

// ---------------------------------------------------------------------------------------------
// The server

/** Starts an emulator; always `close()` it (tests fail on leaked servers otherwise). */
export function startOllamaEmulator(opts: EmulatorOptions = {}): Promise<OllamaEmulator> {
  const version = opts.version ?? DEFAULT_VERSION;
  let entries = buildEntries(opts.models ?? DEFAULT_EMULATED_MODELS, Date.now());
  let script = opts.script;
  let chatScript = opts.chatScript;
  const requests: RecordedRequest[] = [];
  // Aborted by close(): releases every delayed, hanging or streaming response.
  const closing = new AbortController();
  const encoder = new TextEncoder();

  const findModel = (name: string): ModelEntry | undefined => {
    const key = matchKey(name);
    return entries.find((e) => e.key === key);
  };

  const handleChat = createChatCompletions({
    findModel: (name) => {
      const e = findModel(name);
      return e && {
        fullName: fullName(name),
        capabilities: e.capabilities,
        retiredText: e.spec.retiredText,
      };
    },
    script: () => chatScript,
    closing: closing.signal,
  });

  const tagsEntry = (e: ModelEntry) => ({
    name: e.display,
    model: e.display,
    ...remoteFields(e),
    modified_at: e.modifiedAt.toISOString(),
    size: e.size,
    digest: e.digest,
    details: detailsOf(e),
    capabilities: e.capabilities,
  });

  const showBody = (e: ModelEntry) => {
    const modelInfo: Record<string, unknown> = {
      "general.architecture": e.arch,
      "general.basename": parseName(stripCloudSuffix(e.display)).model,
      [`${e.arch}.context_length`]: e.contextLength,
      [`${e.arch}.embedding_length`]: 4096,
    };
    if (!e.remote) {
      modelInfo["general.parameter_count"] = 8_190_735_360;
      modelInfo["general.file_type"] = 15;
    }
    return {
      license: "",
      modelfile: `# Modelfile generated by "ollama show"\nFROM ${e.display}\n`,
      parameters: e.remote ? "" : "temperature 0.6\ntop_k 20\ntop_p 0.95",
      template: e.remote ? "" : "{{ .Prompt }}",
      details: detailsOf(e),
      model_info: modelInfo,
      capabilities: e.capabilities,
      modified_at: e.modifiedAt.toISOString(),
      ...remoteFields(e),
    };
  };

  const handleShow = (rec: RecordedRequest): Response => {
    if (rec.bodyText.trim() === "") return jsonResponse(400, { error: "missing request body" });
    if (!isRecord(rec.json)) return jsonResponse(400, { error: "invalid request body" });
    const raw = typeof rec.json.model === "string" && rec.json.model
      ? rec.json.model
      : typeof rec.json.name === "string"
      ? rec.json.name
      : "";
    if (!raw) return jsonResponse(400, { error: "model is required" });
    const e = findModel(raw);
    if (!e) return jsonResponse(404, { error: `model '${raw}' not found` });
    return jsonResponse(200, showBody(e));
  };

  const handleMessages = async (req: Request, rec: RecordedRequest): Promise<Response> => {
    if (!isRecord(rec.json)) {
      return anthropicError(
        400,
        rec.bodyText.trim() ? "invalid request body" : "missing request body",
      );
    }
    const body = rec.json;
    if (typeof body.model !== "string" || body.model === "") {
      return anthropicError(400, "model is required");
    }
    if (typeof body.max_tokens !== "number" || !(body.max_tokens > 0)) {
      return anthropicError(400, "max_tokens is required and must be positive");
    }
    if (!Array.isArray(body.messages) || body.messages.length === 0) {
      return anthropicError(400, "messages is required");
    }
    const model = findModel(body.model);
    if (!model) return anthropicError(404, `model '${body.model}' not found`);
    if (model.spec.retiredText !== undefined) {
      return jsonResponse(410, { error: model.spec.retiredText });
    }
    const tools = Array.isArray(body.tools) ? body.tools : [];
    if (tools.length > 0 && !model.capabilities.includes("tools")) {
      return anthropicError(400, `${fullName(body.model)} does not support tools`);
    }

    const view = viewOf(body, rec.headers);
    let reply: Reply;
    try {
      reply = script?.(view) ?? defaultReply(view);
    } catch (err) {
      return anthropicError(500, `emulator script failed: ${String(err)}`);
    }

    if (reply.kind === "hang") {
      await wait(Infinity, [req.signal, closing.signal]);
      return anthropicError(503, "ollama emulator closed while the request was hanging");
    }
    if (reply.kind === "error") return anthropicError(reply.status, reply.message);

    const inputTokens = Math.floor(encoder.encode(rec.bodyText).length / 4);
    const blocks = contentOf(reply);
    const outputTokens = outputTokensOf(blocks);
    const stopReason = blocks.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn";
    const id = `msg_${randomHex(12)}`;
    const delayMs = reply.delayMs ?? 0;

    if (body.stream !== true) {
      if (delayMs > 0 && !(await wait(delayMs, [req.signal, closing.signal]))) {
        return anthropicError(503, "ollama emulator closed while the reply was delayed");
      }
      return jsonResponse(200, {
        id,
        type: "message",
        role: "assistant",
        model: body.model,
        content: blocks,
        stop_reason: stopReason,
        stop_sequence: null,
        usage: { input_tokens: inputTokens, output_tokens: outputTokens },
      });
    }

    const frames: string[] = [];
    blocks.forEach((b, index) => {
      if (b.type === "text") {
        frames.push(frame("content_block_start", {
          type: "content_block_start",
          index,
          content_block: { type: "text", text: "" },
        }));
        for (const piece of splitText(b.text, 3)) {
          frames.push(frame("content_block_delta", {
            type: "content_block_delta",
            index,
            delta: { type: "text_delta", text: piece },
          }));
        }
      } else {
        frames.push(frame("content_block_start", {
          type: "content_block_start",
          index,
          content_block: { type: "tool_use", id: b.id, name: b.name, input: {} },
        }));
        // Ollama sends a tool call's arguments whole, never fragmented.
        frames.push(frame("content_block_delta", {
          type: "content_block_delta",
          index,
          delta: { type: "input_json_delta", partial_json: JSON.stringify(b.input) },
        }));
      }
      frames.push(frame("content_block_stop", { type: "content_block_stop", index }));
    });
    frames.push(frame("message_delta", {
      type: "message_delta",
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { input_tokens: inputTokens, output_tokens: outputTokens },
    }));
    frames.push(frame("message_stop", { type: "message_stop" }));

    const start = frame("message_start", {
      type: "message_start",
      message: {
        id,
        type: "message",
        role: "assistant",
        model: body.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: inputTokens, output_tokens: 0 },
      },
    });
    // req.signal is not usable once the response has been returned, so a client that goes away
    // mid-stream is noticed through cancel() instead.
    const cancelled = new AbortController();
    const stream = new ReadableStream<Uint8Array>({
      start: (controller) => {
        const run = async () => {
          try {
            controller.enqueue(encoder.encode(start));
            if (await wait(delayMs, [cancelled.signal, closing.signal])) {
              for (const f of frames) {
                if (cancelled.signal.aborted) return;
                controller.enqueue(encoder.encode(f));
              }
            }
            controller.close();
          } catch {
            // The client cancelled; enqueue/close on a cancelled stream throws, which is fine.
          }
        };
        void run();
      },
      cancel: () => cancelled.abort(),
    });
    return new Response(stream, {
      status: 200,
      headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
    });
  };

  const route = async (req: Request, rec: RecordedRequest): Promise<Response> => {
    const head = req.method === "HEAD";
    const getOrHead = req.method === "GET" || head;
    switch (rec.path) {
      case "/":
        return getOrHead ? textResponse(200, "Ollama is running", head) : notFound();
      case "/api/version":
        return getOrHead ? jsonResponse(200, { version }, head) : notFound();
      case "/api/tags":
        return getOrHead ? jsonResponse(200, { models: entries.map(tagsEntry) }, head) : notFound();
      case "/api/ps":
        return req.method === "GET" ? jsonResponse(200, { models: [] }) : notFound();
      case "/api/status":
        return req.method === "GET"
          ? jsonResponse(200, { cloud: { disabled: false, source: "none" } })
          : notFound();
      case "/api/show":
        return req.method === "POST" ? handleShow(rec) : notFound();
      case "/v1/models":
        return req.method === "GET"
          ? jsonResponse(200, {
            object: "list",
            data: entries.map((e) => ({
              id: e.display,
              object: "model",
              created: Math.floor(e.modifiedAt.getTime() / 1000),
              owned_by: parseName(e.display).namespace,
            })),
          })
          : notFound();
      case "/v1/messages":
        return req.method === "POST" ? await handleMessages(req, rec) : notFound();
      case "/v1/chat/completions":
        return req.method === "POST" ? await handleChat(req, rec) : notFound();
      default:
        return notFound(head);
    }
  };

  const handler = async (req: Request): Promise<Response> => {
    const url = new URL(req.url);
    let bodyText = "";
    try {
      bodyText = await req.text();
    } catch {
      // A client that vanished mid-upload still gets recorded.
    }
    const rec: RecordedRequest = {
      method: req.method,
      path: url.pathname,
      query: url.search.replace(/^\?/, ""),
      headers: headersOf(req),
      bodyText,
      at: Date.now(),
    };
    if (bodyText.trim() !== "") {
      try {
        rec.json = JSON.parse(bodyText);
      } catch {
        // Not JSON: left undefined, and the route reports it.
      }
    }
    requests.push(rec);
    try {
      return await route(req, rec);
    } catch (err) {
      return jsonResponse(500, { error: `ollama emulator bug: ${String(err)}` });
    }
  };

  return new Promise((resolve, reject) => {
    let server: Deno.HttpServer<Deno.NetAddr>;
    try {
      server = Deno.serve({
        hostname: opts.hostname ?? "127.0.0.1",
        port: opts.port ?? 0,
        onListen: () => {},
      }, handler);
    } catch (err) {
      reject(err);
      return;
    }
    const { hostname, port } = server.addr;
    const host = hostname.includes(":") ? `[${hostname}]` : hostname;
    let closed: Promise<void> | undefined;
    resolve({
      url: `http://${host}:${port}`,
      port,
      requests,
      messageRequests: () =>
        requests.filter((r) => r.method === "POST" && r.path === "/v1/messages"),
      chatRequests: () =>
        requests.filter((r) => r.method === "POST" && r.path === "/v1/chat/completions"),
      setModels: (models) => {
        entries = buildEntries(models, Date.now());
      },
      setScript: (fn) => {
        script = fn;
      },
      setChatScript: (fn) => {
        chatScript = fn;
      },
      close: () => {
        closed ??= (async () => {
          closing.abort();
          await server.shutdown();
        })();
        return closed;
      },
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Standalone mode (benchmarks)

function parseCli(args: string[]): EmulatorOptions {
  const opts: EmulatorOptions = {};
  for (let i = 0; i < args.length; i++) {
    const [flag, inline] = (args[i] ?? "").split(/=(.*)/s, 2);
    const value = () => inline ?? args[++i] ?? "";
    switch (flag) {
      case "--port":
        opts.port = Number(value());
        break;
      case "--hostname":
        opts.hostname = value();
        break;
      case "--version":
        opts.version = value();
        break;
      case "--models":
        opts.models = value().split(",").map((s) => s.trim()).filter(Boolean).map((name) => ({
          name,
        }));
        break;
      default:
        throw new Error(`unknown argument: ${args[i]}`);
    }
  }
  return opts;
}

async function main(): Promise<void> {
  const emu = await startOllamaEmulator(parseCli(Deno.args));
  console.log(JSON.stringify({ url: emu.url }));
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  Deno.addSignalListener("SIGTERM", onSignal);
  Deno.addSignalListener("SIGINT", onSignal);
  // The parent closing our stdin (or dying) also ends us, so a benchmark never leaves us behind.
  void (async () => {
    try {
      for await (const _ of Deno.stdin.readable) { /* drain */ }
    } catch {
      // stdin unreadable: treat as closed.
    }
    stop.abort();
  })();
  await wait(Infinity, [stop.signal]);
  await emu.close();
  Deno.exit(0);
}

if (import.meta.main) await main();
