import type { TranscriptEntry } from "../engines/types.ts";

/** One entry as a page shows it: its long field cut to the page's budget. */
export interface PageEntry {
  index: number;
  kind: TranscriptEntry["kind"];
  id?: string;
  name?: string;
  isError?: boolean;
  /** The text, the tool call's input as JSON, or the tool result's text; maybe cut. */
  body: string;
  /** How many characters of `body` were cut (0 = whole). */
  cutChars: number;
  /** A tool call's parameters that were ignored (TranscriptEntry's `ignored`). */
  ignored?: string[];
  /** Names of a call written as text read as the tool's own (TranscriptEntry's `mapped`). */
  mapped?: string[];
}

export interface TranscriptPage {
  engine: string;
  path: string;
  /** The file does not exist (yet). */
  missing: boolean;
  offset: number;
  maxBytes: number;
  entries: PageEntry[];
  /** The offset of the next page; undefined when this page reaches the end. */
  next?: number;
  /** How many entries the transcript has; known only when the page reached its end. */
  total?: number;
  /** Lines on or after the page's start that were not readable JSON and were skipped. */
  skippedLines: number;
  /** Bytes read from the file for this page. */
  bytesRead: number;
}

const encoder = new TextEncoder();
export const byteLength = (s: string): number => encoder.encode(s).length;

/** The longest prefix of `text` whose UTF-8 form fits in `maxBytes`. */
export function cutToBytes(text: string, maxBytes: number): { text: string; cutChars: number } {
  // A UTF-16 code unit never takes more than 3 bytes of UTF-8.
  if (text.length * 3 <= maxBytes) return { text, cutChars: 0 };
  const { read } = encoder.encodeInto(text, new Uint8Array(maxBytes));
  if (read >= text.length) return { text, cutChars: 0 };
  return { text: text.slice(0, read), cutChars: text.length - read };
}

/** `[12] tool_call Bash (toolu_1)` and the body, indented, with the cut note. */
export function renderEntry(e: PageEntry): string {
  const head = `[${e.index}] ${e.kind}${e.name ? ` ${e.name}` : ""}${e.id ? ` (${e.id})` : ""}${
    e.isError ? " error" : ""
  }`;
  const body = e.body === "" ? (e.kind === "tool_result" ? "(no output)" : "(empty)") : e.body;
  const note = e.cutChars > 0 ? `\n… [${e.cutChars} more chars cut]` : "";
  const ignored = e.ignored && e.ignored.length > 0
    ? `\nignored: ${e.ignored.map((k) => `"${k}"`).join(", ")} (Claude Code's ${e.name} ` +
      `takes ${e.ignored.length === 1 ? "it" : "them"}; this one does not)`
    : "";
  const mapped = e.mapped && e.mapped.length > 0
    ? `\nmapped: ${e.mapped.join(", ")} (the model wrote the call as text under these names)`
    : "";
  return `${head}\n  ${(body + note + ignored + mapped).replaceAll("\n", "\n  ")}`;
}

/** The page as the tool's text: header, entries, and where to go next. */
export function renderTranscriptPage(
  jobId: string,
  page: TranscriptPage,
  options: { running?: boolean } = {},
): string {
  const head = `transcript of job ${jobId} (${page.engine} engine): ${page.path}`;
  if (page.missing) {
    return `${head}\nNo transcript yet: the job has not started or has recorded nothing.` +
      (options.running ? " Try again shortly." : "");
  }
  const lines = [head];
  for (const e of page.entries) lines.push(renderEntry(e));
  if (page.skippedLines > 0) lines.push(`(${page.skippedLines} unreadable lines skipped)`);
  const first = page.entries[0]?.index;
  const last = page.entries.at(-1)?.index;
  const shown = first === undefined ? "" : `entries ${first}-${last} shown. `;
  if (page.next !== undefined) {
    lines.push(`${shown}next: delegate_transcript({ job_id: "${jobId}", offset: ${page.next} })`);
  } else if (first === undefined && page.offset > 0) {
    lines.push(
      `offset ${page.offset} is past the end: the transcript has ${page.total} entries.` +
        (options.running ? " The job is still running; more may follow." : ""),
    );
  } else {
    lines.push(
      `${shown}end of transcript (${page.total} entries)` +
        (options.running ? "; the job is still running, more may follow." : "."),
    );
  }
  return lines.join("\n");
}
