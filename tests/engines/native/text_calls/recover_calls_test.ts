import assert from "node:assert/strict";
import { recoverTextCalls } from "../../../../src/engines/native/text_calls/recover_calls.ts";
import { CORPUS_TOOLS, TEXT_CALL_CORPUS } from "../../../support/text_call_corpus.ts";

const offered = (names: readonly string[]) => CORPUS_TOOLS.filter((t) => names.includes(t.name));

Deno.test("recoverTextCalls: every reply of the labelled corpus is classified as labelled", () => {
  assert.ok(TEXT_CALL_CORPUS.length >= 50);
  const wrong: string[] = [];
  for (const c of TEXT_CALL_CORPUS) {
    const got = recoverTextCalls(c.text, offered(c.tools));
    const runs = got?.calls.filter((x) => !x.error) ?? [];
    const calls = runs.map((x) => ({ name: x.name, arguments: x.arguments }));
    if (JSON.stringify(calls) !== JSON.stringify(c.calls)) wrong.push(c.id);
    // A call runs, is refused as labelled, or the reply is text: nothing else.
    const refused = got?.calls.filter((x) => x.error).map((x) => x.name) ?? [];
    if (JSON.stringify(refused) !== JSON.stringify(c.refused ?? [])) {
      wrong.push(`${c.id} (refused)`);
    }
    if (got?.unrun) wrong.push(`${c.id} (unrun: ${got.unrun})`);
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
    '<tool_call>\n{"name": "Read", "arguments": {"fil": "a.ts"}}\n</tool_call>',
    offered(["Read"]),
  );
  assert.equal(got?.calls.length, 1);
  assert.equal(got?.calls[0]?.error, 'Read needs "file_path"');
});

Deno.test("recoverTextCalls: a call to a tool not offered is refused with an error; with no tools at all it is text", () => {
  const text = '<tool_call>\n{"name": "Bash", "arguments": {"command": "rm -rf /"}}\n</tool_call>';
  assert.deepEqual(recoverTextCalls(text, offered(["Read", "Grep"]))?.calls, [{
    name: "Bash",
    arguments: { command: "rm -rf /" },
    format: "hermes",
    error: 'there is no tool "Bash" here',
  }]);
  assert.equal(recoverTextCalls(text, []), undefined);
});

Deno.test("recoverTextCalls: tool names letter case aside, and the parameter names small models use, each noted", () => {
  const got = recoverTextCalls(
    '<tool_call>\n{"name": "bash", "arguments": {"cmd": "ls"}}\n</tool_call>\n' +
      '<tool_call>\n{"name": "READ", "arguments": {"filePath": "a.ts", "limit": "5"}}\n' +
      "</tool_call>",
    offered(["Read", "Bash"]),
  );
  assert.deepEqual(got?.calls, [
    {
      name: "Bash",
      arguments: { command: "ls" },
      format: "hermes",
      mapped: ["bash -> Bash", "cmd -> command"],
    },
    {
      name: "Read",
      arguments: { file_path: "a.ts", limit: "5" },
      format: "hermes",
      error: 'Read: "limit" must be an integer',
      mapped: ["READ -> Read", "filePath -> file_path"],
    },
  ]);
});

Deno.test("recoverTextCalls: a reply that looks like a call and holds none that can be read is unrun, with what was seen", () => {
  const cases: Array<[string, RegExp]> = [
    [
      "<｜tool▁calls▁begin｜><｜tool▁calls▁begin｜><｜tool▁calls▁begin｜>MMMMMMMM",
      /tool_calls_begin/,
    ],
    ["[Calling tool: execute_code with arguments: {...}]", /\[Calling tool/],
    ['{"name": "Bash", "arguments": {"command": "ls', /cut off/],
    [
      '<|channel|>commentary to=functions.Bash <|constrain|>json<|message|>{"command": "ls',
      /cut off/,
    ],
  ];
  for (const [text, reason] of cases) {
    const got = recoverTextCalls(text, offered(["Read", "Bash"]));
    const why = got?.unrun ?? got?.calls[0]?.error ?? "";
    assert.match(why, reason, text);
    assert.ok(!got?.calls.some((c) => !c.error), `${text}: nothing runs`);
  }
});
