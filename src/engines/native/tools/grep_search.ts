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
const CHUNK_CHARS = 64 * 1024;
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

/** The lines of `text` as Grep numbers them, without their `\r`. */
function splitLines(text: string): string[] {
  return text.split("\n").map((raw) => raw.endsWith("\r") ? raw.slice(0, -1) : raw);
}

export async function searchText(
  text: string,
  search: TextSearch,
  options: SearchOptions,
): Promise<SearchResult> {
  const lines = splitLines(text);
  const result: SearchResult = { count: 0, lines: [], timedOut: false };
  const found = (index: number): boolean => {
    result.count++;
    if (options.keepLines) result.lines.push([index + 1, lines[index]!]);
    return options.firstOnly;
  };
  const late = () => performance.now() > options.deadline;

  if (!search.chunk) {
    for (let i = 0; i < lines.length; i++) {
      if (i % LINES_PER_LOOK === 0) {
        if (late()) return { ...result, timedOut: true };
        await options.pause();
      }
      if (search.line.test(lines[i]!) && found(i)) return result;
    }
    return result;
  }

  const chunk = search.chunk;
  for (let first = 0; first < lines.length;) {
    if (late()) return { ...result, timedOut: true };
    await options.pause();
    // Whole lines up to CHUNK_CHARS (at least one), with where each starts.
    const starts: number[] = [];
    let size = 0;
    let end = first;
    while (end < lines.length && (end === first || size + lines[end]!.length < CHUNK_CHARS)) {
      starts.push(size);
      size += lines[end]!.length + 1;
      end++;
    }
    const body = lines.slice(first, end).join("\n");
    let k = 0; // index into starts of the line the search is in
    chunk.lastIndex = 0;
    while (k < starts.length) {
      const m = chunk.exec(body);
      if (!m) break;
      while (k + 1 < starts.length && starts[k + 1]! <= m.index) k++;
      if (search.line.test(lines[first + k]!) && found(first + k)) return result;
      k++;
      if (k >= starts.length) break;
      chunk.lastIndex = starts[k]!;
      if (late()) return { ...result, timedOut: true };
      await options.pause();
    }
    first = end;
  }
  return result;
}
