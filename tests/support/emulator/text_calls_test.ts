import assert from "node:assert/strict";
import { type OllamaEmulator, startOllamaEmulator, type TextCallStyle } from "./emulator.ts";
import { pyJson, textCallsOf } from "./text_calls.ts";
import {
  CORPUS_TOOLS,
  type CorpusFormat,
  type ExpectedCall,
  TEXT_CALL_CORPUS,
  textCallCorpus,
} from "../text_call_corpus.ts";

type Json = Record<string, unknown>;

/** How each model family writes `Bash {"command": "ls"}` as text, in its chat template's format. */
const LS: Record<Exclude<TextCallStyle, "structured">, string> = {
  hermes: '<tool_call>\n{"name": "Bash", "arguments": {"command": "ls"}}\n</tool_call>',
  "qwen3-coder":
    "<tool_call>\n<function=Bash>\n<parameter=command>\nls\n</parameter>\n</function>\n</tool_call>",
  "qwen3-coder-bare": "<function=Bash>\n<parameter=command>\nls\n</parameter>\n</function>",
  "llama-json": '{"name": "Bash", "parameters": {"command": "ls"}}',
  "python-tag": '<|python_tag|>{"name": "Bash", "parameters": {"command": "ls"}}',
  mistral: '[TOOL_CALLS] [{"name": "Bash", "arguments": {"command": "ls"}}]',
  "fenced-json":
    '```json\n{\n  "name": "Bash",\n  "arguments": {\n    "command": "ls"\n  }\n}\n```',
};

const BASH_OPENAI = {
  type: "function",
  function: { name: "Bash", parameters: { type: "object", properties: {} } },
};
const BASH_ANTHROPIC = { name: "Bash", input_schema: { type: "object", properties: {} } };

async function postJson(emu: OllamaEmulator, path: string, body: unknown): Promise<Json> {
  const res = await fetch(emu.url + path, { method: "POST", body: JSON.stringify(body) });
  assert.equal(res.status, 200);
  return await res.json() as Json;
}

Deno.test("a text-calling model writes a scripted call as plain content on every endpoint", async () => {
  for (const [style, expected] of Object.entries(LS) as [TextCallStyle, string][]) {
    const emu = await startOllamaEmulator({
      models: [{ name: "qwen2.5:7b", toolCallStyle: style }],
      // The Anthropic directives add a description to @bash; this script sends the bare call.
      script: (v) =>
        v.tools.length > 0
          ? { kind: "tool_use", name: "Bash", input: { command: "ls" } }
          : undefined,
    });
    try {
      const user = { role: "user", content: "@bash ls" };
      const openai = await postJson(emu, "/v1/chat/completions", {
        model: "qwen2.5:7b",
        messages: [user],
        tools: [BASH_OPENAI],
      });
      const choice = (openai.choices as Json[])[0]!;
      assert.equal(choice.finish_reason, "stop", style);
      assert.deepEqual(choice.message, { role: "assistant", content: expected }, style);

      // Streamed, the same text arrives in content deltas, never as a tool_calls delta.
      const res = await fetch(emu.url + "/v1/chat/completions", {
        method: "POST",
        body: JSON.stringify({
          model: "qwen2.5:7b",
          messages: [user],
          tools: [BASH_OPENAI],
          stream: true,
        }),
      });
      const frames = (await res.text()).split("\n\n").filter((f) => f.startsWith("data: {"))
        .map((f) => (JSON.parse(f.slice(6)) as { choices: Json[] }).choices[0]!);
      assert.equal(frames.map((c) => (c.delta as Json).content ?? "").join(""), expected, style);
      assert.ok(!frames.some((c) => "tool_calls" in (c.delta as Json)), style);
      assert.equal(frames.at(-1)!.finish_reason, "stop");

      const native = await postJson(emu, "/api/chat", {
        model: "qwen2.5:7b",
        messages: [user],
        tools: [BASH_OPENAI],
        stream: false,
      });
      assert.deepEqual(native.message, { role: "assistant", content: expected }, style);

      const anthropic = await postJson(emu, "/v1/messages", {
        model: "qwen2.5:7b",
        max_tokens: 100,
        messages: [user],
        tools: [BASH_ANTHROPIC],
      });
      assert.equal(anthropic.stop_reason, "end_turn", style);
      assert.deepEqual(anthropic.content, [{ type: "text", text: expected }], style);
    } finally {
      await emu.close();
    }
  }
});

Deno.test("text calls: prose first, several calls, and the structured default unchanged", async () => {
  const calls = [
    { name: "Read", arguments: { file_path: "a.txt" } },
    { name: "Bash", arguments: { command: 'echo "hi"\nls', timeout: 5 } },
  ];
  const emu = await startOllamaEmulator({
    models: [{ name: "mistral:7b", toolCallStyle: "mistral" }, { name: "qwen3:8b" }],
    chatScript: () => ({ kind: "tool_calls", text: "Checking.", calls }),
  });
  try {
    const body = (model: string) => ({
      model,
      messages: [{ role: "user", content: "x" }],
      tools: [BASH_OPENAI],
    });
    const text = await postJson(emu, "/v1/chat/completions", body("mistral:7b"));
    assert.equal(
      ((text.choices as Json[])[0]!.message as Json).content,
      'Checking.\n\n[TOOL_CALLS] [{"name": "Read", "arguments": {"file_path": "a.txt"}}, ' +
        '{"name": "Bash", "arguments": {"command": "echo \\"hi\\"\\nls", "timeout": 5}}]',
    );
    const structured = await postJson(emu, "/v1/chat/completions", body("qwen3:8b"));
    const choice = (structured.choices as Json[])[0]!;
    assert.equal(choice.finish_reason, "tool_calls");
    assert.equal(((choice.message as Json).tool_calls as Json[]).length, 2);
  } finally {
    await emu.close();
  }
  assert.equal(
    textCallsOf("qwen3-coder", [calls[1]!]),
    '<tool_call>\n<function=Bash>\n<parameter=command>\necho "hi"\nls\n</parameter>\n' +
      "<parameter=timeout>\n5\n</parameter>\n</function>\n</tool_call>",
  );
  assert.equal(pyJson({ a: [1, "ü"], b: { c: null } }), '{"a": [1, "ü"], "b": {"c": null}}');
});

// --- the corpus -------------------------------------------------------------------------------

const schemaOf = (name: string) => CORPUS_TOOLS.find((t) => t.name === name)?.parameters;

function argsOf(o: Json): ExpectedCall {
  const args = o.arguments ?? o.parameters;
  assert.ok(typeof o.name === "string" && typeof args === "object" && args !== null);
  return { name: o.name, arguments: args as Json };
}

/** The calls of a case whose format is known, read by position only: a check on the labels. */
function readLabelled(format: CorpusFormat, text: string): ExpectedCall[] {
  switch (format) {
    case "hermes":
      return [...text.matchAll(/<tool_call>\s*([\s\S]*?)\s*(?:<\/tool_call>|$)/g)]
        .map((m) => argsOf(JSON.parse(m[1]!)));
    case "qwen3-coder":
    case "qwen3-coder-bare":
      return [...text.matchAll(/<function=([^>\n]+)>([\s\S]*?)<\/function>/g)].map((m) => {
        const props = schemaOf(m[1]!)?.properties ?? {};
        const args: Json = {};
        for (const p of m[2]!.matchAll(/<parameter=([^>\n]+)>\n([\s\S]*?)\n<\/parameter>/g)) {
          const type = props[p[1]!]?.type;
          args[p[1]!] = type === "integer"
            ? Number(p[2])
            : type === "boolean"
            ? p[2] === "true"
            : p[2];
        }
        return { name: m[1]!, arguments: args };
      });
    case "llama-json":
      return text.trim().split(/;\s*(?=\{)/).map((j) => argsOf(JSON.parse(j)));
    case "python-tag":
      return [argsOf(JSON.parse(text.split("<|python_tag|>")[1]!.replace("<|eom_id|>", "")))];
    case "mistral":
      return (JSON.parse(text.split("[TOOL_CALLS]")[1]!) as Json[]).map(argsOf);
    case "fenced-json":
      return [...text.matchAll(/```(?:json)?\n([\s\S]*?)\n```/g)].map((m) =>
        argsOf(JSON.parse(m[1]!))
      );
  }
}

Deno.test("the text-call corpus: 50+ unique cases, every format, varied non-calls", () => {
  const cases = [...textCallCorpus()];
  assert.equal(cases.length, TEXT_CALL_CORPUS.length);
  assert.ok(cases.length >= 50, `${cases.length} cases`);
  assert.equal(new Set(cases.map((c) => c.id)).size, cases.length, "ids are unique");
  const formats: CorpusFormat[] = [
    "hermes",
    "qwen3-coder",
    "qwen3-coder-bare",
    "llama-json",
    "python-tag",
    "mistral",
    "fenced-json",
  ];
  for (const f of formats) {
    assert.ok(cases.filter((c) => c.format === f).length >= 3, `at least 3 ${f} cases`);
  }
  const negatives = cases.filter((c) => c.calls.length === 0);
  assert.ok(negatives.length >= 15, `${negatives.length} non-calls`);
  assert.ok(negatives.every((c) => c.format === undefined));
  assert.ok(cases.filter((c) => c.calls.length >= 2).length >= 4, "several two-call replies");
  const used = new Set(cases.flatMap((c) => c.calls.map((k) => k.name)));
  assert.deepEqual([...used].sort(), ["Bash", "Edit", "Glob", "Grep", "Read", "Write"]);
});

Deno.test("the text-call corpus labels match their texts and the offered tools' schemas", () => {
  for (const c of TEXT_CALL_CORPUS) {
    for (const k of c.calls) {
      assert.ok(c.tools.includes(k.name), `${c.id}: ${k.name} is offered`);
      const schema = schemaOf(k.name)!;
      for (const r of schema.required) assert.ok(r in k.arguments, `${c.id}: ${r} present`);
      for (const [key, value] of Object.entries(k.arguments)) {
        const type = schema.properties[key]?.type;
        assert.ok(type, `${c.id}: ${k.name} has no parameter ${key}`);
        const actual = Number.isInteger(value) ? "integer" : typeof value;
        assert.equal(actual, type, `${c.id}: ${key} is ${type}`);
      }
    }
    if (c.format) assert.deepEqual(readLabelled(c.format, c.text), c.calls, c.id);
  }
});
