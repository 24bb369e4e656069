/**
 * Scanning a JSON-lines file from an open handle without holding its lines: a conversation
 * saved over many follow-ups can be far larger than what a turn may keep in memory. Each line
 * comes back as where it is, its first bytes, and whether it is one whole JSON object (its
 * strings, arrays and objects all close, as in a line JSON.stringify wrote and unlike one an
 * interrupted append cut); its bytes are read again, by position, only when they are wanted.
 */
import type { FileHandle } from "node:fs/promises";

/** How much is read from the file at a time. */
export const CHUNK_BYTES = 1024 * 1024;
/** What is kept of the start of each line. */
export const HEAD_BYTES = 64;

export interface LineInfo {
  /** Byte offset of the line, and its length without the newline. */
  start: number;
  length: number;
  /** False for a last line the file ends in without a newline. */
  terminated: boolean;
  /** The line's first HEAD_BYTES bytes. */
  head: Uint8Array;
  /** Only whitespace. */
  blank: boolean;
  /** One JSON object whose brackets and strings all close, and nothing after it. */
  closed: boolean;
}

const QUOTE = 0x22, BACKSLASH = 0x5c, NEWLINE = 0x0a;
const OPEN_BRACE = 0x7b, OPEN_BRACKET = 0x5b, CLOSE_BRACE = 0x7d, CLOSE_BRACKET = 0x5d;
const isSpace = (b: number) => b === 0x20 || b === 0x09 || b === 0x0d;

/** The shape of one line, followed byte by byte across reads. */
class LineShape {
  length = 0;
  head: number[] = [];
  #started = false;
  #depth = 0;
  #inString = false;
  #escape = false;
  #ended = false;
  #bad = false;

  feed(bytes: Uint8Array, from: number, to: number): void {
    for (let i = from; i < to && this.head.length < HEAD_BYTES; i++) this.head.push(bytes[i]!);
    this.length += to - from;
    if (this.#bad) return;
    for (let i = from; i < to; i++) {
      const b = bytes[i]!;
      if (this.#inString) {
        if (this.#escape) this.#escape = false;
        else if (b === BACKSLASH) this.#escape = true;
        else if (b === QUOTE) this.#inString = false;
        continue;
      }
      if (isSpace(b)) continue;
      // Something after the object, or a line that is not one.
      if (this.#ended || (!this.#started && b !== OPEN_BRACE)) {
        this.#bad = true;
        return;
      }
      this.#started = true;
      if (b === QUOTE) this.#inString = true;
      else if (b === OPEN_BRACE || b === OPEN_BRACKET) this.#depth++;
      else if ((b === CLOSE_BRACE || b === CLOSE_BRACKET) && --this.#depth === 0) {
        this.#ended = true;
      }
    }
  }

  info(start: number, terminated: boolean): LineInfo {
    return {
      start,
      length: this.length,
      terminated,
      head: new Uint8Array(this.head),
      blank: !this.#started && !this.#bad,
      closed: this.#ended && !this.#bad,
    };
  }
}

/** The lines of the file behind `handle`, in order, none of them held. */
export async function* scanLines(handle: FileHandle): AsyncGenerator<LineInfo> {
  const buffer = new Uint8Array(CHUNK_BYTES);
  let shape = new LineShape();
  let start = 0;
  let position = 0;
  while (true) {
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
    if (bytesRead === 0) break;
    let from = 0;
    while (from < bytesRead) {
      const newline = buffer.subarray(0, bytesRead).indexOf(NEWLINE, from);
      if (newline < 0) {
        shape.feed(buffer, from, bytesRead);
        break;
      }
      shape.feed(buffer, from, newline);
      yield shape.info(start, true);
      shape = new LineShape();
      start = position + newline + 1;
      from = newline + 1;
    }
    position += bytesRead;
  }
  if (shape.length > 0) yield shape.info(start, false);
}

/**
 * The text of `length` bytes at `start` of the file behind `handle`, read through `buffer` and
 * decoded a piece at a time: a line of millions of bytes is never one more buffer of its size.
 */
export async function readText(
  handle: FileHandle,
  start: number,
  length: number,
  buffer: Uint8Array,
): Promise<string> {
  const decoder = new TextDecoder();
  let text = "";
  for (let at = 0; at < length;) {
    const want = Math.min(buffer.length, length - at);
    const { bytesRead } = await handle.read(buffer, 0, want, start + at);
    if (bytesRead === 0) throw new Error(`the file ended before byte ${start + length}`);
    text += decoder.decode(buffer.subarray(0, bytesRead), { stream: true });
    at += bytesRead;
  }
  return text + decoder.decode();
}

/**
 * Copies `length` bytes at `start` of `source` to the end of `out`, through `buffer`: one
 * buffer serves every line of a file, so a copy allocates nothing per line.
 */
export async function copyRange(
  source: FileHandle,
  start: number,
  length: number,
  out: FileHandle,
  buffer: Uint8Array,
): Promise<void> {
  for (let at = 0; at < length;) {
    const want = Math.min(buffer.length, length - at);
    const { bytesRead } = await source.read(buffer, 0, want, start + at);
    if (bytesRead === 0) throw new Error(`the file ended before byte ${start + length}`);
    await out.write(buffer.subarray(0, bytesRead));
    at += bytesRead;
  }
}
