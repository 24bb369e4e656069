/**
 * Tool calls a model wrote as text, through the loop: recovered only for offered tools and only
 * where the text is a call, run like structured calls, kept in the history as structured calls
 * with ids (so both chat APIs accept the next request), counted and marked as recovered.
 */
import assert from "node:assert/strict";
import { OllamaChatClient } from "../../../src/backends/ollama/chat.ts";
import type { ChatMessage } from "../../../src/backends/chat_types.ts";
import { runLoop } from "../../../src/engines/native/loop.ts";
import type { JsonSchema } from "../../../src/engines/native/tools/types.ts";
import { startOllamaEmulator, type TextCallStyle } from "../../support/emulator/emulator.ts";
import { TEXT_CALL_STYLES } from "../../support/emulator/text_calls.ts";
import {
  assertEveryCallAnswered,
  assertRemembered,
  harness,
  type Json,
  testTool,
  textFrame,
  toolMessages,
  user,
  withRawServer,
} from "./support/loop_harness.ts";

const READ_SCHEMA: JsonSchema = {
  type: "object",
  properties: {
    file_path: { type: "string" },
    offset: { type: "integer" },
    limit: { type: "integer" },
  },
  required: ["file_path"],
};
const BASH_SCHEMA: JsonSchema = {
  type: "object",
  properties: { command: { type: "string" }, timeout: { type: "number" } },
  required: ["command"],
};

const readTool = () =>
  testTool("Read", true, (i) => ({ text: `contents of ${i.file_path}` }), READ_SCHEMA);
const bashTool = () => testTool("Bash", false, (i) => ({ text: `ran ${i.command}` }), BASH_SCHEMA);

type Assistant = Extract<ChatMessage, { role: "assistant" }>;
const assistants = (messages: readonly ChatMessage[]) =>
  messages.filter((m): m is Assistant => m.role === "assistant");

/** The format text_calls/recover_calls.ts names for each emulated style. */
const FORMAT: Record<string, string> = { "qwen3-coder-bare": "qwen3-coder" };

for (const api of ["openai", "native"] as const) {
  Deno.test(`recovery (${api}): a call written as text in each format runs, and the history carries it as a structured call`, async () => {
    for (const style of TEXT_CALL_STYLES.filter((s): s is TextCallStyle => s !== "structured")) {
      const emu = await startOllamaEmulator({
        models: [{ name: "qwen3:8b", toolCallStyle: style }],
      });
      try {
        const read = readTool();
        const h = harness(emu.url, [read]);
        if (api === "native") {
          h.deps.client = new OllamaChatClient({ baseUrl: emu.url, label: "ollama" });
        }
        const messages = user('@tool Read {"file_path":"notes.md"}\n@reply The notes say hi.');
        const result = await runLoop(messages, h.deps);
        assert.equal(result.ok, true, `${style}: ${result.errorText}`);
        assert.equal(result.text, "The notes say hi.", style);
        assert.deepEqual(read.inputs, [{ file_path: "notes.md" }], style);
        assert.equal(h.toolCalls(), 1, style);
        assert.equal(h.recoveredCalls(), 1, style);

        // Kept as the model meant it: a structured call with an id, answered by that id.
        const [first] = assistants(messages);
        assert.equal(first!.content, "", style);
        assert.equal(first!.tool_calls!.length, 1, style);
        const call = first!.tool_calls![0]!;
        assert.match(call.id, /^call_/);
        assert.deepEqual(call.function, { name: "Read", arguments: '{"file_path":"notes.md"}' });
        assert.deepEqual(toolMessages(messages)[0], {
          role: "tool",
          tool_call_id: call.id,
          name: "Read",
          content: "contents of notes.md",
        });
        assertEveryCallAnswered(messages);
        assertRemembered(h, messages, 1);
        const entry = h.transcript.find((e) => e.kind === "tool_call");
        assert.deepEqual(entry, {
          kind: "tool_call",
          id: call.id,
          name: "Read",
          input: { file_path: "notes.md" },
          recovered: FORMAT[style] ?? style,
        });
        // The server got the call back in its own API's shape, and answered the result.
        const sent = (api === "openai" ? emu.chatRequests() : emu.nativeChatRequests())
          .map((r) => r.json as Json);
        assert.equal(sent.length, 2, style);
        const second = sent[1]!.messages as Json[];
        const back = second.find((m) => m.role === "assistant") as Json;
        const calls = back.tool_calls as Array<{ function: { name: string; arguments: unknown } }>;
        assert.equal(calls[0]!.function.name, "Read", style);
        assert.deepEqual(
          api === "openai" ? JSON.parse(calls[0]!.function.arguments as string) : calls[0]!
            .function.arguments,
          { file_path: "notes.md" },
        );
      } finally {
        await emu.close();
      }
    }
  });
}

Deno.test("recovery: a parameter of Claude Code's tool (description on Bash) is ignored and noted, in every text format as in a structured call", async () => {
  for (const style of TEXT_CALL_STYLES) {
    const emu = await startOllamaEmulator({ models: [{ name: "qwen3:8b", toolCallStyle: style }] });
    try {
      const bash = bashTool();
      const h = harness(emu.url, [bash]);
      const messages = user(
        '@tool Bash {"command": "ls -la", "description": "List the files"}\n@reply Listed.',
      );
      const result = await runLoop(messages, h.deps);
      assert.equal(result.ok, true, `${style}: ${result.errorText}`);
      assert.equal(result.text, "Listed.", style);
      assert.deepEqual(bash.inputs, [{ command: "ls -la", description: "List the files" }], style);
      assert.equal(h.toolCalls(), 1, style);
      assert.equal(h.recoveredCalls(), style === "structured" ? 0 : 1, style);
      const entry = h.transcript.find((e) => e.kind === "tool_call");
      assert.deepEqual(entry?.kind === "tool_call" && entry.ignored, ["description"], style);
      // A label changes nothing the model relies on: its result says nothing more.
      assert.equal(toolMessages(messages)[0]!.content, "ran ls -la", style);
    } finally {
      await emu.close();
    }
  }
});

Deno.test("recovery: an ignored parameter that changes what a call does is told to the model; one no tool takes is still refused", async () => {
  const call = (args: string) =>
    `<tool_call>\n{"name": "Bash", "arguments": ${args}}\n</tool_call>`;
  await withRawServer(
    (n) =>
      n === 1
        ? [textFrame(call('{"command": "make", "run_in_background": true, "colour": "red"}'))]
        : n === 2
        ? [textFrame(call('{"command": "make", "run_in_background": true}'))]
        : [textFrame("built")],
    async (url) => {
      const bash = bashTool();
      const h = harness(url, [bash]);
      const messages = user("build");
      const result = await runLoop(messages, h.deps);
      assert.equal(result.ok, true, result.errorText);
      assert.deepEqual(bash.inputs, [{ command: "make", run_in_background: true }]);
      const [refused, ran] = toolMessages(messages);
      assert.match(refused!.content, /^Error: not run: Bash has no parameter "colour"/);
      assert.equal(
        ran!.content,
        'ran make\nNote: this Bash does not take "run_in_background"; the call ran without it.',
      );
    },
  );
});

Deno.test("recovery: the text around a call stays the reply's content and the transcript's text", async () => {
  const emu = await startOllamaEmulator({
    models: [{ name: "qwen3:8b", toolCallStyle: "hermes" }],
    chatScript: (view) =>
      view.toolResults.length === 0
        ? {
          kind: "tool_calls",
          text: "Let me check the version.",
          calls: [{ name: "Bash", arguments: { command: "node --version" } }],
        }
        : { kind: "text", text: `It is ${view.toolResults[0]!.content}.` },
  });
  try {
    const bash = bashTool();
    const h = harness(emu.url, [bash]);
    const messages = user("which node?");
    const result = await runLoop(messages, h.deps);
    assert.equal(result.text, "It is ran node --version.");
    assert.deepEqual(bash.inputs, [{ command: "node --version" }]);
    assert.equal(assistants(messages)[0]!.content, "Let me check the version.");
    assert.deepEqual(h.transcript.map((e) => e.kind === "text" ? e.text : e.kind), [
      "Let me check the version.",
      "tool_call",
      "tool_result",
      "It is ran node --version.",
    ]);
  } finally {
    await emu.close();
  }
});

Deno.test("recovery: arguments that do not fit the tool go back as an error with the right shape; the corrected call runs", async () => {
  await withRawServer(
    (n) =>
      n === 1
        ? [textFrame('<tool_call>\n{"name": "Read", "arguments": {"fil": "a.txt"}}\n</tool_call>')]
        : n === 2
        ? [
          textFrame(
            '<tool_call>\n{"name": "Read", "arguments": {"file_path": "a.txt"}}\n</tool_call>',
          ),
        ]
        : [textFrame("a.txt holds the answer.")],
    async (url, bodies) => {
      const read = readTool();
      const h = harness(url, [read]);
      const messages = user("read a.txt");
      const result = await runLoop(messages, h.deps);
      assert.equal(result.ok, true);
      assert.equal(result.text, "a.txt holds the answer.");
      assert.deepEqual(read.inputs, [{ file_path: "a.txt" }], "only the corrected call ran");
      const [bad, good] = toolMessages(messages);
      assert.equal(
        bad!.content,
        'Error: not run: Read needs "file_path". Call it again with arguments shaped like ' +
          'Read {"file_path": string, "offset"?: integer, "limit"?: integer}',
      );
      assert.equal(good!.content, "contents of a.txt");
      const results = h.transcript.filter((e) => e.kind === "tool_result");
      assert.deepEqual(results.map((e) => e.kind === "tool_result" && e.isError), [true, false]);
      assert.equal(h.toolCalls(), 2);
      assert.equal(h.recoveredCalls(), 2);
      // The server saw the error as the answer to the first call.
      const second = bodies[1]!.messages as Json[];
      assert.equal(second.at(-1)!.role, "tool");
      assert.match(second.at(-1)!.content as string, /^Error: not run: Read needs "file_path"/);
      assertEveryCallAnswered(messages);
    },
  );
});

Deno.test("recovery: prose that quotes a call is an answer, and nothing runs", async () => {
  const answers = [
    'To read a file, a model writes `<tool_call>{"name": "Read", "arguments": {"file_path": ' +
    '"x"}}</tool_call>` and the server runs it.',
    "The format looks like this:\n\n```json\n" +
    '{"name": "Bash", "arguments": {"command": "rm -rf /"}}\n```',
    'Hermes models wrap calls in tags, e.g. <tool_call>{"name": "Bash", "arguments": ' +
    '{"command": "ls"}}</tool_call> inside a sentence.',
  ];
  for (const answer of answers) {
    await withRawServer(() => [textFrame(answer)], async (url, bodies) => {
      const read = readTool();
      const bash = bashTool();
      const h = harness(url, [read, bash]);
      const result = await runLoop(user("how do text calls look?"), h.deps);
      assert.equal(result.ok, true, answer);
      assert.equal(result.text, answer);
      assert.equal(read.inputs.length + bash.inputs.length, 0, answer);
      assert.equal(h.toolCalls(), 0);
      assert.equal(bodies.length, 1);
    });
  }
});

Deno.test("recovery: a recovered call obeys the same rules as a structured one", async () => {
  await withRawServer(
    (n) =>
      n === 1
        ? [
          textFrame(
            '<tool_call>\n{"name": "Bash", "arguments": {"command": "rm -rf build"}}\n</tool_call>',
          ),
        ]
        : [textFrame("could not delete")],
    async (url) => {
      const bash = bashTool();
      const h = harness(url, [bash], { disallowed: ["Bash(rm *)"] });
      const messages = user("clean");
      const result = await runLoop(messages, h.deps);
      assert.equal(result.ok, true);
      assert.deepEqual(bash.inputs, []);
      assert.deepEqual(result.denials, [{ tool: "Bash", detail: "rm -rf build" }]);
      assert.equal(toolMessages(messages)[0]!.content, "Command refused by the rule Bash(rm *)");
    },
  );
});

Deno.test("recovery: a call to a tool this run does not offer is answered with the tools there are, and runs nothing", async () => {
  const text = '<tool_call>\n{"name": "Write", "arguments": {"file_path": "x", "content": "y"}}\n' +
    "</tool_call>";
  await withRawServer(
    (n) => n === 1 ? [textFrame(text)] : [textFrame("I cannot write in plan mode.")],
    async (url, bodies) => {
      const read = readTool();
      const write = testTool("Write", false, () => ({ text: "wrote" }), {
        type: "object",
        properties: { file_path: { type: "string" }, content: { type: "string" } },
        required: ["file_path", "content"],
      });
      const h = harness(url, [read, write], { mode: "plan" });
      const messages = user("go");
      const result = await runLoop(messages, h.deps);
      assert.equal(result.ok, true);
      assert.equal(result.text, "I cannot write in plan mode.");
      assert.equal(write.inputs.length, 0);
      // Not taken for the answer: the model was told what exists, as a tool error.
      assert.equal(bodies.length, 2);
      assert.equal(
        toolMessages(messages)[0]!.content,
        'Error: not run: there is no tool "Write" here. The tools are: Read {"file_path": ' +
          'string, "offset"?: integer, "limit"?: integer}',
      );
      assertEveryCallAnswered(messages);
    },
  );
});

Deno.test("recovery: a call written as text in the last, tool-less turn is not run", async () => {
  await withRawServer(
    () => [
      textFrame(
        'Checking.\n<tool_call>\n{"name": "Read", "arguments": {"file_path": "z"}}\n</tool_call>',
      ),
    ],
    async (url) => {
      const read = readTool();
      const messages = user("go");
      const result = await runLoop(messages, harness(url, [read], { maxTurns: 2 }).deps);
      assert.equal(result.ok, false);
      assert.equal(read.inputs.length, 1, "the first turn's call ran, the last turn's did not");
      assert.equal(toolMessages(messages).at(-1)!.content, "Not run: max_turns reached");
      assert.equal(result.text, "[partial: stopped at max_turns 2]\n\nChecking.\n\nChecking.");
      assertEveryCallAnswered(messages);
    },
  );
});
