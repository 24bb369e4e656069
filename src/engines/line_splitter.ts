/**
 * Splits a byte stream into lines without holding more than one line, and drops a line
 * longer than `maxLine` (it stays in the transcript on disk; we only skip parsing it).
 */
export class LineSplitter {
  #decoder = new TextDecoder();
  #partial = "";
  #skipping = false;

  constructor(private readonly maxLine: number, private readonly onLine: (line: string) => void) {}

  push(chunk: Uint8Array): void {
    const text = this.#decoder.decode(chunk, { stream: true });
    let start = 0;
    for (let nl = text.indexOf("\n"); nl !== -1; nl = text.indexOf("\n", start)) {
      const piece = text.slice(start, nl);
      start = nl + 1;
      if (this.#skipping) {
        this.#skipping = false;
        this.#partial = "";
        continue;
      }
      const line = this.#partial + piece;
      this.#partial = "";
      if (line.length <= this.maxLine) this.onLine(line);
    }
    if (this.#skipping) return;
    this.#partial += text.slice(start);
    if (this.#partial.length > this.maxLine) {
      this.#partial = "";
      this.#skipping = true;
    }
  }

  /** Delivers a last line that had no newline (dropping it lost the result event). */
  end(): void {
    const rest = this.#partial + this.#decoder.decode();
    this.#partial = "";
    if (!this.#skipping && rest.trim() !== "") this.onLine(rest);
    this.#skipping = false;
  }
}
