/**
 * A misbehaving chat backend on loopback, for tests and benchmarks of the native engine's
 * caps: it floods, cuts, or answers with something that is not a chat stream. It speaks
 * OpenAI-compatible chat completions (server-sent events) or, with `protocol: "ollama"`,
 * Ollama's /api/chat (NDJSON); tests/support/hostile_dialects.ts holds the frames of each.
 * Every request path gets the mode's answer (so listings flood too), except the protocol's
 * listings (`GET /v1/models`, `/api/tags`, `/api/version`) in the streaming modes, which answer
 * normally so that listings keep working.
 *
 * Bodies are produced on demand (a pull stream), so the backend itself holds one frame at a
 * time, and it records how many bytes each response really sent and whether the client hung
 * up: tests assert that reading stopped, not only that an error came back.
 */

import { field, type TestServer } from "./harness.ts";
import { DIALECTS, type Protocol } from "./hostile_dialects.ts";

export type { Protocol };

export type HostileMode =
  /** Endless content deltas (`frameBytes` of text each). */
  | "content"
  /** Endless thinking (`frameBytes` each): Ollama's `thinking`, an OpenAI-compatible `reasoning`. */
  | "thinking"
  /** Endless small chunks with empty deltas: nothing to keep, but the parser stays busy. */
  | "empty-deltas"
  /**
   * Every reply is `floodBytes` of text (keep it under the text cap) and one new tool call,
   * so the agent loop goes on for max_turns requests, resending all of it each time.
   */
  | "turns"
  /**
   * Every reply is `floodBytes` of text (keep it under the turn cap) and no tool call: a turn
   * ends at once, and each follow-up adds one more such reply to the conversation.
   */
  | "replies"
  /**
   * Tool-call arguments without end: one call sent in fragments (OpenAI, vLLM), or call after
   * call of a MiB each (Ollama sends each call whole).
   */
  | "arguments"
  /** Endless distinct tool calls with small arguments. */
  | "tool-calls"
  /** HTTP 500 with an endless JSON error body. */
  | "error500"
  /** The start of a reply and then bytes without any newline. */
  | "endless-line"
  /** Random bytes, newlines included. */
  | "garbage"
  /** Two content deltas, then the connection breaks in the middle of the body. */
  | "cut"
  /** Two content deltas, then the body ends cleanly without a finish or `[DONE]`. */
  | "truncated"
  /** HTTP 200 with an HTML page (a proxy's error page). */
  | "html"
  /** HTTP 200 with a JSON object instead of an event stream. */
  | "json"
  /** A proper short reply ("ok"), for a baseline. */
  | "ok";

export const HOSTILE_MODES: readonly HostileMode[] = [
  "content",
  "thinking",
  "empty-deltas",
  "turns",
  "replies",
  "arguments",
  "tool-calls",
  "error500",
  "endless-line",
  "garbage",
  "cut",
  "truncated",
  "html",
  "json",
  "ok",
];

export interface HostileOptions {
  mode: HostileMode;
  /** The chat protocol it speaks (default: OpenAI-compatible chat completions). */
  protocol?: Protocol;
  /** Bytes after which a flood ends (cleanly); Infinity = until the client hangs up. */
  floodBytes?: number;
  /** Size of one frame of a flood. */
  frameBytes?: number;
  /**
   * The context the model listing claims for the model (`context_length` of `GET /v1/models`,
   * `/api/show` for Ollama), in every mode; by default it claims none.
   */
  claimedContext?: number;
}

export interface HostileRequest {
  method: string;
  path: string;
  /** Body bytes this response handed to the connection. */
  sentBytes: number;
  /** Bytes of the request's body. */
  receivedBytes: number;
  /** A chat request's messages, each as its role and the start of its content. */
  messages?: string[];
  /** True once the client cancelled the body (hung up) before its end. */
  cancelled: boolean;
  /** True once the body ended on its own. */
  ended: boolean;
}

export interface HostileBackend {
  url: string;
  port: number;
  /** The path of its chat requests (`/v1/chat/completions` or `/api/chat`). */
  chatPath: string;
  requests: HostileRequest[];
  /** The chat requests so far. */
  chats(): HostileRequest[];
  /** Total body bytes sent on every request so far. */
  sentBytes(): number;
  setMode(mode: HostileMode): void;
  close(): Promise<void>;
}

const encoder = new TextEncoder();
const bytes = (text: string) => encoder.encode(text);

/** Modes that flood a chat request; listings still answer normally during them. */
const STREAMING: ReadonlySet<HostileMode> = new Set([
  "content",
  "thinking",
  "empty-deltas",
  "arguments",
  "tool-calls",
  "endless-line",
]);

export function startHostileBackend(options: HostileOptions): Promise<HostileBackend> {
  let mode = options.mode;
  const d = DIALECTS[options.protocol ?? "openai"];
  const floodBytes = options.floodBytes ?? Infinity;
  const frameBytes = options.frameBytes ?? 16 * 1024;
  const requests: HostileRequest[] = [];
  const closing = new AbortController();
  const json = (record: HostileRequest, body: unknown) =>
    send(record, 200, "application/json", [bytes(JSON.stringify(body))]);

  function respond(req: Request, record: HostileRequest): Response {
    const path = record.path;
    const listings = d.listings(options.claimedContext);
    if (
      req.method === "GET" && path in listings &&
      (STREAMING.has(mode) || (options.claimedContext !== undefined && path !== "/api/version"))
    ) {
      return json(record, listings[path]);
    }
    const filler = "x".repeat(frameBytes);
    const { stream } = d;
    switch (mode) {
      case "content":
        return flood(record, 200, stream, d.open, d.content(filler), d.end("stop"));
      case "thinking": {
        const thinking = d.thinking ?? d.empty;
        return flood(record, 200, stream, d.open, thinking(filler), d.end("stop"));
      }
      case "empty-deltas": {
        const small = d.empty();
        const body = small.repeat(Math.max(1, Math.floor(frameBytes / small.length)));
        return flood(record, 200, stream, d.open, body, d.end("stop"));
      }
      case "turns": {
        const turn = requests.filter((r) => r.path === record.path).length;
        const text = `turn ${turn} `.padEnd(Math.min(floodBytes, 3_900_000), "y");
        const call = { id: `call_turn_${turn}`, name: "Glob", args: { pattern: `t${turn}*` } };
        return send(record, 200, stream, [
          bytes(d.open + d.content(text)),
          bytes(d.toolCall(0, call) + d.end("tool_calls")),
        ]);
      }
      case "replies": {
        const turn = requests.filter((r) => r.path === record.path).length;
        const text = `reply ${turn} `.padEnd(Math.min(floodBytes, 3_990_000), "z");
        return send(record, 200, stream, [bytes(d.open + d.content(text)), bytes(d.end("stop"))]);
      }
      case "arguments": {
        const { head, body, tail } = d.endlessArguments(filler);
        return flood(record, 200, stream, head, body, tail);
      }
      case "tool-calls": {
        let index = 0;
        const next = () => {
          index++;
          return d.toolCall(index - 1, {
            id: `call_${index}`,
            name: "Read",
            args: { file_path: "a" },
          });
        };
        return flood(record, 200, stream, "", next, d.end("tool_calls"));
      }
      case "error500":
        return flood(record, 500, "application/json", d.errorBody.head, filler, d.errorBody.tail);
      case "endless-line":
        return flood(record, 200, stream, d.endlessLine.head, filler, d.endlessLine.tail);
      case "garbage": {
        let seed = 12345;
        const noise = new Uint8Array(frameBytes);
        return flood(record, 200, stream, "", () => {
          for (let i = 0; i < noise.length; i++) {
            seed = (seed * 1103515245 + 12345) >>> 0;
            noise[i] = seed >>> 24;
          }
          return noise.slice();
        }, "");
      }
      case "cut":
      case "truncated":
        return send(record, 200, stream, [
          bytes(d.open),
          bytes(d.content("half ") + d.content("a rep")),
        ], mode === "cut");
      case "html":
        return send(record, 200, "text/html", [
          bytes(
            "<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head>\n" +
              "<body><h1>502 Bad Gateway</h1></body></html>\n",
          ),
        ]);
      case "json":
        return json(record, { error: "model is still loading" });
      case "ok":
        return send(record, 200, stream, [bytes(d.open + d.content("ok") + d.end("stop"))]);
    }
  }

  /** A body of head, then `body` frames until floodBytes or a hang-up, then tail. */
  function flood(
    record: HostileRequest,
    status: number,
    type: string,
    head: string,
    body: string | (() => string | Uint8Array),
    tail: string,
  ): Response {
    const fixed = typeof body === "string" ? encoder.encode(body) : undefined;
    // An empty head is no frame of its own.
    let started = head === "";
    let flooded = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (closing.signal.aborted) {
          controller.close();
          return;
        }
        let out: Uint8Array;
        if (!started) {
          started = true;
          out = encoder.encode(head);
        } else if (flooded < floodBytes) {
          const next = fixed ?? (body as () => string | Uint8Array)();
          out = typeof next === "string" ? encoder.encode(next) : next;
          // A fresh copy: the stream may hold on to what it was given.
          if (out === fixed) out = fixed.slice();
          flooded += out.length;
        } else {
          out = encoder.encode(tail);
          record.ended = true;
          controller.enqueue(out);
          record.sentBytes += out.length;
          controller.close();
          return;
        }
        record.sentBytes += out.length;
        controller.enqueue(out);
      },
      cancel() {
        if (!record.ended) record.cancelled = true;
      },
    }, { highWaterMark: 0 });
    return new Response(stream, { status, headers: { "content-type": type } });
  }

  /** A fixed body; `cut` breaks the connection after it instead of ending it. */
  function send(
    record: HostileRequest,
    status: number,
    type: string,
    parts: Uint8Array[],
    cut = false,
  ): Response {
    let i = 0;
    parts = parts.filter((p) => p.length > 0);
    const stream = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const part = parts[i++];
        if (part !== undefined) {
          record.sentBytes += part.length;
          controller.enqueue(part);
          return;
        }
        if (cut) {
          // Let the frames reach the client first, so that it sees a reply broken midway.
          await new Promise((r) => setTimeout(r, 50));
          controller.error(new Error("hostile backend: connection cut on purpose"));
          return;
        }
        record.ended = true;
        controller.close();
      },
      cancel() {
        if (!record.ended) record.cancelled = true;
      },
    }, { highWaterMark: 0 });
    return new Response(stream, { status, headers: { "content-type": type } });
  }

  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {}, signal: closing.signal },
    async (req) => {
      const record: HostileRequest = {
        method: req.method,
        path: new URL(req.url).pathname,
        sentBytes: 0,
        receivedBytes: 0,
        cancelled: false,
        ended: false,
      };
      requests.push(record);
      const body = await req.arrayBuffer().catch(() => new ArrayBuffer(0));
      record.receivedBytes = body.byteLength;
      if (record.path === d.chat) record.messages = summary(body);
      return respond(req, record);
    },
  );
  // Deno.serve reports a broken response body as an error of its own; that is the point.
  server.finished.catch(() => {});
  const port = server.addr.port;
  return Promise.resolve({
    url: `http://127.0.0.1:${port}`,
    port,
    chatPath: d.chat,
    requests,
    chats: () => requests.filter((r) => r.path === d.chat),
    sentBytes: () => requests.reduce((sum, r) => sum + r.sentBytes, 0),
    setMode(next) {
      mode = next;
    },
    async close() {
      closing.abort();
      await server.finished.catch(() => {});
    },
  });
}

/** "role: start of the content" for each message of a chat request's body. */
function summary(body: ArrayBuffer): string[] | undefined {
  try {
    const { messages } = JSON.parse(new TextDecoder().decode(body)) as {
      messages: Array<{ role: string; content: unknown }>;
    };
    return messages.map((m) => `${m.role}: ${String(m.content ?? "").slice(0, 200)}`);
  } catch {
    return undefined;
  }
}

/** What a job did while a hostile backend flooded it, seen from an MCP client. */
export interface JobWatch {
  /** The job's last state, or what went wrong asking for it. */
  state: string;
  error: string;
  /** Round-trip time of each delegate_status call made while the job ran, in ms. */
  statusMs: number[];
  /** The server's peak resident memory (VmHWM), last seen while it lived, in MiB. */
  peakMiB: number;
}

/** A process's peak resident memory so far (Linux VmHWM), in MiB; 0 once it is gone. */
export function peakMiB(pid: number): number {
  try {
    const status = Deno.readTextFileSync(`/proc/${pid}/status`);
    return Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

/**
 * Polls delegate_status every `intervalMs` until the job leaves "running"/"queued", a call
 * fails (a crashed or stuck server), or `timeoutMs` passes, timing each call.
 */
export async function watchJob(
  server: Pick<TestServer, "call" | "pid">,
  jobId: string,
  timeoutMs: number,
  intervalMs = 200,
): Promise<JobWatch> {
  const watch: JobWatch = { state: "", error: "", statusMs: [], peakMiB: 0 };
  // Sampled apart from the calls, so that a server stuck in a call or dying is measured too.
  const sample = () => watch.peakMiB = Math.max(watch.peakMiB, peakMiB(server.pid));
  const sampler = setInterval(sample, 100);
  try {
    return await poll(server, jobId, timeoutMs, intervalMs, watch);
  } finally {
    clearInterval(sampler);
    sample();
  }
}

async function poll(
  server: Pick<TestServer, "call" | "pid">,
  jobId: string,
  timeoutMs: number,
  intervalMs: number,
  watch: JobWatch,
): Promise<JobWatch> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const t0 = performance.now();
    let text: string;
    try {
      text = (await server.call("delegate_status", { job_id: jobId }, { timeoutMs: 60_000 })).text;
    } catch (e) {
      watch.statusMs.push(performance.now() - t0);
      watch.state = `delegate_status failed: ${(e as Error).message}`;
      return watch;
    }
    watch.state = field(text, "state") ?? "";
    watch.error = field(text, "error") ?? "";
    if (!/^(running|queued)/.test(watch.state)) return watch;
    watch.statusMs.push(performance.now() - t0);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  watch.state = `still running after ${timeoutMs} ms`;
  return watch;
}
