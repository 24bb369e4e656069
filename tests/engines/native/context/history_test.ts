import { tempDir } from "../../../support/temp_dir.ts";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { join } from "node:path";
import type { ChatMessage } from "../../../../src/backends/chat_types.ts";
import {
  HISTORY_MAX_BYTES,
  historyBudget,
  readHistory,
} from "../../../../src/engines/native/context/history.ts";
import { scanLines } from "../../../../src/engines/native/jsonl_lines.ts";
import { MAX_TURN_GROWTH_CHARS } from "../../../../src/engines/native/loop.ts";

const system: ChatMessage = { role: "system", content: "the old system prompt" };
const task: ChatMessage = { role: "user", content: "TASK" };
const say = (text: string): ChatMessage => ({ role: "assistant", content: text });
const ask = (text: string): ChatMessage => ({ role: "user", content: text });
const call = (id: string): ChatMessage => ({
  role: "assistant",
  content: "",
  tool_calls: [{
    id,
    type: "function",
    function: { name: "Read", arguments: '{"file_path":"a"}' },
  }],
});
const result = (id: string, content: string): ChatMessage => ({
  role: "tool",
  tool_call_id: id,
  name: "Read",
  content,
});

/** A job folder whose messages.jsonl holds `lines` (messages, or raw text for a line). */
function folder(lines: Array<ChatMessage | string>): string {
  const dir = tempDir("od-history-");
  const text = lines.map((l) => (typeof l === "string" ? l : JSON.stringify(l))).join("\n");
  writeFileSync(join(dir, "messages.jsonl"), text + "\n");
  return dir;
}

/** readHistory with a copy into a fresh file; the copy's lines come back parsed. */
async function readWithCopy(dir: string, budget: number) {
  const copy = join(tempDir("od-copy-"), "messages.jsonl");
  const out = await open(copy, "w");
  try {
    const history = await readHistory(dir, budget, out);
    const text = readFileSync(copy, "utf8");
    const copied = text.split("\n").filter(Boolean).map((l) => JSON.parse(l) as ChatMessage);
    return { history, copied, text };
  } finally {
    await out.close();
  }
}

const lineBytes = (m: ChatMessage) => new TextEncoder().encode(JSON.stringify(m)).length;
const contents = (ms: ChatMessage[]) => ms.map((m) => m.content);

Deno.test("historyBudget: what the context holds, at least one turn's cap, at most 8 MiB", () => {
  assert.equal(historyBudget({ tokens: 32768, source: "model" }), MAX_TURN_GROWTH_CHARS);
  assert.equal(historyBudget({ tokens: 1_048_576, source: "clamped" }), 4 * 1_048_576);
  assert.equal(historyBudget({ tokens: 10_000_000, source: "setting" }), HISTORY_MAX_BYTES);
});

Deno.test("readHistory: the task and the newest whole exchanges within the budget; the copy keeps everything", async () => {
  const old = [ask("Q1"), say("A1".padEnd(1000, "a")), ask("Q2"), say("A2".padEnd(1000, "b"))];
  const recent = [ask("Q3"), call("c1"), result("c1", "R".repeat(500)), say("A3")];
  const dir = folder([system, task, say("first answer"), ...old, ...recent]);
  // Room for the newest exchange and the task, not for one more exchange of 1,000 bytes.
  const budget = lineBytes(task) + recent.reduce((n, m) => n + lineBytes(m), 0) + 500;
  const { history, copied } = await readWithCopy(dir, budget);
  assert.deepEqual(history.messages, [task, ...recent]);
  const leftOut = [say("first answer"), ...old];
  assert.deepEqual(history.leftOut, {
    messages: leftOut.length,
    bytes: leftOut.reduce((n, m) => n + lineBytes(m), 0),
  });
  assert.equal(history.repair, undefined);
  // Every entry but the old system prompt, in order: the new turn's file is whole too.
  assert.deepEqual(copied, [task, say("first answer"), ...old, ...recent]);
});

Deno.test("readHistory: an exchange larger than the budget on its own is left out whole, never half", async () => {
  const big = [ask("Q1"), call("c1"), result("c1", "x".repeat(5000)), say("A1")];
  const dir = folder([system, task, ...big, ask("Q2"), say("A2")]);
  const { history } = await readWithCopy(dir, 1000);
  assert.deepEqual(contents(history.messages), ["TASK", "Q2", "A2"]);
  assert.equal(history.leftOut.messages, 4);
  // A line larger than the budget is never read whole: left out with its exchange.
  const huge = folder([system, task, ask("Q1"), say("y".repeat(200_000)), ask("Q2")]);
  const read = await readWithCopy(huge, 100_000);
  assert.deepEqual(contents(read.history.messages), ["TASK", "Q2"]);
  assert.equal((read.copied[2]!.content as string).length, 200_000, "copied whole");
});

Deno.test("readHistory: a line cut mid-entry ends the history there; a call it left unanswered is answered", async () => {
  const whole = [system, task, call("c1"), result("c1", "r1"), call("c2")];
  const cut = JSON.stringify(result("c2", "the result")).slice(0, 25);
  const dir = folder([...whole, cut, say("after the cut")]);
  const { history, copied } = await readWithCopy(dir, 1_000_000);
  const answer = {
    role: "tool",
    tool_call_id: "c2",
    name: "Read",
    content: "Not run: the job was stopped",
  };
  assert.deepEqual(history.messages, [...whole.slice(1), answer]);
  assert.deepEqual(copied, [...whole.slice(1), answer]);
  assert.match(
    history.repair ?? "",
    /cut off mid-entry.*\(5 kept; 2 cut or after the cut, \d+ bytes, dropped\)$/,
  );
});

Deno.test("readHistory: a last line without its newline is whole when it closes, cut when it does not", async () => {
  const dir = folder([system, task]);
  writeFileSync(join(dir, "messages.jsonl"), JSON.stringify(say("done")), { flag: "a" });
  const whole = await readWithCopy(dir, 1000);
  assert.deepEqual(contents(whole.history.messages), ["TASK", "done"]);
  assert.deepEqual(whole.copied, [task, say("done")]);
  assert.ok(whole.text.endsWith("}\n"), "copied with a newline after it");
  writeFileSync(join(dir, "messages.jsonl"), '\n{"role":"user","content":"hal', { flag: "a" });
  const cut = await readHistory(dir, 1000);
  assert.deepEqual(contents(cut.messages), ["TASK", "done"]);
  assert.match(cut.repair ?? "", /\(3 kept; 1 cut or after the cut/);
});

Deno.test("readHistory: no file is an empty history", async () => {
  const dir = tempDir("od-history-");
  assert.deepEqual(await readHistory(dir, 1000), {
    messages: [],
    leftOut: { messages: 0, bytes: 0 },
  });
});

Deno.test("scanLines: lines across reads, blank lines, and whether each is one whole object", async () => {
  // Longer than a read, with brackets, quotes and backslashes inside its string.
  const long = JSON.stringify(say(`{"[\\\\ ${"z".repeat(3_000_000)} ]}`));
  const quoted = '{"role":"user","content":"a \\" quote } inside"}';
  const dir = folder([long, "   ", quoted, '{"a":1}{"b":2}', '{"role":"tool","content":"cut']);
  const handle = await open(join(dir, "messages.jsonl"));
  try {
    const lines = [];
    for await (const line of scanLines(handle)) lines.push(line);
    assert.deepEqual(
      lines.map((l) => [l.length, l.blank, l.closed]),
      [[long.length, false, true], [3, true, false], [quoted.length, false, true], [
        14,
        false,
        false,
      ], [29, false, false]],
    );
    assert.equal(new TextDecoder().decode(lines[0]!.head), long.slice(0, 64));
    assert.equal(lines[2]!.start, long.length + 1 + 4);
  } finally {
    await handle.close();
  }
});
