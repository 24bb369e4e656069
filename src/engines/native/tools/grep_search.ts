/**
 * Searching one file's text for a model's regex without stalling the server. Matching line by
 * line costs a pattern that backtracks badly its full backtracking budget on every line before
 * V8 falls back to its linear-time engine (src/platform/regex_guard.ts): about 0.3 ms a line,
 * so seconds for one large file, all in one synchronous stretch. Here the text is searched in
 * chunks of whole lines, one regex execution per chunk and per line found, so that budget is
 * paid per chunk rather than per line, and the event loop gets a turn between chunks.
 *
 * A chunk search finds a superset of the lines that match on their own (a match inside a line
 * is also a match inside the chunk, with `m` making ^ and $ work at line ends), and each line
 * it lands on is checked alone. Lookarounds could see across a line end and miss a match, so a
 * pattern with one is matched line by line instead, still with turns for the event loop.
 */

/** Characters of whole lines searched with one regex execution. */
const CHUNK_CHARS = 16 * 1024;
/** Lines matched between two looks at the clock when matching line by line. */
const LINES_PER_LOOK = 256;

export interface TextSearch {
  /** The pattern for one line: no `g` flag, so it keeps no state. */
  line: RegExp;
  /** The same pattern with `gm`, or undefined when it has lookarounds. */
  chunk?: RegExp;
}

/** Compiles a search; throws SyntaxError for an invalid pattern. */
export function compileSearch(pattern: string, ignoreCase: boolean): TextSearch {
  const flags = ignoreCase ? "i" : "";
  const line = new RegExp(pattern, flags);
  const lookaround = /\(\?<?[=!]/.test(pattern);
  return lookaround ? { line } : { line, chunk: new RegExp(pattern, `${flags}gm`) };
}

export interface SearchOptions {
  /** Keep the matching lines (content mode); else only count them. */
  keepLines: boolean;
  /** Stop at the first matching line (files_with_matches mode). */
  firstOnly: boolean;
  /** performance.now() after which the search stops. */
  deadline: number;
  /** Gives the event loop a turn when due. */
  pause: () => Promise<void>;
}

export interface SearchResult {
  count: number;
  /** 1-based line numbers and text of matching lines, when kept. */
  lines: Array<[number, string]>;
  /** True when the deadline stopped the search before the end of the text. */
  timedOut: boolean;
}

/** Bytes decoded at a time, with a turn for the event loop between. */
const DECODE_BYTES = 1024 * 1024;

/** UTF-8 text of a file, decoded in slices so that 8 MiB does not stall the server. */
export async function decodeText(bytes: Uint8Array, pause: () => Promise<void>): Promise<string> {
  const decoder = new TextDecoder();
  let text = "";
  for (let at = 0; at < bytes.length; at += DECODE_BYTES) {
    text += decoder.decode(bytes.subarray(at, at + DECODE_BYTES), { stream: true });
    await pause();
  }
  return text + decoder.decode();
}

const strip = (line: string) => line.endsWith("\r") ? line.slice(0, -1) : line;

/**
 * Searches `text` line by line as Grep numbers lines (a final newline starts one more, empty
 * line), without splitting it all at once: 8 MiB of short lines would be a long stall.
 */
export async function searchText(
  text: string,
  search: TextSearch,
  options: SearchOptions,
): Promise<SearchResult> {
  const result: SearchResult = { count: 0, lines: [], timedOut: false };
  // Line numbers, counted forward as positions only grow.
  let countedAt = 0;
  let countedLine = 1;
  const lineNumber = (start: number): number => {
    for (
      let i = text.indexOf("\n", countedAt);
      i !== -1 && i < start;
      i = text.indexOf("\n", i + 1)
    ) {
      countedLine++;
      countedAt = i + 1;
    }
    countedAt = Math.max(countedAt, start);
    return countedLine;
  };
  /** Checks the line from `start` to `end` alone; true when the search is done. */
  const check = (start: number, end: number): boolean => {
    const line = strip(text.slice(start, end));
    if (!search.line.test(line)) return false;
    result.count++;
    if (options.keepLines) result.lines.push([lineNumber(start), line]);
    return options.firstOnly;
  };
  const late = () => performance.now() > options.deadline;
  const endOf = (from: number) => {
    const i = text.indexOf("\n", from);
    return i === -1 ? text.length : i;
  };

  if (!search.chunk) {
    for (let start = 0, n = 0;; n++) {
      if (n % LINES_PER_LOOK === 0) {
        if (late()) return { ...result, timedOut: true };
        await options.pause();
      }
      const end = endOf(start);
      if (check(start, end) || end === text.length) return result;
      start = end + 1;
    }
  }

  const chunk = search.chunk;
  for (let first = 0;;) {
    if (late()) return { ...result, timedOut: true };
    await options.pause();
    // Whole lines from `first`, about CHUNK_CHARS of them (at least one).
    const last = endOf(Math.min(first + CHUNK_CHARS, text.length));
    const body = text.slice(first, last);
    chunk.lastIndex = 0;
    for (;;) {
      const m = chunk.exec(body);
      if (!m) break;
      const at = first + m.index;
      const start = at === 0 ? 0 : text.lastIndexOf("\n", at - 1) + 1;
      const end = endOf(at);
      if (check(Math.max(start, first), end)) return result;
      if (end >= last) break;
      chunk.lastIndex = end + 1 - first;
      if (late()) return { ...result, timedOut: true };
      await options.pause();
    }
    if (last === text.length) return result;
    first = last + 1;
  }
}
