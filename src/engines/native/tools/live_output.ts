/**
 * A running command's output, handed on as it comes, for `jobs tail`: a test run of 30 s
 * otherwise shows nothing until it ends, and looks hung. The native engine runs its commands
 * itself, so it can do this; Claude Code's stream-json shows a command's output only in the
 * tool result at its end.
 *
 * A command that ends within LIVE_AFTER_MS of its first output shows nothing here: its result,
 * which comes at once, holds its output. Past that, what it printed so far goes out, then each
 * piece as it comes, in whole lines, at most every FLUSH_MS (a line without its end goes out after
 * PARTIAL_MS: a progress bar). Bounded, since the job folder keeps it: the first LIVE_CHARS
 * characters of a command's output go out whole; past them a note, then the latest whole line
 * every SAMPLE_MS, which a command's 10-minute limit holds to about 60 lines. Memory holds at
 * most what may still go out whole, and one line.
 */

/** How long a command runs after its first output before that is shown as it comes. */
export const LIVE_AFTER_MS = 2000;
/** How often what came is handed on. */
export const FLUSH_MS = 250;
/** A line without its end waits this long for it before it goes out as it is. */
const PARTIAL_MS = 1000;
/** A command's output shown whole, at most; then sampled. */
export const LIVE_CHARS = 64 * 1024;
/** Past LIVE_CHARS, one line this often. */
const SAMPLE_MS = 10_000;
/** A sampled line's characters, at most. */
const LINE_CHARS = 2000;

export interface LiveOutputOptions {
  /** Takes out of the output what is the server's, not the command's (masked_failures.ts). */
  clean?: (text: string) => string;
  /** LIVE_AFTER_MS and SAMPLE_MS, for tests. */
  afterMs?: number;
  sampleMs?: number;
}

export class LiveOutput {
  /** Came, not yet handed on (never more than may still go out whole). */
  #pending = "";
  /** Characters of the command's output taken for going out whole. */
  #taken = 0;
  #capped = false;
  #noted = false;
  /** Past the cap: the latest whole line, and the line being written. */
  #latest: string | undefined;
  #partial = "";
  #lastSample = 0;
  #partialSince: number | undefined;
  #live = false;
  #stopped = false;
  #start: ReturnType<typeof setTimeout> | undefined;
  #tick: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly emit: (text: string) => void,
    private readonly options: LiveOutputOptions = {},
  ) {}

  /** A piece of the command's output, as it arrived. */
  push(text: string): void {
    if (this.#stopped || text === "") return;
    // The wait starts with the first output, not before the sandbox is set up: a command that
    // ends soon after it prints is shown by its result, however slow the machine.
    this.#start ??= setTimeout(() => {
      this.#live = true;
      this.#flush();
      this.#tick = setInterval(() => this.#flush(), FLUSH_MS);
    }, this.options.afterMs ?? LIVE_AFTER_MS);
    if (!this.#capped) {
      const room = LIVE_CHARS - this.#taken;
      if (text.length <= room) {
        this.#pending += text;
        this.#taken += text.length;
        return;
      }
      this.#pending += text.slice(0, room);
      this.#taken = LIVE_CHARS;
      this.#capped = true;
      text = text.slice(room);
    }
    const joined = this.#partial + text;
    const end = joined.lastIndexOf("\n");
    if (end === -1) {
      this.#partial = joined.slice(0, LINE_CHARS);
      return;
    }
    const start = joined.lastIndexOf("\n", end - 1) + 1;
    this.#latest = joined.slice(start, end).slice(0, LINE_CHARS);
    this.#partial = joined.slice(end + 1).slice(0, LINE_CHARS);
  }

  /** The command ended: what came and was not handed on goes out, if its output is shown. */
  stop(): void {
    if (this.#stopped) return;
    clearTimeout(this.#start);
    clearInterval(this.#tick);
    if (this.#live) this.#flush(true);
    this.#stopped = true;
  }

  #flush(last = false): void {
    const now = performance.now();
    if (this.#pending !== "") {
      const text = this.options.clean ? this.options.clean(this.#pending) : this.#pending;
      const end = text.lastIndexOf("\n");
      // Whole lines go; the rest waits for its end, unless it waited long enough, the cap cut
      // it, or the command ended.
      const waited = this.#partialSince !== undefined && now - this.#partialSince >= PARTIAL_MS;
      const all = last || waited || this.#capped;
      const out = all ? text : text.slice(0, end + 1);
      this.#pending = all ? "" : text.slice(end + 1);
      // What is left is a line begun since the last whole line went out.
      if (this.#pending === "") this.#partialSince = undefined;
      else if (out !== "" || this.#partialSince === undefined) this.#partialSince = now;
      if (out !== "") this.emit(all && !out.endsWith("\n") ? `${out}\n` : out);
    }
    if (!this.#capped || this.#pending !== "") return;
    if (!this.#noted) {
      this.#noted = true;
      this.#lastSample = now;
      this.emit(
        `[live output past ${LIVE_CHARS} characters: from here its latest line every ` +
          `${(this.options.sampleMs ?? SAMPLE_MS) / 1000} s; the command's result keeps the ` +
          "end of its output]\n",
      );
      return;
    }
    const every = this.options.sampleMs ?? SAMPLE_MS;
    if (this.#latest !== undefined && (last || now - this.#lastSample >= every)) {
      this.#lastSample = now;
      // As a line of the output: the masked-failures report's lines begin with a newline.
      const cleaned = this.options.clean?.(`\n${this.#latest}\n`);
      const line = cleaned === undefined
        ? this.#latest
        : cleaned.startsWith("\n")
        ? cleaned.slice(1)
        : cleaned;
      this.#latest = undefined;
      if (line.trim() !== "") this.emit(line.endsWith("\n") ? line : `${line}\n`);
    }
  }
}
