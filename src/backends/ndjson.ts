/**
 * Newline-delimited JSON (Ollama's native streams: one JSON value a line) read with caps: a
 * line over `maxBytes` stops the stream, and so does a line that is not JSON.
 */
import { ByteLines } from "../platform/line_splitter.ts";
import { sample } from "./bounded.ts";

export interface NdjsonOptions {
  maxBytes: number;
  /** The error for a line over maxBytes. */
  tooLong: () => Error;
  /** The error for a line that is not JSON (`what` describes it). */
  notJson: (what: string) => Error;
  /** Checked before each chunk (see SseOptions.signal for why). */
  signal?: AbortSignal;
}

/** The values of a stream, blank lines skipped. Cancelling the iteration cancels `body`. */
export async function* ndjsonValues(
  body: ReadableStream<Uint8Array>,
  options: NdjsonOptions,
): AsyncGenerator<unknown> {
  const lines = new ByteLines(options.maxBytes, options.tooLong);
  const decoder = new TextDecoder();

  const parse = (bytes: Uint8Array): { value: unknown } | undefined => {
    const line = decoder.decode(bytes);
    if (line.trim() === "") return undefined;
    try {
      return { value: JSON.parse(line) };
    } catch {
      throw options.notJson(`a line that is not JSON: ${sample(line)}`);
    }
  };

  // With tooLong given, a line over the cap throws: every line comes back with its bytes.
  for await (const chunk of body) {
    options.signal?.throwIfAborted();
    for (const line of lines.push(chunk)) {
      const parsed = parse(line.bytes!);
      if (parsed) yield parsed.value;
    }
  }
  const last = lines.end();
  const parsed = last ? parse(last.bytes!) : undefined;
  if (parsed) yield parsed.value;
}
