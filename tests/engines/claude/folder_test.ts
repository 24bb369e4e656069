import assert from "node:assert/strict";
import { join } from "node:path";
import {
  claudeFolder,
  recentActivity,
  scanTranscript,
  transcriptFacts,
} from "../../../src/engines/claude/folder.ts";
import type { StreamItem } from "../../../src/engines/claude/stream.ts";

const j = (v: unknown) => JSON.stringify(v);
const init = (mode: string) =>
  j({ type: "system", subtype: "init", session_id: "s", permissionMode: mode });
const toolLine = (i: number) =>
  j({
    type: "assistant",
    message: {
      content: [{ type: "tool_use", id: `t${i}`, name: "Bash", input: { command: `c${i}` } }],
    },
  });
const textLine = (t: string) =>
  j({ type: "assistant", message: { content: [{ type: "text", text: t }] } });
const RESULT = j({ type: "result", subtype: "success", is_error: false, result: "ok" });

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "transcript_test_" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("transcriptFacts: counts every tool call and sees the init", async () => {
  await withDir(async (dir) => {
    const path = join(dir, "stream.jsonl");
    const lines = [init("acceptEdits"), "garbage", textLine("hi")];
    for (let i = 0; i < 250; i++) lines.push(toolLine(i));
    lines.push(RESULT);
    // No trailing newline: the last line must still be read.
    await Deno.writeTextFile(path, lines.join("\n") + "\n" + toolLine(999));
    assert.deepEqual(await transcriptFacts(path), {
      toolCalls: 251,
      sessionCreated: true,
      permissionMode: "acceptEdits",
    });
  });
});

Deno.test("transcriptFacts: no init means no session; a missing file is empty", async () => {
  await withDir(async (dir) => {
    const path = join(dir, "stream.jsonl");
    await Deno.writeTextFile(path, `${toolLine(1)}\n${toolLine(2)}\n`);
    assert.deepEqual(await transcriptFacts(path), { toolCalls: 2, sessionCreated: false });
    assert.deepEqual(await transcriptFacts(join(dir, "absent.jsonl")), {
      toolCalls: 0,
      sessionCreated: false,
    });
  });
});

Deno.test("scanTranscript: items in order, CRLF tolerated", async () => {
  await withDir(async (dir) => {
    const path = join(dir, "stream.jsonl");
    await Deno.writeTextFile(path, `${init("plan")}\r\n${textLine("a")}\r\n${RESULT}\r\n`);
    const items: StreamItem[] = [];
    await scanTranscript(path, (i) => items.push(i));
    assert.deepEqual(items.map((i) => i.type), ["init", "activity", "result"]);
  });
});

Deno.test("recentActivity: the last items, in order", async () => {
  await withDir(async (dir) => {
    const path = join(dir, "stream.jsonl");
    const lines = [init("default")];
    for (let i = 0; i < 10; i++) lines.push(toolLine(i));
    lines.push(textLine("final words"), RESULT);
    await Deno.writeTextFile(path, lines.join("\n") + "\n");
    assert.deepEqual(await recentActivity(path, 3), [
      { kind: "tool", name: "Bash", detail: "c8" },
      { kind: "tool", name: "Bash", detail: "c9" },
      { kind: "text", text: "final words" },
    ]);
    assert.equal((await recentActivity(path, 100)).length, 11);
    assert.deepEqual(await recentActivity(join(dir, "absent.jsonl"), 5), []);
  });
});

Deno.test("recentActivity: reads only the tail of a big file, from a line boundary", async () => {
  await withDir(async (dir) => {
    const path = join(dir, "stream.jsonl");
    const lines: string[] = [];
    // A long text line with multi-byte characters, so the cut can land mid-character.
    for (let i = 0; i < 200; i++) lines.push(textLine(`line ${i} ${"é😀".repeat(40)}`));
    const text = lines.join("\n") + "\n";
    await Deno.writeTextFile(path, text);
    const size = new TextEncoder().encode(text).length;
    const tailBytes = 4096;
    assert.ok(size > tailBytes * 4);
    const got = await recentActivity(path, 1000, tailBytes);
    // Every item is a whole, correctly decoded line, and they are the file's last ones.
    assert.ok(got.length > 5 && got.length < 200, String(got.length));
    const expected = lines.slice(-got.length).map((l) => JSON.parse(l).message.content[0].text);
    assert.deepEqual(got.map((a) => (a.kind === "text" ? a.text : "?")), expected);
    // A partial first line in the tail is dropped, not parsed as garbage or shown.
    const lineBytes = new TextEncoder().encode(lines[0]! + "\n").length;
    assert.equal(got.length, Math.floor(tailBytes / lineBytes));
  });
});

Deno.test("recentActivity: a tail that starts exactly on a line boundary keeps that line", async () => {
  await withDir(async (dir) => {
    const path = join(dir, "stream.jsonl");
    const lines = Array.from({ length: 6 }, (_, i) => textLine(`t${i}`));
    const text = lines.join("\n") + "\n";
    await Deno.writeTextFile(path, text);
    const lineBytes = new TextEncoder().encode(lines[0]! + "\n").length;
    // The tail is exactly the last three lines.
    const got = await recentActivity(path, 10, lineBytes * 3);
    assert.deepEqual(got, [
      { kind: "text", text: "t3" },
      { kind: "text", text: "t4" },
      { kind: "text", text: "t5" },
    ]);
  });
});

Deno.test("recentActivity: a cut first line is dropped even if its rest is valid JSON", async () => {
  await withDir(async (dir) => {
    const path = join(dir, "stream.jsonl");
    // The first line is garbage followed by JSON; the tail starts exactly at its "{".
    const text = `GARBAGE${textLine("ghost")}\n${textLine("real")}\n`;
    await Deno.writeTextFile(path, text);
    const tailBytes = text.length - "GARBAGE".length;
    assert.deepEqual(await recentActivity(path, 10, tailBytes - 1), [{
      kind: "text",
      text: "real",
    }]);
    assert.deepEqual(await recentActivity(path, 10, tailBytes), [{ kind: "text", text: "real" }]);
  });
});

Deno.test("claudeFolder.liveReader: a tool's result shows when it comes; a denied call's does not", () => {
  const read = claudeFolder.liveReader();
  const result = (id: string, content: unknown, isError = false, meta?: unknown) =>
    j({
      type: "user",
      message: { content: [{ type: "tool_result", tool_use_id: id, content, is_error: isError }] },
      ...(meta ? { tool_result_meta: meta } : {}),
    });
  assert.deepEqual(read(toolLine(1)), [{ kind: "tool", name: "Bash", detail: "c1" }]);
  assert.deepEqual(read(result("t1", "all 12 tests passed")), [
    { kind: "result", text: "all 12 tests passed" },
  ]);
  assert.deepEqual(read(result("t2", [{ type: "text", text: "out" }])), [
    { kind: "result", text: "out" },
  ]);
  // A failure is an error line, as before; a call Claude Code did not run has no result.
  assert.deepEqual(read(result("t3", "Exit code 1", true)), [
    { kind: "error", text: "tool error: Exit code 1" },
  ]);
  assert.deepEqual(
    read(result("t4", "denied", false, [{ id: "t4", non_execution_kind: "user-rejected" }])),
    [],
  );
});
