/**
 * Commands read from Claude Code 2.1.332's stream, as it writes them (lines taken from a real
 * run): each Bash call paired with its result by id, the exit code only from a result Claude
 * Code marks failed, denied calls left to the `denied:` line.
 */
import assert from "node:assert/strict";
import { BashEvidence } from "../../../src/engines/claude/bash_evidence.ts";
import { readStreamEvent } from "../../../src/engines/claude/stream.ts";
import type { CommandRun } from "../../../src/engines/types.ts";

const call = (id: string, command: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    type: "assistant",
    message: {
      content: [{ type: "tool_use", id, name: "Bash", input: { command, ...extra } }],
    },
  });
const result = (id: string, content: unknown, isError: boolean, meta?: unknown) =>
  JSON.stringify({
    type: "user",
    message: { content: [{ tool_use_id: id, type: "tool_result", content, is_error: isError }] },
    ...(meta ? { tool_result_meta: meta } : {}),
  });

function run(lines: string[]): CommandRun[] {
  const runs: CommandRun[] = [];
  let clock = 0;
  const evidence = new BashEvidence({ commandRun: (r) => runs.push(r) }, () => (clock += 10));
  for (const line of lines) {
    const event = readStreamEvent(line);
    if (event) evidence.see(event);
  }
  evidence.finish();
  return runs;
}

Deno.test("bash evidence: exit codes from Claude Code's results, not from the output", () => {
  const runs = run([
    call("a", "echo hi > a.txt"),
    result("a", "(Bash completed with no output)", false),
    call("b", "cat missing.txt"),
    result("b", "Exit code 1\ncat: missing.txt: No such file or directory", true),
    call("c", "echo 'Exit code 0'; exit 3"),
    result("c", [{ type: "text", text: "Exit code 3\nExit code 0" }], true),
    call("d", "echo 'Exit code 9'"),
    result("d", "Exit code 9", false),
    call("e", "sleep 600"),
    result("e", "Command timed out after 2m 0s", true),
  ]);
  assert.deepEqual(runs.map((r) => [r.command, r.exitCode]), [
    ["echo hi > a.txt", 0],
    ["cat missing.txt", 1],
    ["echo 'Exit code 0'; exit 3", 3],
    ["echo 'Exit code 9'", 0],
    ["sleep 600", null],
  ]);
  assert.ok(runs.every((r) => r.durationMs === 10), JSON.stringify(runs));
});

Deno.test("bash evidence: denied calls are no commands; unfinished and background ones have no exit code", () => {
  const runs = run([
    call("a", "git push"),
    JSON.stringify({
      type: "system",
      subtype: "permission_denied",
      tool_name: "Bash",
      tool_use_id: "a",
      message: "This command requires approval",
    }),
    result("a", "This command requires approval", true, [
      { id: "a", non_execution_kind: "user-rejected" },
    ]),
    call("b", "ls /nonexistent-dir"),
    result("b", "ls in '/nonexistent-dir' was blocked.", true, [
      { id: "b", non_execution_kind: "user-rejected" },
    ]),
    call("c", "npm run dev", { run_in_background: true }),
    result("c", "Command running in background with ID: x", false),
    call("d", "sleep 100"),
  ]);
  assert.deepEqual(runs.map((r) => [r.command, r.exitCode]), [
    ["npm run dev", null],
    ["sleep 100", null],
  ]);
});
