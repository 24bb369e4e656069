import assert from "node:assert/strict";
import { toolPolicy } from "../../../src/engines/native/permissions.ts";
import { chatTools, systemPrompt } from "../../../src/engines/native/prompt.ts";
import { estimateTokens } from "../../../src/models/tokens.ts";
import { shellRunner } from "../../../src/engines/native/sandbox/shell_runner.ts";
import { bashTool } from "../../../src/engines/native/tools/bash.ts";
import { FILE_TOOLS } from "../../../src/engines/native/tools/index.ts";

Deno.test("turn 1 of a small task fits in 2,000 tokens with every tool schema", () => {
  const policy = toolPolicy(
    [...FILE_TOOLS, bashTool(shellRunner("on"))],
    "acceptEdits",
    undefined,
    undefined,
  );
  assert.deepEqual(policy.tools.map((t) => t.name), [
    "Read",
    "Write",
    "Edit",
    "Glob",
    "Grep",
    "Bash",
  ]);
  const body = JSON.stringify({
    model: "qwen2.5-coder:7b",
    messages: [
      {
        role: "system",
        content: systemPrompt({ cwd: "/home/user/projects/some-service", tools: policy.tools }),
      },
      { role: "user", content: "List the TypeScript files under src/ and count their lines." },
    ],
    tools: chatTools(policy.tools),
    stream: true,
    stream_options: { include_usage: true },
  });
  const tokens = estimateTokens(body.length);
  console.log(`turn-1 request: ${body.length} chars ≈ ${tokens} tokens`);
  assert.ok(tokens <= 2000, `turn 1 is ${tokens} tokens`);
});

Deno.test("the system prompt says read-only when no tool can change anything", () => {
  const policy = toolPolicy([...FILE_TOOLS], "plan", undefined, undefined);
  const text = systemPrompt({ cwd: "/w", tools: policy.tools, append: "Be brief." });
  assert.match(text, /Tools: Read, Glob, Grep\./);
  assert.match(text, /read-only/);
  assert.match(text, /Be brief\.$/);
  const none = systemPrompt({ cwd: "/w", tools: [] });
  assert.doesNotMatch(none, /Tools:/);
});
