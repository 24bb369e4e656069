/** Reading a file's lines from an offset, holding at most one line, each under a cap. */
import { createReadStream } from "node:fs";
import { ByteLines } from "./line_splitter.ts";

/** One line of a file, with where it starts and ends (after its newline) in bytes. */
export interface FileLine {
  /** The line without its newline; undefined when it was longer than `maxLine` (not read). */
  text: string | undefined;
  start: number;
  end: number;
  /** False for a last line without a newline, which a running writer may still extend. */
  terminated: boolean;
}

/**
 * Reads `path` from byte `start` line by line, holding at most one line (up to `maxLine`
 * bytes) at a time, until `onLine` returns false or the file ends. Resolves to the number of
 * bytes read from the file, so callers and tests can see how much of it a page cost.
 */
export async function readLines(
  path: string,
  start: number,
  maxLine: number,
  onLine: (line: FileLine) => boolean,
): Promise<number> {
  const decoder = new TextDecoder();
  const lines = new ByteLines(maxLine);
  let bytesRead = 0;
  let lineStart = start;
  const stream = createReadStream(path, { start, highWaterMark: 64 * 1024 });
  try {
    for await (const chunk of stream) {
      bytesRead += (chunk as Uint8Array).length;
      for (const line of lines.push(chunk as Uint8Array)) {
        const end = lineStart + line.span;
        const text = line.bytes && decoder.decode(line.bytes);
        const more = onLine({ text, start: lineStart, end, terminated: true });
        lineStart = end;
        if (!more) return bytesRead;
      }
    }
    const last = lines.end();
    if (last) {
      const text = last.bytes && decoder.decode(last.bytes);
      onLine({ text, start: lineStart, end: lineStart + last.span, terminated: false });
    }
    return bytesRead;
  } finally {
    stream.destroy();
  }
}
