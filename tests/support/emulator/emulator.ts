/**
 * A loopback stand-in for an Ollama server, for tests and benchmarks.
 *
 * It speaks enough of Ollama's documented HTTP API (the native `/api/*` endpoints, the
 * Anthropic-compatible `/v1/messages` and the OpenAI-compatible `/v1/chat/completions`) that our
 * own clients and the real Claude Code CLI (via `ANTHROPIC_BASE_URL`) can run against it without
 * a GPU or a model. Status codes, body shapes and stream framing follow Ollama's behaviour,
 * because tests that pass against a friendlier fake would hide bugs that only show up against
 * the real server.
 *
 * Routes and where they live:
 *   GET  /, /api/version, /api/tags, /api/status, /v1/models     this file
 *   POST /api/show                                               this file (models module)
 *   POST /v1/messages        Anthropic, for `claude -p`          messages.ts
 *   POST /v1/chat/completions  OpenAI, for the native engine     openai.ts
 *   POST /api/chat, /api/generate  native NDJSON chat            native_chat.ts
 *   GET  /api/ps             loaded models, `context_length`     loader.ts
 *   POST /api/create         derive a model (`num_ctx`...)       create.ts
 *
 * Scripting. `/v1/messages` is scripted by a `script` callback or, when none answers, by
 * directives in the first user message (`@bash`, `@delay`, `@hang`, `@reply`), so that a test can
 * drive a delegated `claude -p` purely through the prompt it sends. `/v1/chat/completions` and
 * `/api/chat` share the `chatScript` hook and a larger directive set (`@tool`, `@fail`...; see
 * chat_script.ts). A scripted reply's `usage` is reported instead of the
 * emulator's own counts, as a misbehaving backend would: negative, fractional or absurd.
 *
 * Behaving like a real local setup (all per emulator, and per model where it says so):
 *   contextMode            "ideal" (default): prompts are never cut. "real": a prompt larger than
 *                          the loaded context is cut silently from the front, the script sees
 *                          what is left and usage reports only that (context.ts)
 *   defaultContextLength   the server's default context (default 4096 in "real" mode, the
 *                          model's maximum in "ideal" mode)
 *   serverContextLength    the server's OLLAMA_CONTEXT_LENGTH (default unset)
 *   keepAlive              the server's OLLAMA_KEEP_ALIVE (default "5m")
 *   models[].contextLength the model's maximum; models[].numCtx its Modelfile `num_ctx`
 *   models[].toolCallStyle "structured" (default), or a format in which the model writes tool
 *                          calls as text: hermes, qwen3-coder, qwen3-coder-bare, llama-json,
 *                          python-tag, mistral, fenced-json (text_calls.ts)
 *   version                from 0.12.10 on, native tool calls carry ids, as in Ollama
 * Every inference request leaves a `contextRecords` entry (estimated size, context used, whether
 * it was cut, whether the model had to be reloaded); `loadCount`/`reloadCount` count loads.
 *
 * Standalone: `deno run -A tests/support/emulator/emulator.ts --port 0 [--models a,b:cloud]
 * [--context-mode real] [--default-context-length N] [--server-context-length N]` prints
 * `{"url":"http://127.0.0.1:PORT"}` and serves until SIGTERM, SIGINT or stdin EOF.
 */

import { type ChatScript } from "./chat_script.ts";
import { ContextKeeper, type ContextOptions, type ContextRecord } from "./context.ts";
import { keepAliveMs } from "./loader.ts";
import { createdEntry, handleCreate } from "./create.ts";
import { createMessages } from "./messages.ts";
import { type MessagesRequestView, type Reply } from "./messages_script.ts";
import {
  buildEntries,
  type EmulatedModel,
  fullName,
  matchKey,
  type ModelEntry,
  parseName,
  showBody,
  tagsEntry,
} from "./models.ts";
import { createNativeChat, type NativeModelInfo } from "./native_chat.ts";
import { createChatCompletions } from "./openai.ts";
import { isRecord, jsonResponse, wait } from "./util.ts";
import {
  type FlavourContext,
  flavourRoute,
  type QueueGauges,
  type ServerFlavour,
} from "../serving_flavours.ts";

export type {
  ChatReply,
  ChatRequestView,
  ChatScript,
  ChatToolCallSpec,
  ChatToolResult,
} from "./chat_script.ts";
export type { ContextMode, ContextRecord } from "./context.ts";
export type { MessagesRequestView, Reply, ScriptedCall } from "./messages_script.ts";
export { callsInOrder } from "./messages_script.ts";
export type { EmulatedModel } from "./models.ts";
export type { TextCallStyle } from "./text_calls.ts";
export type { QueueGauges, ServerFlavour } from "../serving_flavours.ts";

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

export interface EmulatorOptions extends ContextOptions {
  /** Defaults to DEFAULT_EMULATED_MODELS. */
  models?: EmulatedModel[];
  /** Reported by `/api/version`; defaults to "0.33.0". */
  version?: string;
  /** Returning undefined falls back to the prompt-directive behaviour. */
  script?: (req: MessagesRequestView) => Reply | undefined;
  /** The same, for `/v1/chat/completions` and `/api/chat`. */
  chatScript?: ChatScript;
  /** Defaults to 0 (an ephemeral port). */
  port?: number;
  /** Defaults to "127.0.0.1". */
  hostname?: string;
  /**
   * Which server it answers as (serving_flavours.ts): Ollama (the default), vLLM, llama.cpp's
   * llama-server or a LiteLLM proxy, each with its own listing, context, errors and metrics.
   */
  flavour?: ServerFlavour;
  /** The key a vLLM, llama-server or LiteLLM flavour requires (their `--api-key`). */
  apiKey?: string;
  /** A vLLM flavour served without `--enable-auto-tool-choice`: requests with tools fail. */
  noToolChoice?: boolean;
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
  /** Only the POST /api/chat requests, valid or not. */
  nativeChatRequests(): RecordedRequest[];
  /** One record per inference request that reached a model, in arrival order. */
  contextRecords: ContextRecord[];
  /** What `GET /api/ps` answers now. */
  loadedModels(): { models: Record<string, unknown>[] };
  /** How often the model was loaded (first loads and reloads). */
  loadCount(name: string): number;
  /** How often the model was reloaded because a request needed another context. */
  reloadCount(name: string): number;
  setModels(models: EmulatedModel[]): void;
  setScript(fn?: EmulatorOptions["script"]): void;
  setChatScript(fn?: ChatScript): void;
  /** What a vLLM or llama-server flavour reports in `/metrics` from now on. */
  setQueue(queue: Partial<QueueGauges>): void;
  /** Stops the server; hanging or delayed responses are released first so nothing leaks. */
  close(): Promise<void>;
}

export const DEFAULT_EMULATED_MODELS: readonly EmulatedModel[] = [
  { name: "qwen3:8b" },
  { name: "gpt-oss:120b-cloud" },
];

const DEFAULT_VERSION = "0.33.0";
const TEXT_TYPE = "text/plain; charset=utf-8";

function textResponse(status: number, body: string, head = false): Response {
  return new Response(head ? null : body, { status, headers: { "content-type": TEXT_TYPE } });
}

function notFound(head = false): Response {
  // gin's default for an unrouted path or method.
  return textResponse(404, "404 page not found", head);
}

function headersOf(req: Request): Record<string, string> {
  const out: Record<string, string> = {};
  req.headers.forEach((value, name) => {
    out[name.toLowerCase()] = value;
  });
  return out;
}

/** Starts an emulator; always `close()` it (tests fail on leaked servers otherwise). */
export function startOllamaEmulator(opts: EmulatorOptions = {}): Promise<OllamaEmulator> {
  const version = opts.version ?? DEFAULT_VERSION;
  let entries = buildEntries(opts.models ?? DEFAULT_EMULATED_MODELS, Date.now());
  let script = opts.script;
  let chatScript = opts.chatScript;
  const requests: RecordedRequest[] = [];
  const keeper = new ContextKeeper(opts);
  // Aborted by close(): releases every delayed, hanging or streaming response.
  const closing = new AbortController();

  const findModel = (name: string): ModelEntry | undefined => {
    const key = matchKey(name);
    return entries.find((e) => e.key === key);
  };

  const keepAlive = (value: unknown) => {
    try {
      return keepAliveMs(value, keeper.loader.defaultKeepAliveMs);
    } catch {
      return keeper.loader.defaultKeepAliveMs;
    }
  };

  /** What the inference routes need to know about, and do with, one model. */
  const modelInfo = (name: string): NativeModelInfo | undefined => {
    const e = findModel(name);
    return e && {
      fullName: fullName(name),
      capabilities: e.capabilities,
      retiredText: e.spec.retiredText,
      toolCallStyle: e.spec.toolCallStyle,
      admit: (path, parts, numCtx, alive) => ({
        ...keeper.admit({ path, entry: e, parts, numCtx, keepAlive: keepAlive(alive) }),
        real: keeper.mode === "real",
      }),
      release: (alive) => keeper.loader.release(e, keepAlive(alive)),
      load: (numCtx, alive) => {
        const { contextLength } = keeper.resolve(e, numCtx);
        return keeper.loader.use(e, contextLength, keepAlive(alive)).reload;
      },
      unload: () => keeper.loader.unload(e),
    };
  };

  const handleChat = createChatCompletions({
    findModel: modelInfo,
    script: () => chatScript,
    closing: closing.signal,
  });
  const handleMessages = createMessages({
    findModel: modelInfo,
    script: () => script,
    closing: closing.signal,
  });
  const handleNative = createNativeChat({
    findModel: modelInfo,
    script: () => chatScript,
    version: () => version,
    closing: closing.signal,
  });

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

  const addModel = (spec: EmulatedModel): ModelEntry => {
    const entry = createdEntry(spec);
    // A new model of the same name replaces the old one, which leaves memory with it.
    keeper.loader.retain(new Set(entries.filter((e) => e.key !== entry.key).map((e) => e.key)));
    entries = [...entries.filter((e) => e.key !== entry.key), entry];
    return entry;
  };

  const flavour: FlavourContext = {
    flavour: opts.flavour ?? "ollama",
    ...(opts.apiKey ? { apiKey: opts.apiKey } : {}),
    ...(opts.noToolChoice ? { noToolChoice: true } : {}),
    models: () =>
      entries.map((e) => ({
        id: e.spec.name,
        contextLength: e.spec.numCtx ?? e.contextLength,
        created: Math.floor(e.modifiedAt.getTime() / 1000),
      })),
    queue: { waiting: 0, running: 0, kvUsage: 0 },
  };

  const route = async (req: Request, rec: RecordedRequest): Promise<Response> => {
    const head = req.method === "HEAD";
    const getOrHead = req.method === "GET" || head;
    const post = req.method === "POST";
    switch (rec.path) {
      case "/":
        return getOrHead ? textResponse(200, "Ollama is running", head) : notFound();
      case "/api/version":
        return getOrHead ? jsonResponse(200, { version }, head) : notFound();
      case "/api/tags":
        return getOrHead ? jsonResponse(200, { models: entries.map(tagsEntry) }, head) : notFound();
      case "/api/ps":
        return req.method === "GET" ? jsonResponse(200, keeper.loader.psBody()) : notFound();
      case "/api/status":
        return req.method === "GET"
          ? jsonResponse(200, { cloud: { disabled: false, source: "none" } })
          : notFound();
      case "/api/show":
        return post ? handleShow(rec) : notFound();
      case "/api/create":
        return post ? handleCreate({ findModel, addModel }, rec) : notFound();
      case "/api/chat":
      case "/api/generate":
        return post ? await handleNative(req, rec) : notFound();
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
        return post ? await handleMessages(req, rec) : notFound();
      case "/v1/chat/completions":
        return post ? await handleChat(req, rec) : notFound();
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
      const own = flavourRoute(flavour, rec);
      if (own) return own;
      if (flavour.flavour === "llamacpp" && isRecord(rec.json)) {
        // It named its one model in the request: the routes read the body again.
        rec.bodyText = JSON.stringify(rec.json);
      }
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
      nativeChatRequests: () =>
        requests.filter((r) => r.method === "POST" && r.path === "/api/chat"),
      contextRecords: keeper.records,
      loadedModels: () => keeper.loader.psBody(),
      loadCount: (name) => {
        const e = findModel(name);
        return e ? keeper.loader.loads(e) : 0;
      },
      reloadCount: (name) => {
        const e = findModel(name);
        return e ? keeper.loader.reloads(e) : 0;
      },
      setModels: (models) => {
        entries = buildEntries(models, Date.now());
        keeper.loader.retain(new Set(entries.map((e) => e.key)));
      },
      setScript: (fn) => {
        script = fn;
      },
      setChatScript: (fn) => {
        chatScript = fn;
      },
      setQueue: (queue) => {
        Object.assign(flavour.queue, queue);
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
      case "--context-mode": {
        const mode = value();
        if (mode !== "ideal" && mode !== "real") throw new Error(`unknown context mode: ${mode}`);
        opts.contextMode = mode;
        break;
      }
      case "--default-context-length":
        opts.defaultContextLength = Number(value());
        break;
      case "--server-context-length":
        opts.serverContextLength = Number(value());
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

/** Runs `fn` with an emulator started from `opts`, and closes it however `fn` ends. */
export async function withEmulator(
  opts: EmulatorOptions,
  fn: (emu: OllamaEmulator) => Promise<void>,
): Promise<void> {
  const emu = await startOllamaEmulator(opts);
  try {
    await fn(emu);
  } finally {
    await emu.close();
  }
}
