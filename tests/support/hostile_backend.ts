/**
 * A misbehaving OpenAI-compatible backend on loopback, for tests and benchmarks of the
 * native engine's caps: it floods, cuts, or answers with something that is not a chat
 * completion stream. Every request path gets the mode's answer (so `/api/tags` and
 * `/v1/models` flood too), except `GET /v1/models` and `GET /api/version` in the streaming
 * modes, which answer normally so that listings keep working.
 *
 * Bodies are produced on demand (a pull stream), so the backend itself holds one frame at a
 * time, and it records how many bytes each response really sent and whether the client hung
 * up: tests assert that reading stopped, not only that an error came back.
 */

import { field, type TestServer } from "./harness.ts";

export type HostileMode =
  /** Endless content deltas (`frameBytes` of text each). */
  | "content"
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
  /** One tool call whose `arguments` never end, sent in fragments like vLLM/OpenAI. */
  | "arguments"
  /** Endless distinct tool calls with small arguments. */
  | "tool-calls"
  /** HTTP 500 with an endless JSON error body. */
  | "error500"
  /** `data: {"choices"...` and then bytes without any newline. */
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
  /** Bytes after which a flood ends (cleanly); Infinity = until the client hangs up. */
  floodBytes?: number;
  /** Size of one frame of a flood. */
  frameBytes?: number;
  /**
   * The context `GET /v1/models` claims for the model (`context_length`), in every mode; by
   * default it claims none.
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
  requests: HostileRequest[];
  /** Total body bytes sent on every request so far. */
  sentBytes(): number;
  setMode(mode: HostileMode): void;
  close(): Promise<void>;
}

const encoder = new TextEncoder();

const frame = (data: unknown) => `data: ${JSON.stringify(data)}\n\n`;
const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
  id: "chatcmpl-hostile",
  object: "chat.completion.chunk",
  created: 0,
  model: "qwen3:8b",
  choices: [{ index: 0, delta, finish_reason: finish }],
});

export function startHostileBackend(options: HostileOptions): Promise<HostileBackend> {
  let mode = options.mode;
  const floodBytes = options.floodBytes ?? Infinity;
  const frameBytes = options.frameBytes ?? 16 * 1024;
  const requests: HostileRequest[] = [];
  const closing = new AbortController();

  function respond(req: Request, record: HostileRequest): Response {
    const path = record.path;
    if (req.method === "GET" && path === "/v1/models" && options.claimedContext !== undefined) {
      const model = { id: "qwen3:8b", object: "model", context_length: options.claimedContext };
      return send(record, 200, "application/json", [
        encoder.encode(JSON.stringify({ object: "list", data: [model] })),
      ]);
    }
    const streaming = mode === "content" || mode === "empty-deltas" || mode === "arguments" ||
      mode === "tool-calls" || mode === "endless-line";
    if (req.method === "GET" && (path === "/v1/models" || path === "/api/version") && streaming) {
      const body = path === "/v1/models"
        ? { object: "list", data: [{ id: "qwen3:8b", object: "model" }] }
        : { version: "0.0.0-hostile" };
      return send(record, 200, "application/json", [encoder.encode(JSON.stringify(body))]);
    }
    const filler = "x".repeat(frameBytes);
    switch (mode) {
      case "content":
        return flood(
          record,
          200,
          "text/event-stream",
          frame(chunk({ role: "assistant", content: "" })),
          frame(chunk({ content: filler })),
          frame(chunk({}, "stop")) + "data: [DONE]\n\n",
        );
      case "empty-deltas": {
        const small = frame(chunk({}));
        return flood(
          record,
          200,
          "text/event-stream",
          frame(chunk({ role: "assistant", content: "" })),
          small.repeat(Math.max(1, Math.floor(frameBytes / small.length))),
          frame(chunk({}, "stop")) + "data: [DONE]\n\n",
        );
      }
      case "turns": {
        const turn = requests.filter((r) => r.path === record.path).length;
        const text = `turn ${turn} `.padEnd(Math.min(floodBytes, 3_900_000), "y");
        return send(record, 200, "text/event-stream", [
          encoder.encode(frame(chunk({ role: "assistant", content: text }))),
          encoder.encode(
            frame(chunk({
              tool_calls: [{
                index: 0,
                id: `call_turn_${turn}`,
                type: "function",
                function: { name: "Glob", arguments: JSON.stringify({ pattern: `t${turn}*` }) },
              }],
            })) + frame(chunk({}, "tool_calls")) + "data: [DONE]\n\n",
          ),
        ]);
      }
      case "replies": {
        const turn = requests.filter((r) => r.path === record.path).length;
        const text = `reply ${turn} `.padEnd(Math.min(floodBytes, 3_990_000), "z");
        return send(record, 200, "text/event-stream", [
          encoder.encode(frame(chunk({ role: "assistant", content: text }))),
          encoder.encode(frame(chunk({}, "stop")) + "data: [DONE]\n\n"),
        ]);
      }
      case "arguments":
        return flood(
          record,
          200,
          "text/event-stream",
          frame(chunk({
            tool_calls: [{
              index: 0,
              id: "call_hostile",
              type: "function",
              function: { name: "Write", arguments: '{"file_path":"x","content":"' },
            }],
          })),
          frame(chunk({ tool_calls: [{ index: 0, function: { arguments: filler } }] })),
          frame(chunk({ tool_calls: [{ index: 0, function: { arguments: '"}' } }] })) +
            frame(chunk({}, "tool_calls")) + "data: [DONE]\n\n",
        );
      case "tool-calls": {
        let index = 0;
        return flood(
          record,
          200,
          "text/event-stream",
          "",
          () =>
            frame(chunk({
              tool_calls: [{
                index: index++,
                id: `call_${index}`,
                type: "function",
                function: { name: "Read", arguments: '{"file_path":"a"}' },
              }],
            })),
          frame(chunk({}, "tool_calls")) + "data: [DONE]\n\n",
        );
      }
      case "error500":
        return flood(
          record,
          500,
          "application/json",
          '{"error":{"message":"',
          filler,
          '"}}',
        );
      case "endless-line":
        return flood(
          record,
          200,
          "text/event-stream",
          'data: {"choices":[{"index":0,"delta":{"content":"',
          filler,
          '"}}]}\n\n',
        );
      case "garbage": {
        let seed = 12345;
        const bytes = new Uint8Array(frameBytes);
        return flood(record, 200, "text/event-stream", "", () => {
          for (let i = 0; i < bytes.length; i++) {
            seed = (seed * 1103515245 + 12345) >>> 0;
            bytes[i] = seed >>> 24;
          }
          return bytes.slice();
        }, "");
      }
      case "cut":
      case "truncated": {
        const parts = [
          encoder.encode(frame(chunk({ role: "assistant", content: "" }))),
          encoder.encode(frame(chunk({ content: "half a rep" }))),
        ];
        return send(record, 200, "text/event-stream", parts, mode === "cut");
      }
      case "html":
        return send(record, 200, "text/html", [
          encoder.encode(
            "<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head>\n" +
              "<body><h1>502 Bad Gateway</h1></body></html>\n",
          ),
        ]);
      case "json":
        return send(record, 200, "application/json", [
          encoder.encode(JSON.stringify({ error: "model is still loading" })),
        ]);
      case "ok":
        return send(record, 200, "text/event-stream", [
          encoder.encode(
            frame(chunk({ role: "assistant", content: "ok" })) + frame(chunk({}, "stop")) +
              "data: [DONE]\n\n",
          ),
        ]);
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
      if (record.path === "/v1/chat/completions") record.messages = summary(body);
      return respond(req, record);
    },
  );
  // Deno.serve reports a broken response body as an error of its own; that is the point.
  server.finished.catch(() => {});
  const port = server.addr.port;
  return Promise.resolve({
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
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
