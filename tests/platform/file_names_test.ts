import assert from "node:assert/strict";
import {
  decodeFileName,
  diskPath,
  encodeFileName,
  hasRawBytes,
} from "../../src/platform/file_names.ts";

const bytes = (...b: number[]) => Uint8Array.from(b);

Deno.test("file names: UTF-8 names read as they are; every other byte as U+DC80..U+DCFF", () => {
  assert.equal(decodeFileName(new TextEncoder().encode("café/ü😀.txt")), "café/ü😀.txt");
  // Latin-1 é, a lone continuation byte, a cut sequence, an overlong `/`, an encoded
  // surrogate (U+D800), a code point past U+10FFFF, and 0xFF.
  assert.equal(decodeFileName(bytes(0x63, 0xe9, 0x2e)), "c\udce9.");
  assert.equal(decodeFileName(bytes(0x80)), "\udc80");
  assert.equal(decodeFileName(bytes(0xe2, 0x82, 0x41)), "\udce2\udc82A");
  assert.equal(decodeFileName(bytes(0xc0, 0xaf)), "\udcc0\udcaf");
  assert.equal(decodeFileName(bytes(0xed, 0xa0, 0x80)), "\udced\udca0\udc80");
  assert.equal(decodeFileName(bytes(0xf4, 0x90, 0x80, 0x80)), "\udcf4\udc90\udc80\udc80");
  assert.equal(decodeFileName(bytes(0xff, 0xc3, 0xa9)), "\udcffé");
  assert.equal(hasRawBytes("c\udce9."), true);
  // U+10080 is the pair D800 DC80: its low half is no raw byte.
  assert.equal(decodeFileName(bytes(0xf0, 0x90, 0x82, 0x80)), "\u{10080}");
  assert.equal(hasRawBytes("\u{10080}"), false);
  assert.equal(diskPath("plain/path"), "plain/path");
  assert.deepEqual([...(diskPath("/d\udcff") as Uint8Array)], [0x2f, 0x64, 0xff]);
});

Deno.test("file names: any bytes come back from their string unchanged", () => {
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % 256;
  for (let i = 0; i < 5000; i++) {
    // Biased to the bytes UTF-8 sequences are made of, so that valid and broken ones mix.
    const name = Uint8Array.from({ length: 1 + (i % 12) }, () => {
      const b = next();
      return b < 64 ? 0x80 + (b % 64) : b < 96 ? 0xc2 + (b % 50) : b;
    });
    const text = decodeFileName(name);
    assert.deepEqual(encodeFileName(text), name, [...name].join(","));
    // Valid UTF-8 reads as UTF-8 does.
    try {
      const strict = new TextDecoder("utf-8", { fatal: true }).decode(name);
      assert.equal(text, strict);
      assert.equal(hasRawBytes(text), false);
    } catch {
      assert.equal(hasRawBytes(text), true);
    }
  }
});
