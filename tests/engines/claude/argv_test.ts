import assert from "node:assert/strict";
import { claudeArgs } from "../../../src/engines/claude/argv.ts";
import type { TurnOptions, TurnSpec } from "../../../src/engines/types.ts";

const SID = "0b6f7a4e-3c2d-4e5f-8a9b-1c2d3e4f5a6b";
const SETTINGS = '{"model":"qwen3-coder","env":{}}';

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
];

Deno.test("argv: a new session gets the fixed flags and --session-id, nothing else", () => {
  assert.deepEqual(claudeArgs(spec(), SETTINGS), [...FIXED, `--session-id=${SID}`]);
});

Deno.test("argv: a resumed session gets --resume and no --session-id", () => {
  const args = claudeArgs(spec({}, { resume: true, turn: 2 }), SETTINGS);
  assert.deepEqual(args, [...FIXED, `--resume=${SID}`]);
  assert.equal(args.some((a) => a.startsWith("--session-id")), false);
});

Deno.test("argv: model and permission mode come from the spec", () => {
  const args = claudeArgs(
    spec({ permissionMode: "plan" }, { model: "gpt-oss:120b-cloud" }),
    SETTINGS,
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
  const args = claudeArgs(spec({ appendSystemPrompt: "", allowedTools: [] }), SETTINGS);
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
  const args = claudeArgs(spec({ appendSystemPrompt: "sys" }), SETTINGS);
  for (const a of args) {
    assert.equal(a.includes("prompt.txt"), false, a);
    assert.equal(a.includes("/state/job"), false, a);
  }
  // Every element is a flag: no positional argument could carry a prompt.
  assert.ok(args.every((a) => a.startsWith("-")), JSON.stringify(args));
});
