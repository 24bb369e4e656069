/** The line splitter the engines and `jobs tail` read JSON-line files and streams with. */
import assert from "node:assert/strict";
import { LineSplitter } from "../../src/engines/line_splitter.ts";

const j = (v: unknown) => JSON.stringify(v);
/** A Claude Code stream-json session start and final result, as they come on stdout. */
const INIT = j({ type: "system", subtype: "init", session_id: "s", model: "qwen3-coder" });
const RESULT_OK = { type: "result", subtype: "success", is_error: false, result: "All done." };
const parses = (line: string) => (JSON.parse(line) as { type: string }).type;

/** Feeds chunks through a splitter and returns the lines it delivered. */
function split(chunks: Array<string | Uint8Array>, maxLine = 1000, end = true): string[] {
  const out: string[] = [];
  const s = new LineSplitter(maxLine, (l) => out.push(l));
  const enc = new TextEncoder();
  for (const c of chunks) s.push(typeof c === "string" ? enc.encode(c) : c);
  if (end) s.end();
  return out;
}

Deno.test("LineSplitter: lines split across chunks, and several lines in one chunk", () => {
  assert.deepEqual(split(['{"a":', "1}\n{", '"b":2}\n\n', "x\ny\n"]), [
    '{"a":1}',
    '{"b":2}',
    "",
    "x",
    "y",
  ]);
});

Deno.test("LineSplitter: multi-byte UTF-8 split across chunks", () => {
  const bytes = new TextEncoder().encode("héllo 😀 wörld\n");
  const parts = [bytes.slice(0, 2), bytes.slice(2, 8), bytes.slice(8, 9), bytes.slice(9)];
  assert.deepEqual(split(parts), ["héllo 😀 wörld"]);
});

Deno.test("LineSplitter: CRLF keeps the \\r on the line, and JSON still parses", () => {
  const lines = split([`${INIT}\r\n`]);
  assert.deepEqual(lines, [`${INIT}\r`]);
  assert.equal(parses(lines[0]!), "system");
});

Deno.test("LineSplitter: end() delivers a final line without newline (the result event may be one)", () => {
  assert.deepEqual(split(["a\n", j(RESULT_OK)], 1000, false), ["a"]);
  const lines = split(["a\n", j(RESULT_OK)]);
  assert.deepEqual(lines, ["a", j(RESULT_OK)]);
  assert.equal(parses(lines[1]!), "result");
  assert.deepEqual(split(["a\n", "  "]), ["a"]);
  // A lone trailing byte of a split character is flushed (as U+FFFD) rather than lost.
  assert.deepEqual(split([new Uint8Array([0x7b, 0xc3])]), ["{\ufffd"]);
});

Deno.test("LineSplitter: an over-long line is skipped, the next line survives", () => {
  const long = "x".repeat(25);
  assert.deepEqual(split([`${long}\nok\n`], 10), ["ok"]);
  // Over-long across chunks, newline in a later chunk.
  assert.deepEqual(split(["a\n", "y".repeat(8), "y".repeat(8), "yy\nnext", "\n"], 10), [
    "a",
    "next",
  ]);
  // Still over-long when the stream ends: nothing delivered.
  assert.deepEqual(split(["z".repeat(30)], 10), []);
  // A partial line that a later chunk makes over-long.
  assert.deepEqual(split(["aaaaaaaa", "aaaaa\nok\n"], 10), ["ok"]);
  // Exactly maxLine is kept.
  assert.deepEqual(split(["0123456789", "\n"], 10), ["0123456789"]);
});
