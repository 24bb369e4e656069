/**
 * The readers of a file's start and end. The tail reader is the one reader of a file's tail. It replaced five: the native and claude engines' transcript
 * tails, the claim evidence's, the quality ledger's and `jobs tail`'s backlog. Each case
 * below is one of theirs; three of them dropped a whole first line when the window started on
 * a line boundary.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { readFileHead, readFileTail } from "../../src/platform/file_ends.ts";
import { withFile } from "../support/harness.ts";

const bytes = (s: string) => Buffer.byteLength(s);

Deno.test("readFileTail: a file within the window is read whole, not truncated", async () => {
  await withFile("a\nb\nc", async (path) => {
    assert.deepEqual(await readFileTail(path, 100), { text: "a\nb\nc", truncated: false, end: 5 });
    // Exactly the window's size: nothing before it.
    assert.deepEqual(await readFileTail(path, 5), { text: "a\nb\nc", truncated: false, end: 5 });
  });
});

Deno.test("readFileTail: a window that starts on a line boundary keeps that line", async () => {
  await withFile("one\ntwo\nthree\n", async (path) => {
    const tail = await readFileTail(path, bytes("two\nthree\n"));
    assert.deepEqual(tail, { text: "two\nthree\n", truncated: true, end: 14 });
  });
});

Deno.test("readFileTail: a line the window's start cuts is dropped whole", async () => {
  await withFile("one\ntwo\nthree\n", async (path) => {
    const tail = await readFileTail(path, bytes("wo\nthree\n"));
    assert.deepEqual(tail, { text: "three\n", truncated: true, end: 14 });
    // A window inside one line holds no whole line.
    assert.equal((await readFileTail(path, 3))?.text, "");
  });
});

Deno.test("readFileTail: a cut through a multi-byte character never shows half of it", async () => {
  const lines = Array.from({ length: 50 }, (_, i) => `${i} ${"é😀".repeat(20)}`);
  await withFile(lines.join("\n") + "\n", async (path) => {
    for (let window = 10; window < 600; window += 7) {
      const tail = await readFileTail(path, window);
      assert.ok(tail);
      assert.ok(!tail.text.includes("\uFFFD"), `window ${window}`);
      const got = tail.text.split("\n").filter((l) => l !== "");
      assert.deepEqual(got, lines.slice(lines.length - got.length), `window ${window}`);
    }
  });
});

Deno.test("readFileTail: a last line without a newline is kept, and `end` is the size", async () => {
  // jobs tail shows whole lines and follows on from `end` minus the unfinished line.
  await withFile("one\ntwo\nthr", async (path) => {
    assert.deepEqual(await readFileTail(path, 7), { text: "two\nthr", truncated: true, end: 11 });
  });
});

Deno.test("readFileTail: a file that cannot be opened has no tail", async () => {
  assert.equal(await readFileTail("/nonexistent/od-file-tail", 100), undefined);
  await withFile("", async (path) => {
    assert.deepEqual(await readFileTail(path, 100), { text: "", truncated: false, end: 0 });
  });
});

Deno.test("head: the first bytes as text and the whole size; a missing file is undefined", async () => {
  await withFile("héllo world\n", (path) => {
    assert.deepEqual(readFileHead(path, 5), { text: "h\u00e9ll", size: 13 });
    assert.deepEqual(readFileHead(path, 100), { text: "héllo world\n", size: 13 });
    // A cut inside "é" (2 bytes) decodes to U+FFFD, never throws.
    assert.deepEqual(readFileHead(path, 2), { text: "h\ufffd", size: 13 });
    assert.equal(readFileHead(join(path, "..", "missing"), 5), undefined);
  });
});
