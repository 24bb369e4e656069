/**
 * A file's lines from an offset, one held at a time: the transcript pages' reader
 * (delegate_transcript) and the usage ledger's, which read with node:readline and held any
 * line whole before checking its length.
 */
import assert from "node:assert/strict";
import { type FileLine, readLines } from "../../src/platform/file_lines.ts";
import { withFile } from "../support/harness.ts";

async function all(path: string, start: number, maxLine: number): Promise<FileLine[]> {
  const out: FileLine[] = [];
  await readLines(path, start, maxLine, (line) => (out.push(line), true));
  return out;
}

Deno.test("readLines: each line with its byte range; CRLF and a last line without newline", async () => {
  await withFile("ab\r\né\n\nxyz", async (path) => {
    assert.deepEqual(await all(path, 0, 100), [
      { text: "ab", start: 0, end: 4, terminated: true },
      { text: "é", start: 4, end: 7, terminated: true },
      { text: "", start: 7, end: 8, terminated: true },
      { text: "xyz", start: 8, end: 11, terminated: false },
    ]);
    // From an offset, as a transcript page goes on where the last one ended.
    assert.deepEqual((await all(path, 4, 100)).map((l) => l.text), ["é", "", "xyz"]);
  });
});

Deno.test("readLines: a line over the cap is reported without its text, and reading goes on", async () => {
  const long = "x".repeat(200_000);
  await withFile(`a\n${long}\nb\n${long}`, async (path) => {
    const got = await all(path, 0, 4096);
    assert.deepEqual(got.map((l) => l.text), ["a", undefined, "b", undefined]);
    assert.equal(got[1]!.end - got[1]!.start, long.length + 1);
    assert.deepEqual(got.at(-1), {
      text: undefined,
      start: got[2]!.end,
      end: got[2]!.end + long.length,
      terminated: false,
    });
  });
});

Deno.test("readLines: stops when onLine says so, and says how much of the file it read", async () => {
  const lines = Array.from({ length: 50_000 }, (_, i) => `line ${i}`);
  await withFile(lines.join("\n") + "\n", async (path) => {
    let seen = 0;
    const read = await readLines(path, 0, 100, () => ++seen < 3);
    assert.equal(seen, 3);
    // One 64 KiB chunk, not the whole file.
    assert.equal(read, 64 * 1024);
  });
});
