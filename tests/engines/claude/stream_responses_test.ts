/**
 * The claude engine's account of each model response from Claude Code's stream: the server's
 * estimate of its request (the measured prompt and the conversation the stream showed before
 * it) and of its reply, reported at its first block, before the tool it calls runs.
 */
import assert from "node:assert/strict";
import { readStreamEvent } from "../../../src/engines/claude/stream.ts";
import { StreamResponses } from "../../../src/engines/claude/stream_responses.ts";
import { estimateTokens } from "../../../src/models/tokens.ts";

const usage = { input_tokens: -5, output_tokens: 0 };
const text = { type: "text", text: "x".repeat(4000) };
const call = { type: "tool_use", id: "t1", name: "Bash", input: { command: "ls" } };
const result = { type: "tool_result", tool_use_id: "t1", content: "y".repeat(8000) };

function line(type: string, id: string | undefined, block: unknown, parent?: string): string {
  return JSON.stringify({
    type,
    message: { ...(id ? { id } : {}), role: type, content: [block], usage },
    parent_tool_use_id: parent ?? null,
  });
}

function see(r: StreamResponses, text: string) {
  const event = readStreamEvent(text);
  assert.ok(event);
  return r.see(event);
}

Deno.test("each response's request is the prompt and the conversation the stream showed before it", () => {
  const r = new StreamResponses(2000, false);
  const first = see(r, line("assistant", "m1", text));
  assert.deepEqual(first, {
    id: "/m1",
    reported: { inputTokens: -5, outputTokens: 0, cacheReadTokens: 0, cacheCreationTokens: 0 },
    requestTokens: 2000,
    replyTokens: estimateTokens(JSON.stringify(text).length),
  });
  // The same message's next block: the same response, its reply grown.
  const again = see(r, line("assistant", "m1", call));
  const reply = JSON.stringify(text).length + JSON.stringify(call).length;
  assert.equal(again?.id, "/m1");
  assert.equal(again?.requestTokens, 2000);
  assert.equal(again?.replyTokens, estimateTokens(reply));
  assert.equal(see(r, line("user", undefined, result)), undefined);
  const second = see(r, line("assistant", "m2", { type: "text", text: "done" }));
  assert.equal(second?.requestTokens, 2000 + estimateTokens(reply + JSON.stringify(result).length));
  assert.equal(second?.requestUnseen, undefined);
});

Deno.test("a resumed session's and a subagent's requests carry what the stream did not show", () => {
  const resumed = new StreamResponses(2000, true);
  assert.equal(see(resumed, line("assistant", "m1", text))?.requestUnseen, true);
  const r = new StreamResponses(2000, false);
  see(r, line("assistant", "m1", text));
  const sub = see(r, line("assistant", "s1", call, "agent-1"));
  assert.equal(sub?.id, "agent-1/s1");
  assert.equal(sub?.requestUnseen, true);
  assert.equal(sub?.requestTokens, 0, "its own conversation, not the main one");
});
