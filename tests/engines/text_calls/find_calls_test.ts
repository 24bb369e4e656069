/**
 * The reading of tool calls written as text that both engines share: each format, what is
 * never a call (code, thinking, prose), the order of several calls, and the cost on hostile
 * input (4 MB replies shaped to make a naive reader quadratic).
 */
import assert from "node:assert/strict";
import process from "node:process";
import { findTextCalls, MAX_READ_CHARS } from "../../../src/engines/text_calls/find_calls.ts";
import { unrunCall } from "../../../src/engines/text_calls/unrun_call.ts";

const TOOLS = ["Read", "Write", "Edit", "Glob", "Grep", "Bash"];

const calls = (text: string) =>
  findTextCalls(text, TOOLS).blocks.flatMap((b) =>
    b.calls.map((c) => ({ format: b.format, name: c.name, args: c.args, problem: c.problem }))
  );

Deno.test("findTextCalls: the formats without a sample in the real corpus", () => {
  const cases: Array<[string, string, string, unknown]> = [
    [
      "kimi-k2",
      "Let me read that.<|tool_calls_section_begin|> <|tool_call_begin|> functions.Read:0 " +
      '<|tool_call_argument_begin|> {"file_path": "a.ts"} <|tool_call_end|> <|tool_calls_section_end|>',
      "Read",
      { file_path: "a.ts" },
    ],
    [
      "deepseek",
      '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>Bash<｜tool▁sep｜>{"command": "ls"}' +
      "<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
      "Bash",
      { command: "ls" },
    ],
    [
      "glm",
      "<tool_call>Grep\n<arg_key>pattern</arg_key>\n<arg_value>TODO</arg_value>\n</tool_call>",
      "Grep",
      { pattern: "TODO" },
    ],
    [
      "harmony",
      '<|start|>assistant to=functions.Read<|channel|>commentary json<|message|>{"file_path": ' +
      '"b.ts"}<|call|>',
      "Read",
      { file_path: "b.ts" },
    ],
    ["qwen3-coder", '<function=Bash>{"command": "pwd"}</function>', "Bash", { command: "pwd" }],
    ["hermes", '<tools>\n{"name": "Glob", "arguments": {"pattern": "*.md"}}\n</tools>', "Glob", {
      pattern: "*.md",
    }],
    ["bash-line", "bash\nnpm test -- --watch=false", "Bash", {
      command: "npm test -- --watch=false",
    }],
    ["mistral", '[TOOL_CALLS]Read[CALL_ID]a1b2c3d4e[ARGS]{"file_path": "c.ts"}', "Read", {
      file_path: "c.ts",
    }],
    ["gemma4", 'call:Bash{command:<|"|>ls -la<|"|>}', "Bash", { command: "ls -la" }],
  ];
  for (const [format, text, name, args] of cases) {
    assert.deepEqual(calls(text), [{ format, name, args, problem: undefined }], text);
  }
});

Deno.test("findTextCalls: a call in thinking, code or the middle of prose is no call", () => {
  const call = '<tool_call>\n{"name": "Bash", "arguments": {"command": "rm -rf /"}}\n</tool_call>';
  for (
    const text of [
      `<think>\nI could run\n${call}\nbut I will not.\n</think>\n\nThe tree is clean.`,
      `Thinking about it\n${call}\n</think>\nNo need to run anything.`,
      `<|channel|>analysis<|message|>maybe ${call}<|end|><|start|>assistant<|channel|>final<|message|>Done.`,
      `<|channel>thought\n${call}\n<channel|>Done.`,
      "```\n" + call + "\n```\n\nThat is the format.",
      "Run `" + call.replaceAll("\n", " ") + "` to see it.",
      `A model writes ${call.replaceAll("\n", " ")} to call a tool.`,
    ]
  ) {
    const scan = findTextCalls(text, TOOLS);
    assert.deepEqual(scan, { blocks: [] }, text);
    assert.equal(unrunCall(text, TOOLS), undefined, text);
  }
});

Deno.test("findTextCalls: the call after thinking that planned it counts once; several calls keep their order across formats", () => {
  const planned = '<think>I will call <tool_call>{"name": "Read", "arguments": {"file_path": ' +
    '"x"}}</tool_call></think>\n<tool_call>\n{"name": "Read", "arguments": {"file_path": "y"}}\n' +
    "</tool_call>";
  assert.deepEqual(calls(planned).map((c) => c.args), [{ file_path: "y" }]);
  const mixed = "First the list, then the file.\n" +
    "<function=Glob>\n<parameter=pattern>\n*.ts\n</parameter>\n</function>\n" +
    '<tool_call>\n{"name": "Read", "arguments": {"file_path": "a.ts"}}\n</tool_call>\n' +
    '[TOOL_CALLS][{"name": "Bash", "arguments": {"command": "ls"}}]';
  assert.deepEqual(calls(mixed).map((c) => `${c.format}:${c.name}`), [
    "qwen3-coder:Glob",
    "hermes:Read",
    "mistral:Bash",
  ]);
});

Deno.test("findTextCalls: a call cut off is said so, never completed by repair", () => {
  for (
    const text of [
      '<tool_call>\n{"name": "Bash", "arguments": {"command": "rm -rf build',
      '[TOOL_CALLS][{"name": "Bash", "arguments": {"command": "rm -rf build',
      '<|channel|>commentary to=functions.Bash <|constrain|>json<|message|>{"command": "rm',
      '<｜tool▁call▁begin｜>Bash<｜tool▁sep｜>{"command": "rm -rf',
    ]
  ) {
    const [call] = calls(text);
    assert.equal(call?.name, "Bash", text);
    assert.match(call?.problem ?? "", /cut off/, text);
  }
});

/** CPU time of `fn`, in ms: the machine may be loaded, the reader's own cost is what counts. */
function cpuMs(fn: () => void): number {
  const start = process.cpuUsage();
  fn();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

Deno.test("findTextCalls: hostile replies of 4 MB and of just under the reading cap cost well under a second each", () => {
  const shapes: Record<string, string> = {
    "open braces": "{",
    "open tool_call tags": '\n<tool_call>{"name": "x", "arguments": {',
    "qwen functions": "\n<function=Bash>\n<parameter=command>x",
    "unclosed fences": "```a\n",
    "inline code": "`a` ",
    "analysis channels": "<|channel|>analysis<|message|>",
    "recipients": "to=functions.x {",
    "deepseek tokens": "<｜tool▁call▁begin｜>function<｜tool▁sep｜>x\n```json\n{",
    "gemma calls": '\ncall:x{a:<|"|>',
    "invokes": '\n<invoke name="x"><parameter name="a">',
    "mistral": "[TOOL_CALLS]x[ARGS]{",
    "newlines": "\n",
    "name lines": "abc\n",
    "unclosed think": "<think>",
    "python literals": "[f(a=[",
  };
  const slow: string[] = [];
  for (const [name, unit] of Object.entries(shapes)) {
    for (const size of [4 * 1024 * 1024, MAX_READ_CHARS - 1]) {
      const text = unit.repeat(Math.ceil(size / unit.length)).slice(0, size);
      const ms = cpuMs(() => findTextCalls(text, TOOLS));
      if (ms > 1000) slow.push(`${name} (${size} chars): ${ms.toFixed(0)} ms`);
    }
  }
  assert.deepEqual(slow, []);
});

Deno.test("findTextCalls: an offered tool's definition echoed back is an attempt; a definition written as the answer is data", () => {
  const schema = (name: string) =>
    JSON.stringify(
      {
        type: "function",
        function: {
          name,
          description: "Run a command",
          parameters: { type: "object", properties: { command: { type: "string" } } },
        },
      },
      null,
      2,
    );
  assert.match(findTextCalls(schema("Bash"), TOOLS).sign ?? "", /definition of the tool "Bash"/);
  assert.deepEqual(findTextCalls(schema("get_weather"), TOOLS), { blocks: [] });
  assert.deepEqual(findTextCalls('{"name": "my-app", "version": "1.0.0"}', TOOLS), { blocks: [] });
  assert.match(
    findTextCalls('{"type":"tool-call","toolCallId":"abc123","toolName":"readFile",...}', TOOLS)
      .sign ?? "",
    /a tool call without arguments/,
  );
});
