/**
 * Byte buffers filled in pieces: joining them, keeping a piece without its buffer, and reading
 * an open file under a hard cap.
 */
import type { FileHandle } from "node:fs/promises";

/** Joins `parts` into one buffer of `size` bytes (their total); one part is returned as is. */
export function concatBytes(parts: readonly Uint8Array[], size: number): Uint8Array {
  if (parts.length === 1 && parts[0]!.length === size) return parts[0]!;
  const out = new Uint8Array(size);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/**
 * The bytes of a view without the rest of its buffer. A chunk of a fetch body can be a small
 * view of a much larger buffer; keeping the view keeps the whole buffer (seen: 16 KiB
 * frames held 4 times their size), so a part kept for later is copied when that is cheaper.
 */
export function ownBytes(view: Uint8Array): Uint8Array {
  return view.buffer.byteLength > 2 * view.byteLength ? view.slice() : view;
}

/** Bytes read per call: Deno's FileHandle.read holds the event loop while it copies. */
const READ_SLICE = 64 * 1024;

/**
 * Reads at most `cap` bytes from an open file, from its start, whatever size it reports; one
 * byte more is read so that the caller sees a file over the cap (or one that grew past it since
 * its fstat) as longer than `cap`.
 */
export async function readCapped(handle: FileHandle, cap: number): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const buffer = new Uint8Array(Math.min(READ_SLICE, cap + 1 - total));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, total);
    if (bytesRead === 0) break;
    chunks.push(buffer.subarray(0, bytesRead));
    total += bytesRead;
    if (total > cap) break;
  }
  return concatBytes(chunks, total);
}
