/**
 * Server-sent events (WHATWG HTML, "Server-sent events", 9.2.6 interpreting an event
 * stream) read with caps: a line or an event's data over `maxBytes` stops the stream.
 */
import { ByteLines } from "../platform/line_splitter.ts";
import { sample } from "./bounded.ts";

export interface SseEvent {
  /** The `event:` field, "message" when absent; "error" for llama.cpp's `error:` lines. */
  event: string;
  data: string;
}

export interface SseOptions {
  maxBytes: number;
  /** The error for a line or an event over maxBytes. */
  tooLong: () => Error;
  /** The error for a line that is no field of an event stream (`what` describes it). */
  notSse: (what: string) => Error;
  /**
   * Checked before each chunk. Aborting a fetch does not always stop its body: with Deno 2.9
   * a body read by a generator that yields many events per chunk went on delivering an
   * endless stream after the abort, so a cancelled job kept reading a flood.
   */
  signal?: AbortSignal;
}

/**
 * The events of a stream. Unlike a browser, which ignores unknown fields, any line that
 * is not a known field, a comment or blank ends the stream with notSse(): chat servers
 * only send `data:`, and garbage or an HTML page should be reported as such, not read to
 * the end. llama.cpp sends errors as `error: {...}` lines, so those are events too.
 * Cancelling the iteration (or an error) cancels `body`.
 */
export async function* sseEvents(
  body: ReadableStream<Uint8Array>,
  options: SseOptions,
): AsyncGenerator<SseEvent> {
  const lines = new ByteLines(options.maxBytes, options.tooLong);
  const decoder = new TextDecoder();
  let data: string[] = [];
  let dataBytes = 0;
  let event = "message";
  let first = true;

  function* take(bytes: Uint8Array): Generator<SseEvent> {
    let line = decoder.decode(bytes);
    if (first) {
      first = false;
      if (line.startsWith("\uFEFF")) line = line.slice(1);
    }
    if (line === "") {
      if (data.length > 0) yield { event, data: data.join("\n") };
      data = [];
      dataBytes = 0;
      event = "message";
      return;
    }
    if (line.startsWith(":")) return;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    switch (field) {
      case "data":
        dataBytes += bytes.length;
        if (dataBytes > options.maxBytes) throw options.tooLong();
        data.push(value);
        return;
      case "event":
        event = value;
        return;
      case "error":
        yield { event: "error", data: value };
        return;
      case "id":
      case "retry":
        return;
      default:
        throw options.notSse(`a line that is not server-sent events: ${sample(line)}`);
    }
  }

  // With tooLong given, a line over the cap throws: every line comes back with its bytes.
  for await (const chunk of body) {
    options.signal?.throwIfAborted();
    for (const line of lines.push(chunk)) yield* take(line.bytes!);
  }
  const last = lines.end();
  if (last) yield* take(last.bytes!);
  yield* take(new Uint8Array(0));
}
