/**
 * File names that are not UTF-8, held in a string without losing a byte. A Linux name is any
 * bytes but `/` and NUL; a runtime that decodes it as UTF-8 puts U+FFFD in place of the bytes
 * it cannot decode, and the name it gives then names no file (Node's `readdir` with string
 * names, all of Deno's own file API). So each byte that is not part of a well-formed UTF-8
 * sequence (Unicode 15, table 3-7) becomes the lone surrogate U+DC80..U+DCFF, as Python's
 * `surrogateescape` does (PEP 383): no UTF-8 name decodes to a lone surrogate, so every name
 * has one string and every such string one name. `encodeFileName` gives the bytes back for a
 * call that touches the disk; plain_text.ts shows such a byte as git does, in octal (`\351`).
 */
import { Buffer } from "node:buffer";

const strict = new TextDecoder("utf-8", { fatal: true });
const encoder = new TextEncoder();

/** A lone surrogate that stands for a byte (in unicode mode, a surrogate pair never matches). */
const RAW_BYTE = /[\uDC80-\uDCFF]/u;

/** True when `text` holds a byte of a name that is not UTF-8. */
export function hasRawBytes(text: string): boolean {
  return RAW_BYTE.test(text);
}

/** The byte a lone surrogate U+DC80..U+DCFF stands for, or undefined for any other character. */
export function rawByteOf(char: string): number | undefined {
  if (char.length !== 1) return undefined;
  const code = char.charCodeAt(0);
  return code >= 0xdc80 && code <= 0xdcff ? code - 0xdc00 : undefined;
}

/** How long the well-formed UTF-8 sequence at `at` is, or 0 when the byte there starts none. */
function sequenceAt(bytes: Uint8Array, at: number): number {
  const b0 = bytes[at]!;
  const cont = (i: number, lo = 0x80, hi = 0xbf) => {
    const b = bytes[at + i];
    return b !== undefined && b >= lo && b <= hi;
  };
  if (b0 < 0x80) return 1;
  if (b0 >= 0xc2 && b0 <= 0xdf) return cont(1) ? 2 : 0;
  if (b0 >= 0xe0 && b0 <= 0xef) {
    // E0 needs A0..BF next (no overlong forms); ED needs 80..9F (no surrogates).
    const second = b0 === 0xe0 ? cont(1, 0xa0) : b0 === 0xed ? cont(1, 0x80, 0x9f) : cont(1);
    return second && cont(2) ? 3 : 0;
  }
  if (b0 >= 0xf0 && b0 <= 0xf4) {
    // F0 needs 90..BF next (no overlong forms); F4 needs 80..8F (nothing past U+10FFFF).
    const second = b0 === 0xf0 ? cont(1, 0x90) : b0 === 0xf4 ? cont(1, 0x80, 0x8f) : cont(1);
    return second && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

/** A name's bytes as a string: UTF-8 where it is, each other byte as U+DC80..U+DCFF. */
export function decodeFileName(bytes: Uint8Array): string {
  try {
    return strict.decode(bytes);
  } catch {
    let out = "";
    for (let at = 0; at < bytes.length;) {
      const length = sequenceAt(bytes, at);
      if (length === 0) {
        out += String.fromCharCode(0xdc00 + bytes[at]!);
        at++;
      } else {
        out += strict.decode(bytes.subarray(at, at + length));
        at += length;
      }
    }
    return out;
  }
}

/** The bytes `decodeFileName` read `name` from. */
export function encodeFileName(name: string): Uint8Array {
  if (!hasRawBytes(name)) return encoder.encode(name);
  const out: number[] = [];
  for (const char of name) {
    const raw = rawByteOf(char);
    if (raw !== undefined) out.push(raw);
    else out.push(...encoder.encode(char));
  }
  return Uint8Array.from(out);
}

/**
 * `path` as node:fs takes it: itself, or its bytes when it holds a name that is not UTF-8
 * (Node passes a Buffer's bytes to the system as they are; Deno's node:fs decodes them, so
 * there such a path is not found, and callers say so).
 */
export function diskPath(path: string): string | Buffer {
  return hasRawBytes(path) ? Buffer.from(encodeFileName(path)) : path;
}
