/**
 * The loop's aids near the turn limit: the countdown in the last tool result, the last request
 * without tools, and the text kept (marked partial) when a run stops before its answer.
 */
import { withEmulator } from "../../support/emulator/emulator.ts";
import assert from "node:assert/strict";
import { runLoop } from "../../../src/engines/native/loop.ts";
import { MAX_PARTIAL_CHARS, partialText } from "../../../src/engines/native/loop_aids.ts";
import type { ChatScript } from "../../support/emulator/emulator.ts";
import {
  assertEveryCallAnswered,
  assertRemembered,
  harness,
  type Json,
  testTool,
  toolMessages,
  user,
} from "./support/loop_harness.ts";

type Sent = { role: string; content: string; tool_calls?: unknown[] };

/** Two calls per reply while tools are offered; an answer once they are withdrawn. */
const obedient: ChatScript = (view) =>
  view.tools.length === 0 ? { kind: "text", text: "Final: checked a to d." } : {
    kind: "tool_calls",
    text: `step ${view.conversationRequestNumber}`,
    calls: [
      { name: "Read", arguments: { file_path: `a${view.conversationRequestNumber}` } },
      { name: "Read", arguments: { file_path: `b${view.conversationRequestNumber}` } },
    ],
  };

Deno.test("turns: the last tool result counts down from 3; the last request has no tools and its answer completes the run", async () => {
  await withEmulator({ chatScript: obedient }, async (emu) => {
    const read = testTool("Read", true);
    const h = harness(emu.url, [read], { maxTurns: 5 });
    const messages = user("go");
    const result = await runLoop(messages, h.deps);
    assert.equal(result.ok, true);
    assert.equal(result.errorText, undefined);
    assert.equal(result.text, "Final: checked a to d.");
    assert.equal(result.turns, 5);
    assert.equal(read.inputs.length, 8);

    const bodies = emu.chatRequests().map((r) => r.json as Json);
    assert.deepEqual(bodies.map((b) => Array.isArray(b.tools)), [true, true, true, true, false]);
    // What the last tool message of each request said at its end.
    const tails = bodies.slice(1).map((b) => {
      const sent = b.messages as Sent[];
      return sent.at(-1)!.content.split("\n\n").at(-1);
    });
    assert.deepEqual(tails, [
      'Read ran with {"file_path":"b1"}',
      "[3 turns remain]",
      "[2 turns remain]",
      "[1 turn remains: tools are withdrawn. Write your final answer now: what you did, what " +
      "you verified, and what is left undone]",
    ]);
    // Only the reply's last result carries the line; the other is the tool's output as is.
    const fourth = bodies[3]!.messages as Sent[];
    assert.equal(fourth.at(-2)!.content, 'Read ran with {"file_path":"a3"}');
    // The history kept (and a follow-up's) holds what was sent.
    assert.match(toolMessages(messages).at(-1)!.content, /\[1 turn remains: /);
    assertEveryCallAnswered(messages);
    assertRemembered(h, messages, 1);
    assert.deepEqual(h.warnings, [
      "max_turns (5) reached: the model wrote this answer in a last turn without tools, so its " +
      "work may be unfinished. Follow up to let it continue",
    ]);
  });
});

Deno.test("turns: far from the limit, tool results are sent as the tools wrote them", async () => {
  await withEmulator({}, async (emu) => {
    const read = testTool("Read", true);
    const h = harness(emu.url, [read]);
    const result = await runLoop(user('@tool Read {"file_path":"x"}\n@reply ok'), h.deps);
    assert.equal(result.ok, true);
    const sent = (emu.chatRequests()[1]!.json as Json).messages as Sent[];
    assert.equal(sent.at(-1)!.content, 'Read ran with {"file_path":"x"}');
    assert.deepEqual(h.warnings, []);
  });
});

Deno.test("turns: max_turns 1 keeps the tools on its only request", async () => {
  await withEmulator({ chatScript: obedient }, async (emu) => {
    const read = testTool("Read", true);
    const result = await runLoop(user("go"), harness(emu.url, [read], { maxTurns: 1 }).deps);
    assert.equal(result.ok, false);
    assert.equal(read.inputs.length, 2);
    assert.ok(Array.isArray((emu.chatRequests()[0]!.json as Json).tools));
  });
});

Deno.test("turns: a run stopped at max_turns keeps what the model wrote, marked partial", async () => {
  // This model calls tools whatever it is offered.
  const stubborn: ChatScript = (view) => ({
    kind: "tool_calls",
    text: `Looked at part ${view.conversationRequestNumber}.`,
    calls: [{ name: "Read", arguments: { file_path: `p${view.conversationRequestNumber}` } }],
  });
  await withEmulator({ chatScript: stubborn }, async (emu) => {
    const read = testTool("Read", true);
    const messages = user("go");
    const result = await runLoop(messages, harness(emu.url, [read], { maxTurns: 3 }).deps);
    assert.equal(result.ok, false);
    assert.match(result.errorText!, /^Stopped after max_turns \(3\)/);
    assert.equal(
      result.text,
      "[partial: stopped at max_turns 3]\n\nLooked at part 1.\n\nLooked at part 2.\n\n" +
        "Looked at part 3.",
    );
    assertEveryCallAnswered(messages);
  });
});

Deno.test("turns: a run stopped during a request (deadline, cancel) keeps the text so far, marked partial", async () => {
  const ac = new AbortController();
  await withEmulator(
    {
      chatScript: (view) =>
        view.conversationRequestNumber === 1
          ? {
            kind: "tool_calls",
            text: "The config lives in a.json; reading it.",
            calls: [{ name: "Read", arguments: { file_path: "a.json" } }],
          }
          : { kind: "hang" },
    },
    async (emu) => {
      const read = testTool("Read", true, () => {
        setTimeout(() => ac.abort(), 100);
        return { text: "{}" };
      });
      const h = harness(emu.url, [read], { signal: ac.signal });
      const result = await runLoop(user("go"), h.deps);
      assert.equal(result.ok, false);
      assert.equal(result.errorText, "Stopped before the model answered");
      assert.equal(
        result.text,
        "[partial: stopped before the model's final answer: the job was cancelled or timed " +
          "out]\n\nThe config lives in a.json; reading it.",
      );
      assert.equal(emu.chatRequests().length, 2);
    },
  );
});

Deno.test("turns: a stop with nothing written leaves the result empty", async () => {
  await withEmulator(
    {
      chatScript: (view) => ({
        kind: "tool_calls",
        calls: [{ name: "Read", arguments: { file_path: `f${view.requestNumber}` } }],
      }),
    },
    async (emu) => {
      const result = await runLoop(
        user("go"),
        harness(emu.url, [testTool("Read", true)], { maxTurns: 2 }).deps,
      );
      assert.equal(result.ok, false);
      assert.equal(result.text, "");
    },
  );
});

Deno.test("turns: a long partial result keeps its newest part and says how much was cut", () => {
  const said = ["a".repeat(MAX_PARTIAL_CHARS), "the newest words"];
  const text = partialText(said, "stopped at max_turns 25");
  const [head, body] = text.split("\n\n", 2);
  assert.equal(head, "[partial: stopped at max_turns 25; the first 18 characters are cut]");
  assert.ok(text.endsWith("the newest words"));
  assert.equal(text.length - head!.length - 2, MAX_PARTIAL_CHARS);
  assert.ok(body!.startsWith("a"));
  assert.equal(partialText(["  ", ""], "x"), "");
});
