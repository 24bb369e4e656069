/**
 * The start or the end of a file, read without the rest: a long job's transcript or the quality
 * ledger grows without bound, and what is shown of it is its last lines; of a prompt that can
 * be megabytes, its first part.
 */
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { open } from "node:fs/promises";

export interface FileTail {
  /**
   * The whole lines among the file's last `maxBytes` bytes: the first one is dropped only
   * when the window's start cut it, the last one may lack its newline.
   */
  text: string;
  /** Bytes before the window were not read: the file holds lines older than `text`. */
  truncated: boolean;
  /** The file's offset just after the last byte read. */
  end: number;
}

/**
 * The first `maxBytes` of the file at `path` as text, and the file's size; undefined when it
 * cannot be opened. A cut in the middle of a UTF-8 sequence decodes to U+FFFD. The rest of the
 * file is never read (the Claude Code CLI whose `#!` line is wanted is a 400 MB native build).
 * Synchronous: a head is small, and the jail's plan is made without awaiting.
 */
export function readFileHead(
  path: string,
  maxBytes: number,
): { text: string; size: number } | undefined {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return undefined;
  }
  try {
    const { size } = fstatSync(fd);
    const buffer = new Uint8Array(Math.min(size, maxBytes));
    let got = 0;
    while (got < buffer.length) {
      const bytesRead = readSync(fd, buffer, got, buffer.length - got, got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    return { text: new TextDecoder().decode(buffer.subarray(0, got)), size };
  } finally {
    closeSync(fd);
  }
}

/**
 * The tail of the file at `path` (see FileTail); undefined when it cannot be opened. One byte
 * before the window is read too: a newline there means the window starts on a whole line,
 * which must not be dropped as a cut one.
 */
export async function readFileTail(path: string, maxBytes: number): Promise<FileTail | undefined> {
  let handle;
  try {
    handle = await open(path, "r");
  } catch {
    return undefined;
  }
  try {
    const { size } = await handle.stat();
    const start = Math.max(0, size - maxBytes);
    const from = Math.max(0, start - 1);
    const buffer = new Uint8Array(size - from);
    let got = 0;
    while (got < buffer.length) {
      const { bytesRead } = await handle.read(buffer, got, buffer.length - got, from + got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    let bytes = buffer.subarray(0, got);
    if (start > 0) {
      // Everything up to the first newline belongs to a line that began before the window.
      const newline = bytes.indexOf(0x0a);
      bytes = bytes.subarray(newline === -1 ? bytes.length : newline + 1);
    }
    return { text: new TextDecoder().decode(bytes), truncated: start > 0, end: from + got };
  } finally {
    await handle.close();
  }
}
