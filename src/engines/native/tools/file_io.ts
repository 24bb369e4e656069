import type { FileHandle } from "node:fs/promises";
import type { OpenedFile } from "../../../platform/open_beneath/open_beneath.ts";
import { readCapped } from "../../../platform/bytes.ts";
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

export { readCapped };

/** The size limit in words, for refusals. */
export function sizeLimitText(): string {
  return `the ${MAX_FILE_BYTES / 1024 / 1024} MiB limit`;
}

/**
 * Reads a file the tools may show or edit, through the descriptor openConfined returned (so
 * what is read is what was checked). Files over MAX_FILE_BYTES are refused.
 */
export async function loadFile(file: OpenedFile, shown: string, verb: string): Promise<LoadedFile> {
  const tooBig = (n: number) =>
    new ToolFailure(
      `Refused to ${verb} "${shown}": it is ${n} bytes, over ${sizeLimitText()}; ` +
        "use Grep to search it, or Bash (head, sed -n) to view parts",
    );
  if (file.stats.size > MAX_FILE_BYTES) throw tooBig(file.stats.size);
  let bytes: Uint8Array;
  try {
    bytes = await readCapped(file.handle, MAX_FILE_BYTES);
  } catch (e) {
    throw new ToolFailure(`Cannot ${verb}: ${fsErrorText(e, shown)}`);
  }
  if (bytes.length > MAX_FILE_BYTES) throw tooBig(bytes.length);
  if (looksBinary(bytes)) return { kind: "binary", bytes: bytes.length };
  const text = new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes);
  return { kind: "text", text, bytes: bytes.length };
}

/**
 * Replaces an open file's content through its descriptor: written over from the start, then
 * cut to the new length (never truncated at open, before the descriptor was checked).
 */
export async function replaceContent(handle: FileHandle, content: string): Promise<number> {
  const bytes = new TextEncoder().encode(content);
  let at = 0;
  while (at < bytes.length) {
    const { bytesWritten } = await handle.write(bytes, at, bytes.length - at, at);
    at += bytesWritten;
  }
  await handle.truncate(bytes.length);
  return bytes.length;
}
