/**
 * The one capped line splitter. It replaced four: the engines' and `jobs tail`'s LineSplitter
 * (skips a line over the cap), the backends' ByteLines (stops at one), the transcript pages'
 * and the usage ledger's file readers (file_lines_test.ts). Each old caller's case is here.
 */
import assert from "node:assert/strict";
import { ByteLines, LineSplitter } from "../../src/platform/line_splitter.ts";

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

Deno.test("LineSplitter: CRLF ends a line as LF does, and JSON still parses", () => {
  const lines = split([`${INIT}\r\n`]);
  assert.deepEqual(lines, [INIT]);
  assert.equal(parses(lines[0]!), "system");
  // A CR anywhere else is the line's.
  assert.deepEqual(split(["a\rb\n"]), ["a\rb"]);
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

const enc = new TextEncoder();
const dec = new TextDecoder();

Deno.test("ByteLines: lines across chunks, CRLF, a last line without newline", () => {
  const lines = new ByteLines(100, () => new RangeError("long"));
  const got = [
    ...lines.push(enc.encode("ab")),
    ...lines.push(enc.encode("c\r\nde\n\nf")),
    ...lines.push(enc.encode("g")),
  ].map((l) => dec.decode(l.bytes));
  assert.deepEqual(got, ["abc", "de", ""]);
  assert.equal(dec.decode(lines.end()!.bytes), "fg");
  assert.equal(lines.end(), undefined);
});

Deno.test("ByteLines: a line over the cap throws, whether it ends in the chunk or not", () => {
  const tooLong = () => new RangeError("long");
  assert.throws(() => new ByteLines(4, tooLong).push(enc.encode("12345\n")), RangeError);
  const pending = new ByteLines(4, tooLong);
  pending.push(enc.encode("123"));
  assert.throws(() => pending.push(enc.encode("45")), RangeError);
  // Exactly at the cap is fine.
  assert.deepEqual(
    new ByteLines(4, tooLong).push(enc.encode("1234\n")).map((l) => dec.decode(l.bytes)),
    ["1234"],
  );
});

Deno.test("ByteLines: a long line in many chunks costs linear time, not a rescan per chunk", () => {
  const chunk = new Uint8Array(16 * 1024).fill(120);
  const lines = new ByteLines(64 * 1024 * 1024, () => new RangeError("long"));
  const started = performance.now();
  for (let i = 0; i < 2048; i++) assert.equal(lines.push(chunk).length, 0);
  const out = lines.push(enc.encode("\n"));
  const ms = performance.now() - started;
  assert.equal(out[0]!.bytes?.length, 32 * 1024 * 1024);
  // Joining the pending text on every chunk (as `buffer += ...; buffer.indexOf("\n")` does)
  // copies ~32 GiB here.
  assert.ok(ms < 5000, `took ${ms.toFixed(0)} ms`);
});

Deno.test("ByteLines without tooLong: a line over the cap comes back without bytes, spans kept", () => {
  const lines = new ByteLines(4);
  const got = [
    ...lines.push(enc.encode("ab\n12345")),
    ...lines.push(enc.encode("678\ncd\r\n")),
  ].map((l) => ({ text: l.bytes && dec.decode(l.bytes), span: l.span }));
  assert.deepEqual(got, [
    { text: "ab", span: 3 },
    { text: undefined, span: 9 },
    { text: "cd", span: 4 },
  ]);
  lines.push(enc.encode("xyzzy"));
  assert.deepEqual(lines.end(), { bytes: undefined, span: 5 });
  assert.equal(lines.end(), undefined);
});
