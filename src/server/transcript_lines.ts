import { createReadStream } from "node:fs";
import { concatBytes } from "../platform/bytes.ts";

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
  const decode = (parts: Uint8Array[], length: number): string => {
    const whole = parts.length === 1 ? parts[0]! : concatBytes(parts, length);
    const text = decoder.decode(whole);
    return text.endsWith("\r") ? text.slice(0, -1) : text;
  };
  let bytesRead = 0;
  let lineStart = start;
  let parts: Uint8Array[] = [];
  let length = 0;
  let tooLong = false;
  const stream = createReadStream(path, { start, highWaterMark: 64 * 1024 });
  try {
    for await (const raw of stream) {
      const chunk = raw as Uint8Array;
      const chunkStart = start + bytesRead;
      bytesRead += chunk.length;
      let from = 0;
      while (from < chunk.length) {
        const nl = chunk.indexOf(10, from);
        if (nl === -1) {
          if (!tooLong) {
            parts.push(chunk.subarray(from));
            length += chunk.length - from;
            if (length > maxLine) [tooLong, parts, length] = [true, [], 0];
          }
          break;
        }
        const piece = chunk.subarray(from, nl);
        const end = chunkStart + nl + 1;
        let text: string | undefined;
        if (!tooLong && length + piece.length <= maxLine) {
          parts.push(piece);
          text = decode(parts, length + piece.length);
        }
        [tooLong, parts, length] = [false, [], 0];
        const more = onLine({ text, start: lineStart, end, terminated: true });
        lineStart = end;
        if (!more) return bytesRead;
        from = nl + 1;
      }
    }
    if (length > 0 || tooLong) {
      onLine({
        text: tooLong ? undefined : decode(parts, length),
        start: lineStart,
        end: start + bytesRead,
        terminated: false,
      });
    }
    return bytesRead;
  } finally {
    stream.destroy();
  }
}
