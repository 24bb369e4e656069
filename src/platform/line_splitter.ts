/**
 * Splitting a byte stream into lines, under a cap on each: what comes from outside (a
 * backend's stream, a child's output, a transcript another process writes) decides how long
 * a line is, so no line is held past `maxLineBytes`. A line over the cap either stops the
 * reading (ByteLines with `tooLong`: a backend that sends one is broken) or is skipped and
 * reported as such (a transcript keeps it on disk; only its parsing is skipped).
 *
 * LF ends a line and a CR before it is dropped. LF never occurs inside a UTF-8 sequence, so
 * each line decodes on its own. A chunk is searched once, and a line is joined only when it is
 * complete: a line of many chunks costs linear time.
 */
import { concatBytes, ownBytes } from "./bytes.ts";

/** One line as it came off the stream. */
export interface CutLine {
  /** The line without its LF (and a CR before it); undefined when it passed the cap. */
  bytes: Uint8Array | undefined;
  /** How many bytes of the stream the line took, its LF included when it had one. */
  span: number;
}

/** The lines of a byte stream, each at most `maxLineBytes` (its CR included, its LF not). */
export class ByteLines {
  #parts: Uint8Array[] = [];
  /** Bytes held of the line in progress. */
  #size = 0;
  /** Bytes seen of the line in progress, held or skipped. */
  #span = 0;
  #skipping = false;

  /** With `tooLong`, a line over the cap throws it at once; without, the line is skipped. */
  constructor(private readonly maxLineBytes: number, private readonly tooLong?: () => Error) {}

  /** The lines this chunk completes. */
  push(chunk: Uint8Array): CutLine[] {
    const lines: CutLine[] = [];
    let start = 0;
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
      lines.push(this.#take(chunk.subarray(start, nl), 1));
      start = nl + 1;
    }
    if (start < chunk.length) this.#hold(chunk.subarray(start));
    return lines;
  }

  /** The last line when the stream ended without a newline, if any. */
  end(): CutLine | undefined {
    return this.#span > 0 ? this.#take(new Uint8Array(0), 0) : undefined;
  }

  #hold(piece: Uint8Array): void {
    this.#span += piece.length;
    if (this.#skipping) return;
    if (this.#size + piece.length > this.maxLineBytes) return this.#overflow();
    this.#parts.push(ownBytes(piece));
    this.#size += piece.length;
  }

  #take(piece: Uint8Array, newline: number): CutLine {
    const span = this.#span + piece.length + newline;
    let bytes: Uint8Array | undefined;
    if (!this.#skipping && this.#size + piece.length > this.maxLineBytes) this.#overflow();
    if (!this.#skipping) {
      bytes = piece;
      if (this.#parts.length > 0) {
        this.#parts.push(piece);
        bytes = concatBytes(this.#parts, this.#size + piece.length);
      }
      if (bytes.length > 0 && bytes[bytes.length - 1] === 13) bytes = bytes.subarray(0, -1);
    }
    this.#parts = [];
    this.#size = 0;
    this.#span = 0;
    this.#skipping = false;
    return { bytes, span };
  }

  #overflow(): void {
    this.#parts = [];
    this.#size = 0;
    this.#skipping = true;
    if (this.tooLong) {
      this.#span = 0;
      this.#skipping = false;
      throw this.tooLong();
    }
  }
}

/**
 * Text lines handed to `onLine` as they complete; a line longer than `maxLine` bytes is
 * skipped (it stays in the file on disk; only its parsing is skipped).
 */
export class LineSplitter {
  #lines: ByteLines;
  #decoder = new TextDecoder();

  constructor(maxLine: number, private readonly onLine: (line: string) => void) {
    this.#lines = new ByteLines(maxLine);
  }

  push(chunk: Uint8Array): void {
    for (const { bytes } of this.#lines.push(chunk)) {
      if (bytes) this.onLine(this.#decoder.decode(bytes));
    }
  }

  /** Delivers a last line that had no newline (dropping it lost the result event). */
  end(): void {
    const last = this.#lines.end()?.bytes;
    const text = last ? this.#decoder.decode(last) : "";
    if (text.trim() !== "") this.onLine(text);
  }
}
