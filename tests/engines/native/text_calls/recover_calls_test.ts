import assert from "node:assert/strict";
import { recoverTextCalls } from "../../../../src/engines/native/text_calls/recover_calls.ts";
import { CORPUS_TOOLS, TEXT_CALL_CORPUS } from "../../../support/text_call_corpus.ts";

const offered = (names: readonly string[]) => CORPUS_TOOLS.filter((t) => names.includes(t.name));

Deno.test("recoverTextCalls: every reply of the labelled corpus is classified as labelled", () => {
  assert.ok(TEXT_CALL_CORPUS.length >= 50);
  const wrong: string[] = [];
  for (const c of TEXT_CALL_CORPUS) {
    const got = recoverTextCalls(c.text, offered(c.tools));
    const calls = got?.calls.map((x) => ({ name: x.name, arguments: x.arguments })) ?? [];
    if (JSON.stringify(calls) !== JSON.stringify(c.calls)) wrong.push(c.id);
    // A call counts, or the reply is text: no half measures on the labelled replies.
    if (got?.calls.some((x) => x.error)) wrong.push(`${c.id} (argument error)`);
  }
  assert.deepEqual(wrong, []);
});

Deno.test("recoverTextCalls: the format and the words around the call are kept apart", () => {
  const got = recoverTextCalls(
    'Checking the tree.\n<tool_call>\n{"name": "Bash", "arguments": {"command": "ls"}}\n</tool_call>',
    offered(["Bash"]),
  );
  assert.deepEqual(got, {
    calls: [{ name: "Bash", arguments: { command: "ls" }, format: "hermes" }],
    text: "Checking the tree.",
  });
});

Deno.test("recoverTextCalls: malformed JSON is repaired", () => {
  const got = recoverTextCalls(
    "<tool_call>\n{'name': 'Read', 'arguments': {'file_path': 'src/a.ts',}}\n</tool_call>",
    offered(["Read"]),
  );
  assert.deepEqual(got?.calls, [{
    name: "Read",
    arguments: { file_path: "src/a.ts" },
    format: "hermes",
  }]);
});

Deno.test("recoverTextCalls: arguments that fail the schema come back as an error to correct", () => {
  const got = recoverTextCalls(
    '<tool_call>\n{"name": "Read", "arguments": {"path": "a.ts"}}\n</tool_call>',
    offered(["Read"]),
  );
  assert.equal(got?.calls.length, 1);
  assert.equal(got?.calls[0]?.error, 'Read needs "file_path"');
});

Deno.test("recoverTextCalls: a call to a tool not offered, or no tools at all, is text", () => {
  const text = '<tool_call>\n{"name": "Bash", "arguments": {"command": "rm -rf /"}}\n</tool_call>';
  assert.equal(recoverTextCalls(text, offered(["Read", "Grep"])), undefined);
  assert.equal(recoverTextCalls(text, []), undefined);
});
