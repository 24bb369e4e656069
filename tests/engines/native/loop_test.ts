import { withEmulator } from "../../support/emulator/emulator.ts";
import assert from "node:assert/strict";
import { type LoopResult, MAX_TURNS_CAP, runLoop } from "../../../src/engines/native/loop.ts";
import type { ChatScript } from "../../support/emulator/emulator.ts";
import {
  assertEveryCallAnswered,
  assertRemembered,
  callsFrame,
  emulatedPromptTokens,
  harness,
  type Json,
  testTool,
  textFrame,
  toolMessages,
  user,
  withRawServer,
} from "./support/loop_harness.ts";

// ---------------------------------------------------------------------------------------------

Deno.test("runLoop: a reply without tool calls ends the run with its text and usage", async () => {
  await withEmulator({}, async (emu) => {
    const read = testTool("Read", true);
    const h = harness(emu.url, [read]);
    const messages = user("@reply All done here.");
    const result = await runLoop(messages, h.deps);
    assert.equal(result.ok, true);
    assert.equal(result.text, "All done here.");
    assert.equal(result.errorText, undefined);
    assert.equal(result.turns, 1);
    assert.deepEqual(result.denials, []);
    assert.equal(h.toolCalls(), 0);
    assert.deepEqual(messages.at(-1), { role: "assistant", content: "All done here." });
    assertRemembered(h, messages, 1);
    assert.deepEqual(h.activities, [{ kind: "text", text: "All done here." }]);
    const [req] = emu.chatRequests();
    const body = req!.json as Json;
    assert.equal(body.model, "qwen3:8b");
    assert.deepEqual(
      (body.tools as Array<{ function: { name: string } }>).map((t) => t.function.name),
      [
        "Read",
      ],
    );
    assert.equal(result.inputTokens, emulatedPromptTokens(body));
    assert.equal(result.outputTokens, Math.ceil("All done here.".length / 4));
  });
});

Deno.test("runLoop: no tools offered means no tools field in the request", async () => {
  await withEmulator({}, async (emu) => {
    const h = harness(emu.url, [testTool("Read", true)], { allowed: [] });
    const result = await runLoop(user("@reply plain"), h.deps);
    assert.equal(result.text, "plain");
    assert.equal((emu.chatRequests()[0]!.json as Json).tools, undefined);
  });
});

Deno.test("runLoop: runs the calls in order and feeds each result back as a tool message", async () => {
  await withEmulator({
    chatScript: (view) =>
      view.toolResults.length === 0
        ? {
          kind: "tool_calls",
          text: "Looking.",
          calls: [
            { name: "Read", arguments: { file_path: "a.ts" } },
            { name: "Grep", arguments: { pattern: "TODO", path: "src" } },
          ],
        }
        : { kind: "text", text: "Found it." },
  }, async (emu) => {
    const order: string[] = [];
    const read = testTool("Read", true, (i) => {
      order.push("Read");
      return { text: `contents of ${i.file_path}` };
    });
    const grep = testTool("Grep", true, () => {
      order.push("Grep");
      return { text: "src/x.ts:3: TODO" };
    });
    const h = harness(emu.url, [read, grep]);
    const messages = user("find the TODO");
    const result = await runLoop(messages, h.deps);
    assert.equal(result.ok, true);
    assert.equal(result.text, "Found it.");
    assert.equal(result.turns, 2);
    assert.deepEqual(order, ["Read", "Grep"]);
    assert.deepEqual(read.inputs, [{ file_path: "a.ts" }]);
    assert.deepEqual(grep.inputs, [{ pattern: "TODO", path: "src" }]);
    assert.equal(h.toolCalls(), 2);
    assertEveryCallAnswered(messages);
    assertRemembered(h, messages, 1);

    // What the server got back on the second request.
    const second = emu.chatRequests()[1]!.json as { messages: Json[] };
    const assistant = second.messages[1] as { tool_calls: Array<{ id: string }> };
    assert.deepEqual(second.messages.slice(2), [
      {
        role: "tool",
        tool_call_id: assistant.tool_calls[0]!.id,
        name: "Read",
        content: "contents of a.ts",
      },
      {
        role: "tool",
        tool_call_id: assistant.tool_calls[1]!.id,
        name: "Grep",
        content: "src/x.ts:3: TODO",
      },
    ]);
    const bodies = emu.chatRequests().map((r) => r.json as Json);
    assert.equal(result.inputTokens, bodies.reduce((n, b) => n + emulatedPromptTokens(b), 0));
    assert.ok(result.outputTokens > 0);

    assert.deepEqual(
      h.activities.map((a) => a.kind === "tool" ? `${a.name} ${a.detail}` : a.kind),
      [
        "text",
        "Read a.ts",
        "Grep TODO in src",
        "text",
      ],
    );
    assert.deepEqual(h.transcript.map((e) => e.kind), [
      "text",
      "tool_call",
      "tool_result",
      "tool_call",
      "tool_result",
      "text",
    ]);
  });
});

Deno.test("runLoop: a tool's error result and a thrown error reach the model as errors", async () => {
  await withEmulator({}, async (emu) => {
    const read = testTool("Read", true, () => ({ text: "Error: no such file", isError: true }));
    const grep = testTool("Grep", true, () => {
      throw new Error("disk on fire");
    });
    const h = harness(emu.url, [read, grep]);
    const messages = user('@tool Read {"file_path":"x"}\n@tool Grep {"pattern":"y"}\n@reply ok');
    const result = await runLoop(messages, h.deps);
    assert.equal(result.ok, true);
    assert.deepEqual(toolMessages(messages).map((m) => m.content), [
      "Error: no such file",
      "Error: Grep failed: disk on fire",
    ]);
    assert.deepEqual(h.activities.filter((a) => a.kind === "error"), [
      { kind: "error", text: "Read: Error: no such file" },
      { kind: "error", text: "Grep: Error: Grep failed: disk on fire" },
    ]);
    assert.deepEqual(
      h.transcript.filter((e) => e.kind === "tool_result").map((e) =>
        e.kind === "tool_result" && e.isError
      ),
      [true, true],
    );
  });
});

// ---------------------------------------------------------------------------------------------
// max_turns

/** Always another call, each with new arguments: never a loop, never done. */
const endless: ChatScript = (view) => ({
  kind: "tool_calls",
  calls: [{ name: "Read", arguments: { file_path: `f${view.requestNumber}.txt` } }],
});

Deno.test("runLoop: stops after max_turns model requests; a call in the last, tool-less one is not run", async () => {
  await withEmulator({ chatScript: endless }, async (emu) => {
    const read = testTool("Read", true);
    const h = harness(emu.url, [read], { maxTurns: 3 });
    const messages = user("go");
    const result = await runLoop(messages, h.deps);
    assert.equal(result.ok, false);
    assert.equal(result.turns, 3);
    assert.equal(
      result.errorText,
      "Stopped after max_turns (3) model requests without a final answer: the last request " +
        "went without tools and the model still called one. Follow up to let it continue, or " +
        "raise max_turns (at most 100)",
    );
    assert.equal(emu.chatRequests().length, 3);
    assert.equal(read.inputs.length, 2, "the call made in the tool-less last turn is not run");
    assert.equal(toolMessages(messages).at(-1)!.content, "Not run: max_turns reached");
    assertEveryCallAnswered(messages);
    assertRemembered(h, messages, 1);
  });
});

Deno.test("runLoop: max_turns below 1 means 1, above the cap means the cap", async () => {
  await withEmulator({ chatScript: endless }, async (emu) => {
    const low = await runLoop(
      user("low"),
      harness(emu.url, [testTool("Read", true)], { maxTurns: 0 }).deps,
    );
    assert.equal(low.turns, 1);
    assert.match(low.errorText!, /max_turns \(1\)/);
    const before = emu.chatRequests().length;
    const high = await runLoop(
      user("high"),
      harness(emu.url, [testTool("Read", true)], { maxTurns: 1000 }).deps,
    );
    assert.equal(high.turns, MAX_TURNS_CAP);
    assert.equal(emu.chatRequests().length - before, MAX_TURNS_CAP);
    assert.match(high.errorText!, /max_turns \(100\)/);
  });
});

// ---------------------------------------------------------------------------------------------
// Loop detection

Deno.test("runLoop: the same call with the same arguments 3 times in a row stops the run", async () => {
  // Key order and spacing differ between the calls: compared by value.
  const args = [{ file_path: "a.txt", limit: 5 }, { limit: 5, file_path: "a.txt" }];
  await withEmulator({
    chatScript: (view) => ({
      kind: "tool_calls",
      calls: [{ name: "Read", arguments: args[view.requestNumber % 2]! }],
    }),
  }, async (emu) => {
    const read = testTool("Read", true);
    const h = harness(emu.url, [read]);
    const messages = user("go");
    const result = await runLoop(messages, h.deps);
    assert.equal(result.ok, false);
    assert.equal(
      result.errorText,
      "Stopped: the model called Read with the same arguments 3 times in a row (loop detected)",
    );
    assert.equal(emu.chatRequests().length, 3);
    assert.equal(read.inputs.length, 2, "the third call is not run");
    assert.deepEqual(messages.at(-1), {
      role: "tool",
      tool_call_id: (messages.at(-2) as { tool_calls: Array<{ id: string }> }).tool_calls[0]!.id,
      name: "Read",
      content: "Not run: loop detected",
    });
    assertEveryCallAnswered(messages);
    assertRemembered(h, messages, 1);
  });
});

Deno.test("runLoop: a repeated call within one reply stops there; the rest is answered too", async () => {
  const a = { name: "Read", arguments: { file_path: "a" } };
  await withEmulator({
    chatScript: () => ({
      kind: "tool_calls",
      calls: [a, a, a, { name: "Glob", arguments: { pattern: "*" } }],
    }),
  }, async (emu) => {
    const read = testTool("Read", true);
    const glob = testTool("Glob", true);
    const h = harness(emu.url, [read, glob]);
    const messages = user("go");
    const result = await runLoop(messages, h.deps);
    assert.match(result.errorText!, /called Read with the same arguments 3 times/);
    assert.equal(read.inputs.length, 2);
    assert.equal(glob.inputs.length, 0);
    assert.deepEqual(toolMessages(messages).map((m) => m.content.startsWith("Not run")), [
      false,
      false,
      true,
      true,
    ]);
    assertEveryCallAnswered(messages);
  });
});

Deno.test("runLoop: alternating or changing calls are not a loop", async () => {
  await withEmulator({
    chatScript: (view) => ({
      kind: "tool_calls",
      calls: [{ name: "Read", arguments: { file_path: view.requestNumber % 2 ? "a" : "b" } }],
    }),
  }, async (emu) => {
    const read = testTool("Read", true);
    const result = await runLoop(user("go"), harness(emu.url, [read], { maxTurns: 6 }).deps);
    assert.match(result.errorText!, /^Stopped after max_turns \(6\)/);
    // Five run; the sixth request went without tools.
    assert.equal(read.inputs.length, 5);
  });
});

Deno.test("runLoop: the same assistant text twice in a row stops the run", async () => {
  await withEmulator({
    chatScript: (view) => ({
      kind: "tool_calls",
      text: "Let me check the file.",
      calls: [{ name: "Read", arguments: { file_path: `f${view.requestNumber}` } }],
    }),
  }, async (emu) => {
    const read = testTool("Read", true);
    const h = harness(emu.url, [read]);
    const messages = user("go");
    const result = await runLoop(messages, h.deps);
    assert.equal(result.ok, false);
    assert.equal(
      result.errorText,
      'Stopped: the model gave the same reply twice in a row (loop detected): "Let me check the file."',
    );
    assert.equal(emu.chatRequests().length, 2);
    assert.equal(read.inputs.length, 1, "the second reply's call is not run");
    assert.equal(toolMessages(messages).at(-1)!.content, "Not run: loop detected");
    assertEveryCallAnswered(messages);
    assertRemembered(h, messages, 1);
  });
});

// ---------------------------------------------------------------------------------------------
// Refusals and bad arguments

Deno.test("runLoop: a tool the mode does not offer is refused, recorded as a denial, not run", async () => {
  await withEmulator({}, async (emu) => {
    const read = testTool("Read", true);
    const write = testTool("Write", false);
    const h = harness(emu.url, [read, write], { mode: "plan" });
    const messages = user('@tool Write {"file_path":"x.txt","content":"hi"}');
    const result = await runLoop(messages, h.deps);
    assert.equal(result.ok, true);
    assert.equal(write.inputs.length, 0);
    assert.deepEqual(result.denials, [{ tool: "Write", detail: "x.txt" }]);
    const [answer] = toolMessages(messages);
    assert.equal(
      answer!.content,
      'Tool "Write" is not available in this run (permission mode plan). Available: Read',
    );
    // The emulator's final text echoes the tool result it got.
    assert.match(result.text, /^done: Tool "Write" is not available/);
    assert.equal(h.toolCalls(), 1);
    const offered =
      (emu.chatRequests()[0]!.json as { tools: Array<{ function: { name: string } }> })
        .tools.map((t) => t.function.name);
    assert.deepEqual(offered, ["Read"]);
  });
});

Deno.test("runLoop: a Bash command refused by a rule is a denial with the command", async () => {
  await withEmulator({}, async (emu) => {
    const bash = testTool("Bash", false);
    const h = harness(emu.url, [bash], { disallowed: ["Bash(rm *)"] });
    const messages = user("@bash rm -rf build\n@bash ls\n@reply ok");
    const result = await runLoop(messages, h.deps);
    assert.equal(result.ok, true);
    assert.deepEqual(result.denials, [{ tool: "Bash", detail: "rm -rf build" }]);
    assert.deepEqual(bash.inputs, [{ command: "ls" }]);
    assert.deepEqual(toolMessages(messages).map((m) => m.content), [
      "Command refused by the rule Bash(rm *)",
      'Bash ran with {"command":"ls"}',
    ]);
  });
});

Deno.test("runLoop: arguments that are not a JSON object are answered with an error, not run", async () => {
  await withRawServer(
    (n) =>
      n === 1
        ? [callsFrame([
          ["c1", "Read", '{"file_path": "a'],
          ["c2", "Read", "[1, 2]"],
          ["c3", "Read", ""],
        ])]
        : [textFrame("ok")],
    async (url, bodies) => {
      const read = testTool("Read", true);
      const h = harness(url, [read]);
      const messages = user("go");
      const result = await runLoop(messages, h.deps);
      assert.equal(result.ok, true);
      assert.deepEqual(read.inputs, [{}], "only the empty arguments (= {}) ran");
      const answers = toolMessages(messages);
      assert.deepEqual(answers.map((m) => m.tool_call_id), ["c1", "c2", "c3"]);
      assert.match(answers[0]!.content, /^Error: the arguments of Read are not valid JSON \(/);
      assert.match(answers[0]!.content, /Call it again with a JSON object$/);
      assert.match(answers[1]!.content, /\(arguments must be a JSON object\)/);
      assert.equal(answers[2]!.content, "Read ran with {}");
      assert.ok(h.activities.some((a) => a.kind === "tool" && a.detail === "(bad arguments)"));
      assert.deepEqual(result.denials, []);
      assert.equal(h.toolCalls(), 3);
      // The history sent back is valid: the server saw all three answers.
      assert.equal((bodies[1]!.messages as Json[]).filter((m) => m.role === "tool").length, 3);
    },
  );
});

// ---------------------------------------------------------------------------------------------
// Cancel

Deno.test("runLoop: a cancel during a tool answers the remaining calls and makes no request", async () => {
  const ac = new AbortController();
  await withEmulator({
    chatScript: () => ({
      kind: "tool_calls",
      calls: [
        { name: "Read", arguments: { file_path: "a" } },
        { name: "Glob", arguments: { pattern: "*" } },
      ],
    }),
  }, async (emu) => {
    const read = testTool("Read", true, () => {
      ac.abort();
      return { text: "read a" };
    });
    const glob = testTool("Glob", true);
    const h = harness(emu.url, [read, glob], { signal: ac.signal });
    const messages = user("go");
    const result: LoopResult = await runLoop(messages, h.deps);
    assert.equal(result.ok, false);
    assert.equal(glob.inputs.length, 0);
    assert.deepEqual(toolMessages(messages).map((m) => m.content), [
      "read a",
      "Not run: the job was stopped",
    ]);
    assert.equal(emu.chatRequests().length, 1);
    assertEveryCallAnswered(messages);
    assertRemembered(h, messages, 1);
  });
});

Deno.test("runLoop: a cancel during the model request ends the run at once", async () => {
  await withEmulator({}, async (emu) => {
    const ac = new AbortController();
    const h = harness(emu.url, [testTool("Read", true)], { signal: ac.signal });
    setTimeout(() => ac.abort(), 100);
    const started = performance.now();
    const result = await runLoop(user("@hang"), h.deps);
    assert.ok(performance.now() - started < 2000);
    assert.equal(result.ok, false);
    assert.equal(result.errorText, "Stopped before the model answered");
    assert.equal(emu.chatRequests().length, 1);
  });
});
