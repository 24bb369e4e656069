/**
 * Labelled assistant replies for recognising tool calls that local models write as text
 * (when Ollama's tool parser misses, the call arrives as plain `content`; see
 * emulator/text_calls.ts for the formats and the upstream complaints behind them).
 *
 * Each case is one reply as a client receives it, the tools the request offered, and the calls
 * a correct recogniser extracts, in order, with arguments typed by the tool's schema
 * (`CORPUS_TOOLS`). `calls: []` means no call in the reply runs: prose that quotes a call as an
 * example, code blocks of JSON that is not a call, explanations of the formats, a tool
 * definition, command output are text; a call to a tool that was not offered is `refused`: it
 * comes back with an error for the model (issue 30: never taken for the answer).
 *
 * Conventions the labels follow:
 * - A call inside a code block or an inline code span that the reply presents as an example is
 *   not a call; a fenced ```json block that holds a call and ends the reply is one.
 * - A bare JSON call (Llama) counts only when it is the whole reply; in the middle of a sentence
 *   it is an example.
 * - A call to a tool that was not offered is refused with an error, not run and not an answer.
 * - Extra fields beside the call (`"type": "function"`, Mistral's `"id"`) are ignored; Llama's
 *   `parameters` and the others' `arguments` mean the same.
 * - Qwen3-Coder parameter values are text, converted by the schema (integer, boolean); the
 *   newline right after `<parameter=x>` and right before `</parameter>` is not part of the value.
 */

export type CorpusFormat =
  | "hermes"
  | "qwen3-coder"
  | "qwen3-coder-bare"
  | "llama-json"
  | "python-tag"
  | "mistral"
  | "fenced-json";

export interface ExpectedCall {
  name: string;
  arguments: Record<string, unknown>;
}

export interface TextCallCase {
  /** Stable and unique, e.g. "hermes-two-calls". */
  id: string;
  /** What makes the case worth having. */
  note: string;
  /** The names of the tools the request offered (schemas in CORPUS_TOOLS). */
  tools: string[];
  /** The reply's content, exactly as received. */
  text: string;
  /** The format of the calls; absent when the reply holds none. */
  format?: CorpusFormat;
  calls: ExpectedCall[];
  /** Calls that come back with an error instead of running (a tool not offered), by name. */
  refused?: string[];
}

export interface CorpusTool {
  name: string;
  parameters: {
    type: "object";
    properties: Record<string, { type: string; description?: string }>;
    required: string[];
  };
}

/** The Claude-Code-named tools the cases offer, with the schemas a recogniser checks against. */
export const CORPUS_TOOLS: readonly CorpusTool[] = [
  {
    name: "Read",
    parameters: {
      type: "object",
      properties: {
        file_path: { type: "string" },
        offset: { type: "integer" },
        limit: { type: "integer" },
      },
      required: ["file_path"],
    },
  },
  {
    name: "Write",
    parameters: {
      type: "object",
      properties: { file_path: { type: "string" }, content: { type: "string" } },
      required: ["file_path", "content"],
    },
  },
  {
    name: "Edit",
    parameters: {
      type: "object",
      properties: {
        file_path: { type: "string" },
        old_string: { type: "string" },
        new_string: { type: "string" },
        replace_all: { type: "boolean" },
      },
      required: ["file_path", "old_string", "new_string"],
    },
  },
  {
    name: "Glob",
    parameters: {
      type: "object",
      properties: { pattern: { type: "string" }, path: { type: "string" } },
      required: ["pattern"],
    },
  },
  {
    name: "Grep",
    parameters: {
      type: "object",
      properties: {
        pattern: { type: "string" },
        path: { type: "string" },
        glob: { type: "string" },
        output_mode: { type: "string" },
        "-n": { type: "boolean" },
        "-i": { type: "boolean" },
      },
      required: ["pattern"],
    },
  },
  {
    name: "Bash",
    parameters: {
      type: "object",
      properties: {
        command: { type: "string" },
        description: { type: "string" },
        timeout: { type: "integer" },
      },
      required: ["command"],
    },
  },
];

const ALL = ["Read", "Write", "Edit", "Glob", "Grep", "Bash"];
const F = "```";

const call = (name: string, args: Record<string, unknown>): ExpectedCall => ({
  name,
  arguments: args,
});

const POSITIVE: TextCallCase[] = [
  // --- Hermes / Qwen 2.5 ----------------------------------------------------------------------
  {
    id: "hermes-bare",
    note: "the call alone, as Qwen 2.5 writes it",
    tools: ALL,
    format: "hermes",
    text: '<tool_call>\n{"name": "Bash", "arguments": {"command": "ls -la"}}\n</tool_call>',
    calls: [call("Bash", { command: "ls -la" })],
  },
  {
    id: "hermes-prose-before",
    note: "a sentence of intent, a blank line, the call",
    tools: ALL,
    format: "hermes",
    text: "I'll start by reading the configuration file to see how the server is set up.\n\n" +
      '<tool_call>\n{"name": "Read", "arguments": {"file_path": "/work/app/config.yaml"}}\n</tool_call>',
    calls: [call("Read", { file_path: "/work/app/config.yaml" })],
  },
  {
    id: "hermes-two-calls",
    note: "two calls, one tag pair each",
    tools: ALL,
    format: "hermes",
    text: "Let me find the test files and any TODOs in them.\n\n" +
      '<tool_call>\n{"name": "Glob", "arguments": {"pattern": "tests/**/*_test.ts"}}\n</tool_call>\n' +
      '<tool_call>\n{"name": "Grep", "arguments": {"pattern": "TODO", "path": "tests", "output_mode": "content"}}\n</tool_call>',
    calls: [
      call("Glob", { pattern: "tests/**/*_test.ts" }),
      call("Grep", { pattern: "TODO", path: "tests", output_mode: "content" }),
    ],
  },
  {
    id: "hermes-write-multiline",
    note: "file content with newlines, quotes and a backslash, JSON-escaped",
    tools: ALL,
    format: "hermes",
    text: String.raw`<tool_call>
{"name": "Write", "arguments": {"file_path": "src/greet.py", "content": "def greet(name):\n    \"\"\"Say hello.\"\"\"\n    return f\"Hello, {name}!\\n\"\n"}}
</tool_call>`,
    calls: [call("Write", {
      file_path: "src/greet.py",
      content: 'def greet(name):\n    """Say hello."""\n    return f"Hello, {name}!\\n"\n',
    })],
  },
  {
    id: "hermes-trailing-text",
    note: "text after the closing tag",
    tools: ALL,
    format: "hermes",
    text:
      '<tool_call>\n{"name": "Bash", "arguments": {"command": "npm test", "description": "Run the unit tests"}}\n</tool_call>\n' +
      "I'll look at the failures once the tests finish.",
    calls: [call("Bash", { command: "npm test", description: "Run the unit tests" })],
  },
  {
    id: "hermes-unicode",
    note: "non-ASCII arguments written raw",
    tools: ALL,
    format: "hermes",
    text: "Updating the greeting as requested.\n\n" +
      '<tool_call>\n{"name": "Edit", "arguments": {"file_path": "i18n/de.json", "old_string": "\\"hello\\": \\"Hallo\\"", "new_string": "\\"hello\\": \\"Grüße — 你好 👋\\""}}\n</tool_call>',
    calls: [call("Edit", {
      file_path: "i18n/de.json",
      old_string: '"hello": "Hallo"',
      new_string: '"hello": "Grüße — 你好 👋"',
    })],
  },
  {
    id: "hermes-compact",
    note: "no newlines inside the tags, compact JSON",
    tools: ALL,
    format: "hermes",
    text: '<tool_call>{"name":"Grep","arguments":{"pattern":"fn main","-n":true}}</tool_call>',
    calls: [call("Grep", { pattern: "fn main", "-n": true })],
  },
  {
    id: "hermes-unterminated",
    note: "generation stopped before </tool_call>",
    tools: ALL,
    format: "hermes",
    text:
      '<tool_call>\n{"name": "Bash", "arguments": {"command": "pytest -q tests/test_api.py", "timeout": 120000}}',
    calls: [call("Bash", { command: "pytest -q tests/test_api.py", timeout: 120000 })],
  },
  {
    id: "hermes-read-range",
    note: "integer arguments",
    tools: ["Read", "Grep"],
    format: "hermes",
    text: "The error points at line 240, so I'll read around it.\n\n" +
      '<tool_call>\n{"name": "Read", "arguments": {"file_path": "src/server.ts", "offset": 220, "limit": 40}}\n</tool_call>',
    calls: [call("Read", { file_path: "src/server.ts", offset: 220, limit: 40 })],
  },
  // --- Qwen3-Coder ----------------------------------------------------------------------------
  {
    id: "qwen3-coder-bare-call",
    note: "the exact shape Qwen3-Coder writes",
    tools: ALL,
    format: "qwen3-coder",
    text:
      "<tool_call>\n<function=Bash>\n<parameter=command>\nls\n</parameter>\n</function>\n</tool_call>",
    calls: [call("Bash", { command: "ls" })],
  },
  {
    id: "qwen3-coder-edit-multiline",
    note: "multi-line raw values with quotes, no escaping",
    tools: ALL,
    format: "qwen3-coder",
    text: "The loop is off by one; fixing it.\n\n<tool_call>\n<function=Edit>\n" +
      "<parameter=file_path>\nsrc/range.js\n</parameter>\n" +
      '<parameter=old_string>\nfor (let i = 0; i <= items.length; i++) {\n  out.push("item " + items[i]);\n</parameter>\n' +
      "<parameter=new_string>\nfor (let i = 0; i < items.length; i++) {\n  out.push(`item ${items[i]}`);\n</parameter>\n" +
      "</function>\n</tool_call>",
    calls: [call("Edit", {
      file_path: "src/range.js",
      old_string: 'for (let i = 0; i <= items.length; i++) {\n  out.push("item " + items[i]);',
      new_string: "for (let i = 0; i < items.length; i++) {\n  out.push(`item ${items[i]}`);",
    })],
  },
  {
    id: "qwen3-coder-two-reads",
    note: "two calls, each in its own tags",
    tools: ALL,
    format: "qwen3-coder",
    text:
      "<tool_call>\n<function=Read>\n<parameter=file_path>\npackage.json\n</parameter>\n</function>\n</tool_call>\n" +
      "<tool_call>\n<function=Read>\n<parameter=file_path>\ntsconfig.json\n</parameter>\n</function>\n</tool_call>",
    calls: [
      call("Read", { file_path: "package.json" }),
      call("Read", { file_path: "tsconfig.json" }),
    ],
  },
  {
    id: "qwen3-coder-typed-values",
    note: "integer and boolean values converted by the schema",
    tools: ALL,
    format: "qwen3-coder",
    text: "<tool_call>\n<function=Grep>\n<parameter=pattern>\nTODO\\(\n</parameter>\n" +
      "<parameter=path>\nsrc\n</parameter>\n<parameter=-n>\ntrue\n</parameter>\n" +
      "<parameter=-i>\nfalse\n</parameter>\n</function>\n</tool_call>",
    calls: [call("Grep", { pattern: "TODO\\(", path: "src", "-n": true, "-i": false })],
  },
  {
    id: "qwen3-coder-timeout",
    note: "a number for an integer parameter, text around the call",
    tools: ALL,
    format: "qwen3-coder",
    text:
      "Building can take a while, so I'll give it two minutes.\n\n<tool_call>\n<function=Bash>\n" +
      "<parameter=command>\ncargo build --release\n</parameter>\n<parameter=timeout>\n120000\n</parameter>\n" +
      "</function>\n</tool_call>\nThen I'll check the binary size.",
    calls: [call("Bash", { command: "cargo build --release", timeout: 120000 })],
  },
  {
    id: "qwen3-coder-unicode-path",
    note: "a path with spaces and non-ASCII characters",
    tools: ALL,
    format: "qwen3-coder",
    text:
      "<tool_call>\n<function=Read>\n<parameter=file_path>\n/home/zoë/Projekte/Über uns.md\n</parameter>\n</function>\n</tool_call>",
    calls: [call("Read", { file_path: "/home/zoë/Projekte/Über uns.md" })],
  },
  {
    id: "qwen3-coder-bare-glob",
    note: "no <tool_call> tags around the function",
    tools: ALL,
    format: "qwen3-coder-bare",
    text: "<function=Glob>\n<parameter=pattern>\n**/*.ts\n</parameter>\n</function>",
    calls: [call("Glob", { pattern: "**/*.ts" })],
  },
  {
    id: "qwen3-coder-bare-write",
    note: "no tags, prose before, content with quotes and a blank line",
    tools: ALL,
    format: "qwen3-coder-bare",
    text:
      "I'll create the script now.\n\n<function=Write>\n<parameter=file_path>\nscripts/hello.sh\n</parameter>\n" +
      '<parameter=content>\n#!/bin/sh\n\necho "it\'s $(date)"\n</parameter>\n</function>',
    calls: [
      call("Write", {
        file_path: "scripts/hello.sh",
        content: '#!/bin/sh\n\necho "it\'s $(date)"',
      }),
    ],
  },
  {
    id: "qwen3-coder-bare-stray-close",
    note: "the opening tag missing, the closing one present",
    tools: ALL,
    format: "qwen3-coder-bare",
    text:
      "<function=Bash>\n<parameter=command>\ngit status --short\n</parameter>\n</function>\n</tool_call>",
    calls: [call("Bash", { command: "git status --short" })],
  },
  // --- Llama 3.x ------------------------------------------------------------------------------
  {
    id: "llama-json-bare",
    note: "the whole reply is the call, with `parameters`",
    tools: ALL,
    format: "llama-json",
    text: '{"name": "Bash", "parameters": {"command": "ls"}}',
    calls: [call("Bash", { command: "ls" })],
  },
  {
    id: "llama-json-type-field",
    note: 'Llama 3.2 adds "type": "function"',
    tools: ALL,
    format: "llama-json",
    text:
      '{"type": "function", "name": "Glob", "parameters": {"pattern": "src/**/*.rs", "path": "."}}',
    calls: [call("Glob", { pattern: "src/**/*.rs", path: "." })],
  },
  {
    id: "llama-json-arguments-key",
    note: "`arguments` instead of `parameters`, surrounding whitespace",
    tools: ALL,
    format: "llama-json",
    text: '\n{"name": "Read", "arguments": {"file_path": "/etc/os-release"}}\n',
    calls: [call("Read", { file_path: "/etc/os-release" })],
  },
  {
    id: "llama-json-two-calls",
    note: "two calls separated by a semicolon, as Llama 3.2 writes them",
    tools: ALL,
    format: "llama-json",
    text:
      '{"name": "Read", "parameters": {"file_path": "a.txt"}}; {"name": "Read", "parameters": {"file_path": "b.txt"}}',
    calls: [call("Read", { file_path: "a.txt" }), call("Read", { file_path: "b.txt" })],
  },
  {
    id: "llama-json-write-escapes",
    note: "content with escaped newlines, tabs and quotes",
    tools: ALL,
    format: "llama-json",
    text: String
      .raw`{"name": "Write", "parameters": {"file_path": "Makefile", "content": "test:\n\tgo test ./...\n\techo \"done\"\n"}}`,
    calls: [
      call("Write", { file_path: "Makefile", content: 'test:\n\tgo test ./...\n\techo "done"\n' }),
    ],
  },
  {
    id: "python-tag-bare",
    note: "Llama 3.1's <|python_tag|> prefix",
    tools: ALL,
    format: "python-tag",
    text: '<|python_tag|>{"name": "Bash", "parameters": {"command": "git status"}}',
    calls: [call("Bash", { command: "git status" })],
  },
  {
    id: "python-tag-eom",
    note: "the end-of-message token leaked after the call",
    tools: ALL,
    format: "python-tag",
    text:
      '<|python_tag|>{"name": "Grep", "parameters": {"pattern": "fn main", "glob": "*.rs"}}<|eom_id|>',
    calls: [call("Grep", { pattern: "fn main", glob: "*.rs" })],
  },
  {
    id: "python-tag-prose-before",
    note: "a sentence, then the tagged call on its own line",
    tools: ALL,
    format: "python-tag",
    text: "Let me check which Python version is installed.\n" +
      '<|python_tag|>{"name": "Bash", "parameters": {"command": "python3 --version", "description": "Show the Python version"}}',
    calls: [call("Bash", { command: "python3 --version", description: "Show the Python version" })],
  },
  // --- Mistral --------------------------------------------------------------------------------
  {
    id: "mistral-one",
    note: "[TOOL_CALLS] and a list of one",
    tools: ALL,
    format: "mistral",
    text: '[TOOL_CALLS] [{"name": "Bash", "arguments": {"command": "ls"}}]',
    calls: [call("Bash", { command: "ls" })],
  },
  {
    id: "mistral-two",
    note: "two calls in one list",
    tools: ALL,
    format: "mistral",
    text:
      '[TOOL_CALLS] [{"name": "Glob", "arguments": {"pattern": "*.md"}}, {"name": "Read", "arguments": {"file_path": "README.md", "limit": 50}}]',
    calls: [call("Glob", { pattern: "*.md" }), call("Read", { file_path: "README.md", limit: 50 })],
  },
  {
    id: "mistral-no-space",
    note: "no space after the token",
    tools: ALL,
    format: "mistral",
    text: '[TOOL_CALLS][{"name": "Read", "arguments": {"file_path": "docs/setup.md"}}]',
    calls: [call("Read", { file_path: "docs/setup.md" })],
  },
  {
    id: "mistral-with-id",
    note: "a call id beside the call, ignored",
    tools: ALL,
    format: "mistral",
    text: String
      .raw`[TOOL_CALLS] [{"name": "Edit", "arguments": {"file_path": "app.py", "old_string": "DEBUG = True", "new_string": "DEBUG = False", "replace_all": true}, "id": "a1B2c3D4e"}]`,
    calls: [call("Edit", {
      file_path: "app.py",
      old_string: "DEBUG = True",
      new_string: "DEBUG = False",
      replace_all: true,
    })],
  },
  {
    id: "mistral-prose-before",
    note: "a sentence before the token",
    tools: ALL,
    format: "mistral",
    text:
      'I will search the logs for the timeout.\n[TOOL_CALLS] [{"name": "Grep", "arguments": {"pattern": "ETIMEDOUT", "path": "logs", "-i": true}}]',
    calls: [call("Grep", { pattern: "ETIMEDOUT", path: "logs", "-i": true })],
  },
  // --- fenced JSON ----------------------------------------------------------------------------
  {
    id: "fenced-pretty",
    note: "an indented call in a json fence, nothing else",
    tools: ALL,
    format: "fenced-json",
    text: `${F}json\n{\n  "name": "Bash",\n  "arguments": {\n    "command": "ls"\n  }\n}\n${F}`,
    calls: [call("Bash", { command: "ls" })],
  },
  {
    id: "fenced-prose-before",
    note: "prose, then a one-line call in a fence that ends the reply",
    tools: ALL,
    format: "fenced-json",
    text: "I'll search for the function definition first.\n\n" +
      `${F}json\n{"name": "Grep", "arguments": {"pattern": "def parse_args", "path": "src"}}\n${F}`,
    calls: [call("Grep", { pattern: "def parse_args", path: "src" })],
  },
  {
    id: "fenced-no-language",
    note: "a fence without a language tag",
    tools: ALL,
    format: "fenced-json",
    text: `${F}\n{"name": "Read", "arguments": {"file_path": "CHANGELOG.md"}}\n${F}\n`,
    calls: [call("Read", { file_path: "CHANGELOG.md" })],
  },
  {
    id: "fenced-parameters-key",
    note: "`parameters` inside a fence",
    tools: ALL,
    format: "fenced-json",
    text:
      `Checking the Node version:\n\n${F}json\n{"name": "Bash", "parameters": {"command": "node --version"}}\n${F}`,
    calls: [call("Bash", { command: "node --version" })],
  },
  {
    id: "fenced-write-multiline",
    note: "multi-line file content in a pretty-printed call",
    tools: ALL,
    format: "fenced-json",
    text: `${F}json\n{\n  "name": "Write",\n  "arguments": {\n    "file_path": ".gitignore",\n` +
      String.raw`    "content": "node_modules/\ndist/\n*.log\n"` + `\n  }\n}\n${F}`,
    calls: [call("Write", { file_path: ".gitignore", content: "node_modules/\ndist/\n*.log\n" })],
  },
  {
    id: "fenced-unicode-edit",
    note: "non-ASCII text in an Edit",
    tools: ALL,
    format: "fenced-json",
    text:
      `${F}json\n{"name": "Edit", "arguments": {"file_path": "README.md", "old_string": "Cafe", "new_string": "Café ☕"}}\n${F}`,
    calls: [call("Edit", { file_path: "README.md", old_string: "Cafe", new_string: "Café ☕" })],
  },
  {
    id: "fenced-two-blocks",
    note: "two calls, one fence each, the last ending the reply",
    tools: ALL,
    format: "fenced-json",
    text: `${F}json\n{"name": "Glob", "arguments": {"pattern": "**/*.go"}}\n${F}\n\n` +
      `${F}json\n{"name": "Bash", "arguments": {"command": "go vet ./..."}}\n${F}`,
    calls: [call("Glob", { pattern: "**/*.go" }), call("Bash", { command: "go vet ./..." })],
  },
];

const NEGATIVE: TextCallCase[] = [
  {
    id: "none-plain-answer",
    note: "an ordinary final answer",
    tools: ALL,
    text: "All 42 tests pass now. The bug was an off-by-one in `paginate()`: the last page was " +
      "skipped when the item count was an exact multiple of the page size.",
    calls: [],
  },
  {
    id: "none-inline-hermes-example",
    note: "a call quoted in inline code while explaining the format",
    tools: ALL,
    text:
      'Qwen models emit something like `<tool_call>{"name": "Bash", "arguments": {"command": "ls"}}</tool_call>` ' +
      "and Ollama's parser turns it into a structured call.",
    calls: [],
  },
  {
    id: "none-mentions-tags",
    note: "tags named in prose, no call",
    tools: ALL,
    text:
      "When the parser misses, you see the raw <tool_call> and </tool_call> tags in the reply " +
      "instead of a tool call. Upgrading Ollama usually fixes that.",
    calls: [],
  },
  {
    id: "none-package-json",
    note: 'a JSON block with a "name" key that is a package manifest',
    tools: ALL,
    text:
      `Here is the minimal package.json you need:\n\n${F}json\n{\n  "name": "my-app",\n  "version": "1.0.0",\n  "scripts": {\n    "test": "node --test"\n  }\n}\n${F}`,
    calls: [],
  },
  {
    id: "none-tool-not-offered-fenced",
    note: "a well-formed call to a tool the request did not offer",
    tools: ALL,
    text: `${F}json\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n${F}`,
    calls: [],
    refused: ["get_weather"],
  },
  {
    id: "none-tool-not-offered-hermes",
    note: "Hermes tags around a call to an unknown tool",
    tools: ALL,
    text:
      '<tool_call>\n{"name": "WebSearch", "arguments": {"query": "ollama num_ctx default"}}\n</tool_call>',
    calls: [],
    refused: ["WebSearch"],
  },
  {
    id: "none-tool-offered-elsewhere",
    note: "a call to Bash when only Read and Grep were offered",
    tools: ["Read", "Grep"],
    text: '<tool_call>\n{"name": "Bash", "arguments": {"command": "rm -rf build"}}\n</tool_call>',
    calls: [],
    refused: ["Bash"],
  },
  {
    id: "none-documented-format",
    note: "the Hermes format documented in a fenced xml block",
    tools: ALL,
    text: "Qwen 2.5 uses this format for tool calls:\n\n" +
      `${F}xml\n<tool_call>\n{"name": "<function-name>", "arguments": <args-json-object>}\n</tool_call>\n${F}\n\n` +
      "Ollama's template tells the model to write exactly that.",
    calls: [],
  },
  {
    id: "none-command-output",
    note: "JSON that a command printed, reported back",
    tools: ALL,
    text:
      `The health check returned:\n\n${F}json\n{"status": "ok", "checks": 3, "failed": []}\n${F}\n\nEverything is healthy.`,
    calls: [],
  },
  {
    id: "none-ts-example",
    note: "a TypeScript snippet that builds a call object",
    tools: ALL,
    text: "You can issue the call from your own code like this:\n\n" +
      `${F}ts\nconst call = { name: "Bash", arguments: { command: "ls" } };\nawait client.run(call);\n${F}`,
    calls: [],
  },
  {
    id: "none-llama-json-in-sentence",
    note: "a bare JSON call in the middle of a sentence",
    tools: ALL,
    text: 'You could run {"name": "Bash", "parameters": {"command": "ls"}} to check, but the ' +
      "directory is already empty, as the previous listing showed.",
    calls: [],
  },
  {
    id: "none-mistral-mentioned",
    note: "the Mistral token explained in prose",
    tools: ALL,
    text: "Mistral models prefix their calls with [TOOL_CALLS] followed by a JSON list of calls; " +
      "the server strips that prefix before returning structured calls.",
    calls: [],
  },
  {
    id: "none-python-tag-inline",
    note: "<|python_tag|> quoted in inline code",
    tools: ALL,
    text:
      "Llama 3.1 starts built-in tool calls with `<|python_tag|>`; custom tools are plain JSON.",
    calls: [],
  },
  {
    id: "none-qwen3-coder-example",
    note: "the Qwen3-Coder syntax shown in a fenced block",
    tools: ALL,
    text: "Qwen3-Coder writes calls as XML-like blocks:\n\n" +
      `${F}\n<tool_call>\n<function=Bash>\n<parameter=command>\nls\n</parameter>\n</function>\n</tool_call>\n${F}\n\n` +
      "If you see that in a reply, the parser did not recognise it.",
    calls: [],
  },
  {
    id: "none-json-array",
    note: "a JSON list of files",
    tools: ALL,
    text:
      `I found these files:\n\n${F}json\n["src/main.ts", "src/server.ts", "tests/main_test.ts"]\n${F}`,
    calls: [],
  },
  {
    id: "none-done",
    note: "a one-word reply",
    tools: ALL,
    text: "Done.",
    calls: [],
  },
  {
    id: "none-example-fence-mid-reply",
    note: "a fenced call presented as what the user could run, prose after it",
    tools: ALL,
    text: "If you want to run the tests yourself, the call would be:\n\n" +
      `${F}json\n{"name": "Bash", "arguments": {"command": "npm test"}}\n${F}\n\n` +
      "but I already ran them and all of them pass.",
    calls: [],
  },
  {
    id: "none-diff",
    note: "a unified diff describing an edit",
    tools: ALL,
    text:
      `I changed the timeout:\n\n${F}diff\n- const TIMEOUT = 5000;\n+ const TIMEOUT = 30000;\n${F}`,
    calls: [],
  },
  {
    id: "none-fenced-hermes-transcript",
    note: "an earlier turn's raw call quoted in a fence",
    tools: ALL,
    text: "The previous turn came back as plain text:\n\n" +
      `${F}\n<tool_call>\n{"name": "Read", "arguments": {"file_path": "a.txt"}}\n</tool_call>\n${F}\n\n` +
      "so the server's parser must have missed it.",
    calls: [],
  },
  {
    id: "none-tool-definition",
    note: "a tool definition (name and a parameters schema), not a call",
    tools: ALL,
    text: "The Bash tool is defined like this:\n\n" +
      `${F}json\n{"name": "Bash", "description": "Run a shell command", "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}\n${F}\n\n` +
      "It takes one required string.",
    calls: [],
  },
  {
    id: "none-unicode-prose",
    note: "non-ASCII prose with braces and angle brackets",
    tools: ALL,
    text:
      "Fertig ✅ — the template now renders {name} as «Zoë» and the <title> is translated (标题).",
    calls: [],
  },
];

/** Every case; at least 50, covering each format and each kind of non-call. */
export const TEXT_CALL_CORPUS: readonly TextCallCase[] = [...POSITIVE, ...NEGATIVE];

/** The cases one by one, for benchmarks that stream them. */
export function* textCallCorpus(): Generator<TextCallCase> {
  yield* TEXT_CALL_CORPUS;
}
