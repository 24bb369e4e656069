import assert from "node:assert/strict";
import { claudeArgs, delegateTools, ruleToolNames } from "../../../src/engines/claude/argv.ts";
import { DEFAULT_CLAUDE_TOOLS } from "../../../src/settings/types.ts";
import type { TurnOptions, TurnSpec } from "../../../src/engines/types.ts";

const SID = "0b6f7a4e-3c2d-4e5f-8a9b-1c2d3e4f5a6b";
const SETTINGS = '{"model":"qwen3-coder","env":{}}';
const TOOLS = ["Bash", "Read", "Edit", "Write", "Glob", "Grep"];

function spec(options: Partial<TurnOptions> = {}, over: Partial<TurnSpec> = {}): TurnSpec {
  return {
    jobId: "11111111-2222-4333-8444-555555555555",
    sessionId: SID,
    turn: 1,
    resume: false,
    model: "qwen3-coder",
    cwd: "/work",
    options: { permissionMode: "acceptEdits", addDirs: [], ...options },
    dir: "/state/job",
    promptPath: "/state/job/prompt.txt",
    ...over,
  };
}

const FIXED = [
  "-p",
  "--output-format=stream-json",
  "--verbose",
  "--strict-mcp-config",
  "--setting-sources=",
  "--model=qwen3-coder",
  "--permission-mode=acceptEdits",
  `--settings=${SETTINGS}`,
  "--tools=Bash,Read,Edit,Write,Glob,Grep",
];

Deno.test("argv: a new session gets the fixed flags and --session-id, nothing else", () => {
  assert.deepEqual(claudeArgs(spec(), SETTINGS, TOOLS), [...FIXED, `--session-id=${SID}`]);
});

Deno.test("argv: a resumed session gets --resume and no --session-id", () => {
  const args = claudeArgs(spec({}, { resume: true, turn: 2 }), SETTINGS, TOOLS);
  assert.deepEqual(args, [...FIXED, `--resume=${SID}`]);
  assert.equal(args.some((a) => a.startsWith("--session-id")), false);
});

Deno.test("argv: model and permission mode come from the spec", () => {
  const args = claudeArgs(
    spec({ permissionMode: "plan" }, { model: "gpt-oss:120b-cloud" }),
    SETTINGS,
    TOOLS,
  );
  assert.equal(args[5], "--model=gpt-oss:120b-cloud");
  assert.equal(args[6], "--permission-mode=plan");
});

Deno.test("argv: every rule, dir and option is its own --flag=value, in order", () => {
  const args = claudeArgs(
    spec({
      allowedTools: ["Read", "Bash(git *)"],
      disallowedTools: ["Write", "mcp__github"],
      appendSystemPrompt: "Be terse.\nNo fluff.",
      maxTurns: 7,
      addDirs: ["/data/a", "/data/b c"],
    }),
    SETTINGS,
    TOOLS,
  );
  assert.deepEqual(args, [
    ...FIXED,
    `--session-id=${SID}`,
    "--allowed-tools=Read",
    "--allowed-tools=Bash(git *)",
    "--disallowed-tools=Write",
    "--disallowed-tools=mcp__github",
    "--append-system-prompt=Be terse.\nNo fluff.",
    "--max-turns=7",
    "--add-dir=/data/a",
    "--add-dir=/data/b c",
  ]);
});

Deno.test("argv: empty append_system_prompt and absent max_turns add no flags", () => {
  const args = claudeArgs(spec({ appendSystemPrompt: "", allowedTools: [] }), SETTINGS, TOOLS);
  assert.deepEqual(args, [...FIXED, `--session-id=${SID}`]);
});

Deno.test("argv: a value starting with '-' stays attached to its flag", () => {
  const args = claudeArgs(
    spec({
      allowedTools: ["--dangerously-skip-permissions"],
      appendSystemPrompt: "-p ignore everything",
      addDirs: ["-rf"],
    }),
    SETTINGS,
    TOOLS,
  );
  assert.ok(args.includes("--allowed-tools=--dangerously-skip-permissions"));
  assert.ok(args.includes("--append-system-prompt=-p ignore everything"));
  assert.ok(args.includes("--add-dir=-rf"));
  // No bare element beyond the fixed "-p" starts with "-" without being one of our flags.
  assert.equal(args.filter((a) => a === "--dangerously-skip-permissions").length, 0);
  assert.equal(args.filter((a) => a === "-p").length, 1);
  assert.equal(args.filter((a) => a === "-rf").length, 0);
});

Deno.test("argv: the prompt never appears (it travels on stdin)", () => {
  const args = claudeArgs(spec({ appendSystemPrompt: "sys" }), SETTINGS, TOOLS);
  for (const a of args) {
    assert.equal(a.includes("prompt.txt"), false, a);
    assert.equal(a.includes("/state/job"), false, a);
  }
  // Every element is a flag: no positional argument could carry a prompt.
  assert.ok(args.every((a) => a.startsWith("-")), JSON.stringify(args));
});

Deno.test("argv: no tools is an empty --tools (Claude Code's none), never a missing flag", () => {
  const args = claudeArgs(spec(), SETTINGS, []);
  assert.ok(args.includes("--tools="), JSON.stringify(args));
  assert.equal(args.filter((a) => a.startsWith("--tools")).length, 1);
});

Deno.test("tools: the configured set by default, in its order", () => {
  assert.deepEqual(delegateTools(DEFAULT_CLAUDE_TOOLS, undefined, undefined), TOOLS);
  assert.deepEqual(delegateTools(["Read", "Bash", "Read"], undefined, []), ["Read", "Bash"]);
});

Deno.test("tools: allowed_tools narrows to the names of its rules", () => {
  assert.deepEqual(delegateTools(TOOLS, ["Bash(git *)", "Read"], undefined), ["Bash", "Read"]);
  assert.deepEqual(delegateTools(TOOLS, ["Read(src/**)", "Grep"], undefined), ["Read", "Grep"]);
  // One argument can hold several rules, as Claude Code splits it.
  assert.deepEqual(delegateTools(TOOLS, ["Bash(git log *) Edit,Glob"], undefined), [
    "Bash",
    "Edit",
    "Glob",
  ]);
  // An empty list allows no tool, as on the native engine.
  assert.deepEqual(delegateTools(TOOLS, [], undefined), []);
});

Deno.test("tools: allowed_tools never widens the configured set", () => {
  assert.deepEqual(delegateTools(TOOLS, ["WebFetch", "Agent", "Read"], undefined), ["Read"]);
  assert.deepEqual(delegateTools(["Read"], ["Bash", "Bash(rm *)"], undefined), []);
  assert.deepEqual(delegateTools(TOOLS, ["mcp__github__create_issue"], undefined), []);
  // Names are Claude Code's, case and all.
  assert.deepEqual(delegateTools(TOOLS, ["bash", "READ"], undefined), []);
});

Deno.test("tools: a whole-tool denial removes the tool; a rule with a specifier does not", () => {
  assert.deepEqual(delegateTools(TOOLS, undefined, ["Write", "Edit"]), [
    "Bash",
    "Read",
    "Glob",
    "Grep",
  ]);
  assert.deepEqual(delegateTools(TOOLS, undefined, ["Bash(rm *)", "Read(.env)"]), TOOLS);
  assert.deepEqual(delegateTools(TOOLS, ["Bash", "Read"], ["Bash"]), ["Read"]);
});

Deno.test("rule names: parentheses keep their separators", () => {
  assert.deepEqual(ruleToolNames(["Bash(git commit -m a,b)", " Read ", ""]), [
    { name: "Bash", whole: false },
    { name: "Read", whole: true },
  ]);
  assert.deepEqual(ruleToolNames(["Edit Write(docs/**)"]), [
    { name: "Edit", whole: true },
    { name: "Write", whole: false },
  ]);
});

Deno.test("claudeArgs: with a person to ask, the relay's MCP config and its tool as the permission-prompt tool, denied to the model by name", () => {
  const config =
    '{"mcpServers":{"ollama_delegate":{"type":"http","url":"http://127.0.0.1:1/ask/x"}}}';
  const tool = "mcp__ollama_delegate__ask";
  const args = claudeArgs(spec(), SETTINGS, TOOLS, false, { config, tool });
  assert.deepEqual(args.slice(-3), [
    `--mcp-config=${config}`,
    `--permission-prompt-tool=${tool}`,
    `--disallowed-tools=${tool}`,
  ]);
  // Only our config: a project's .mcp.json is never loaded.
  assert.ok(args.includes("--strict-mcp-config"));
  assert.equal(
    claudeArgs(spec(), SETTINGS, TOOLS).some((a) => a.startsWith("--mcp-config")),
    false,
  );
});
