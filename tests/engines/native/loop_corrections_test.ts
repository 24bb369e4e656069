/**
 * Tool calls written as text that cannot run, through the loop: never the final answer. The
 * model is answered with what was wrong and the tools there are, and may try again; past the
 * bound the job fails with `tool_call_unparsed:`, the raw replies kept in the transcript.
 */
import assert from "node:assert/strict";
import { runLoop } from "../../../src/engines/native/loop.ts";
import type { JsonSchema } from "../../../src/engines/native/tools/types.ts";
import {
  assertEveryCallAnswered,
  harness,
  type Json,
  testTool,
  textFrame,
  toolMessages,
  user,
  withRawServer,
} from "./support/loop_harness.ts";

const BASH_SCHEMA: JsonSchema = {
  type: "object",
  properties: { command: { type: "string" }, timeout: { type: "number" } },
  required: ["command"],
};
const bashTool = () => testTool("Bash", false, (i) => ({ text: `ran ${i.command}` }), BASH_SCHEMA);

/** DeepSeek's begin token repeated with nothing after it (sgl-project/sglang#5224). */
const DEGENERATE = "<｜tool▁calls▁begin｜><｜tool▁calls▁begin｜><｜tool▁calls▁begin｜>MMMMMMMM";

const lastUser = (body: Json) => {
  const messages = body.messages as Json[];
  return messages.at(-1)!;
};

Deno.test("corrections: a reply that looks like a call nothing can read is answered with what was wrong, and the answer after it completes the job", async () => {
  await withRawServer(
    (n) => n === 1 ? [textFrame(DEGENERATE)] : [textFrame("Nothing to do: the tree is clean.")],
    async (url, bodies) => {
      const bash = bashTool();
      const h = harness(url, [bash]);
      const messages = user("check the tree");
      const result = await runLoop(messages, h.deps);
      assert.equal(result.ok, true, result.errorText);
      assert.equal(result.text, "Nothing to do: the tree is clean.");
      assert.equal(bodies.length, 2, "the reply was not taken for the answer");
      // The model was told, in the next request, what was wrong and which tools exist.
      const correction = lastUser(bodies[1]!);
      assert.equal(correction.role, "user");
      assert.match(
        correction.content as string,
        /^\[ollama-delegate\] Your last reply was not run: it looks like a tool call written as text \(the special text "<\|tool_calls_begin\|>" without a call that can be read\), and no tool ran\. The tools are: Bash \{"command": string, "timeout"\?: number\}\./,
      );
      // Its raw reply stays in the history and the transcript, as written.
      const second = bodies[1]!.messages as Json[];
      assert.deepEqual(second.at(-2), { role: "assistant", content: DEGENERATE });
      assert.ok(h.transcript.some((e) => e.kind === "text" && e.text === DEGENERATE));
      assert.ok(h.transcript.some((e) =>
        e.kind === "tool_result" && e.isError &&
        e.name === "ollama-delegate" && e.text === correction.content
      ));
      assert.equal(bash.inputs.length, 0);
    },
  );
});

Deno.test("corrections: a model that keeps writing calls that cannot run fails with tool_call_unparsed after three replies, raw text in the transcript", async () => {
  const replies = [
    DEGENERATE,
    "[Calling tool: execute_code with arguments: {...}]",
    '<tool_call>\n{"name": "Bash", "arguments": {"command": "ls',
  ];
  await withRawServer((n) => [textFrame(replies[n - 1] ?? "never asked")], async (url, bodies) => {
    const bash = bashTool();
    const h = harness(url, [bash]);
    const messages = user("check the tree");
    const result = await runLoop(messages, h.deps);
    assert.equal(result.ok, false);
    assert.equal(bodies.length, 3, "two corrections, then the job stops");
    assert.match(
      result.errorText ?? "",
      /^tool_call_unparsed: the model wrote 3 replies in a row that look like tool calls written as text but cannot be run \(last: the call was cut off before its end\)/,
    );
    assert.match(
      result.text,
      /^\[partial: stopped: the model's tool calls written as text could not be run\]/,
    );
    for (const raw of replies.slice(0, 2)) {
      assert.ok(h.transcript.some((e) => e.kind === "text" && e.text === raw), raw);
    }
    assert.equal(bash.inputs.length, 0);
    assertEveryCallAnswered(messages);
  });
});

Deno.test("corrections: calls to tools that do not exist count too; one that runs starts the count again", async () => {
  const unknown = '<tool_call>\n{"name": "calculator", "arguments": {"expression": "2+3"}}\n' +
    "</tool_call>";
  const good = '<tool_call>\n{"name": "Bash", "arguments": {"command": "echo 5"}}\n</tool_call>';
  const script = [unknown, unknown, good, unknown, unknown, "It is 5."];
  await withRawServer((n) => [textFrame(script[n - 1] ?? "never asked")], async (url, bodies) => {
    const bash = bashTool();
    const h = harness(url, [bash]);
    const messages = user("what is 2+3?");
    const result = await runLoop(messages, h.deps);
    assert.equal(result.ok, true, result.errorText);
    assert.equal(result.text, "It is 5.");
    assert.equal(bodies.length, 6);
    assert.deepEqual(bash.inputs, [{ command: "echo 5" }]);
    const errors = toolMessages(messages).filter((m) => m.content?.startsWith("Error:"));
    assert.equal(errors.length, 4);
    assert.match(
      errors[0]!.content!,
      /^Error: not run: there is no tool "calculator" here\. The tools are: Bash \{"command": string, "timeout"\?: number\}$/,
    );
    assertEveryCallAnswered(messages);
  });
  await withRawServer(() => [textFrame(unknown)], async (url, bodies) => {
    const result = await runLoop(user("what is 2+3?"), harness(url, [bashTool()]).deps);
    assert.equal(result.ok, false);
    assert.equal(bodies.length, 3);
    assert.match(
      result.errorText ?? "",
      /^tool_call_unparsed: .*\(last: there is no tool "calculator" here\)/,
    );
  });
});

Deno.test("corrections: an unreadable call in the last, tool-less request fails the job instead of being its answer", async () => {
  await withRawServer(
    (n) =>
      n === 1
        ? [textFrame('<tool_call>\n{"name": "Bash", "arguments": {"command": "ls"}}\n</tool_call>')]
        : [textFrame(DEGENERATE)],
    async (url) => {
      const result = await runLoop(user("go"), harness(url, [bashTool()], { maxTurns: 2 }).deps);
      assert.equal(result.ok, false);
      assert.match(
        result.errorText ?? "",
        /^tool_call_unparsed: in its last request \(max_turns 2\) the model wrote a tool call as text that cannot be run/,
      );
    },
  );
});
