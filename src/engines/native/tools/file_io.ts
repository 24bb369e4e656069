import { readFile, stat } from "node:fs/promises";
import { fsErrorText, ToolFailure } from "./fields.ts";
import { MAX_FILE_BYTES } from "./types.ts";

/** How much of a file is sniffed for binary content, as git and ripgrep do. */
export const SNIFF_BYTES = 8192;

/**
 * True for content that is not text: a NUL byte in the first 8 KiB, or more than 10% of
 * those bytes not decoding as UTF-8 (a little Latin-1 in a text file still shows).
 */
export function looksBinary(bytes: Uint8Array): boolean {
  const head = bytes.subarray(0, SNIFF_BYTES);
  if (head.includes(0)) return true;
  // stream: true holds back a character cut in two by the 8 KiB boundary.
  const text = new TextDecoder("utf-8", { ignoreBOM: true }).decode(head, { stream: true });
  let bad = 0;
  for (let i = text.indexOf("\uFFFD"); i !== -1; i = text.indexOf("\uFFFD", i + 1)) bad++;
  return bad > 0 && bad * 10 > text.length;
}

/** A regular file's content, or the fact that it is binary. */
export type LoadedFile =
  | { kind: "text"; text: string; bytes: number }
  | { kind: "binary"; bytes: number };

/** The size limit in words, for refusals. */
export function sizeLimitText(): string {
  return `the ${MAX_FILE_BYTES / 1024 / 1024} MiB limit`;
}

/**
 * Reads a file the tools may show or edit. Refuses directories (which Glob lists),
 * special files (a FIFO would block the loop) and files over MAX_FILE_BYTES.
 */
export async function loadFile(real: string, shown: string, verb: string): Promise<LoadedFile> {
  let size: number;
  try {
    const info = await stat(real);
    if (info.isDirectory()) {
      throw new ToolFailure(`Cannot ${verb} "${shown}": it is a directory; use Glob to list files`);
    }
    if (!info.isFile()) throw new ToolFailure(`Cannot ${verb} "${shown}": not a regular file`);
    size = info.size;
  } catch (e) {
    if (e instanceof ToolFailure) throw e;
    throw new ToolFailure(`Cannot ${verb}: ${fsErrorText(e, shown)}`);
  }
  const tooBig = (n: number) =>
    new ToolFailure(
      `Refused to ${verb} "${shown}": it is ${n} bytes, over ${sizeLimitText()}; ` +
        "use Grep to search it, or Bash (head, sed -n) to view parts",
    );
  if (size > MAX_FILE_BYTES) throw tooBig(size);
  let bytes: Uint8Array;
  try {
    bytes = await readFile(real);
  } catch (e) {
    throw new ToolFailure(`Cannot ${verb}: ${fsErrorText(e, shown)}`);
  }
  if (bytes.length > MAX_FILE_BYTES) throw tooBig(bytes.length);
  if (looksBinary(bytes)) return { kind: "binary", bytes: bytes.length };
  const text = new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes);
  return { kind: "text", text, bytes: bytes.length };
}
