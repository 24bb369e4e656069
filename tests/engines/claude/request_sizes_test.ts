import assert from "node:assert/strict";
import { RequestSizes } from "../../../src/engines/claude/request_sizes.ts";
import { readStreamEvent } from "../../../src/engines/claude/stream.ts";

/** Stream lines as Claude Code 2.1.332 writes them: one assistant event per content block. */
const assistant = (id: string, block: unknown, input: number, parent: string | null = null) =>
  JSON.stringify({
    type: "assistant",
    parent_tool_use_id: parent,
    message: { id, role: "assistant", content: [block], usage: { input_tokens: input } },
  });
const result = (id: string, content: string, parent: string | null = null) =>
  JSON.stringify({
    type: "user",
    parent_tool_use_id: parent,
    message: { role: "user", content: [{ type: "tool_result", tool_use_id: id, content }] },
  });

function sizes(lines: string[]): RequestSizes {
  const s = new RequestSizes();
  for (const line of lines) {
    const event = readStreamEvent(line);
    if (event) s.see(event);
  }
  return s;
}

Deno.test("request sizes: one per response, with what the conversation gained before it", () => {
  const text = { type: "text", text: "I will read it" };
  const read = { type: "tool_use", id: "t1", name: "Read", input: { file_path: "/w/big.log" } };
  const file = "x".repeat(40_000);
  const s = sizes([
    JSON.stringify({ type: "system", subtype: "init", session_id: "s" }),
    assistant("m1", text, 1_239),
    assistant("m1", read, 1_239),
    result("t1", file),
    assistant("m2", { type: "text", text: "done" }, 2_039),
    JSON.stringify({ type: "result", subtype: "success", usage: { input_tokens: 3_278 } }),
  ]);
  const gained = JSON.stringify(text).length + JSON.stringify(read).length +
    JSON.stringify({ type: "tool_result", tool_use_id: "t1", content: file }).length;
  assert.deepEqual(s.requests, [
    { reported: 1_239, added: 0 },
    { reported: 2_039, added: Math.ceil(gained / 4) },
  ]);
});

Deno.test("request sizes: a subagent's messages and results are another conversation", () => {
  const s = sizes([
    assistant("m1", { type: "tool_use", id: "a1", name: "Agent", input: {} }, 1_000),
    assistant("sub1", { type: "tool_use", id: "s1", name: "Read", input: {} }, 900, "a1"),
    result("s1", "y".repeat(8_000), "a1"),
    assistant("sub2", { type: "text", text: "found it" }, 2_900, "a1"),
    result("a1", "found it"),
    assistant("m2", { type: "text", text: "ok" }, 1_100),
  ]);
  assert.equal(s.requests.length, 2);
  assert.equal(s.requests[1]!.reported, 1_100);
  assert.ok(s.requests[1]!.added < 100, `${s.requests[1]!.added}`);
});

Deno.test("request sizes: cached tokens count as read; a message without usage reports none", () => {
  const s = sizes([
    JSON.stringify({
      type: "assistant",
      message: {
        id: "m1",
        content: [{ type: "text", text: "a" }],
        usage: { input_tokens: 10, cache_read_input_tokens: 1_000, cache_creation_input_tokens: 5 },
      },
    }),
    JSON.stringify({ type: "assistant", message: { id: "m2", content: [] } }),
  ]);
  assert.deepEqual(s.requests.map((r) => r.reported), [1_015, 0]);
});
