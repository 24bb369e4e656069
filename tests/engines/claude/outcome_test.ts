/** A claude turn whose answer is a tool call written as text: failed, with a warning. */
import assert from "node:assert/strict";
import { withUnrunCall } from "../../../src/engines/claude/outcome.ts";
import type { TurnOutcome, TurnSink } from "../../../src/engines/types.ts";

const outcome = (resultText: string, ok = true): TurnOutcome => ({
  ok,
  resultText,
  exitCode: 0,
  signal: null,
  permissionDenials: [],
});

function sink(): TurnSink & { warnings: string[] } {
  const warnings: string[] = [];
  return {
    warnings,
    activity: () => {},
    toolCall: () => {},
    warning: (t) => warnings.push(t),
    sessionStarted: () => {},
    childStarted: () => {},
  };
}

Deno.test("withUnrunCall: an answer that is a call written as text fails the turn, with a warning naming it and the switch", () => {
  const s = sink();
  const got = withUnrunCall(
    outcome('<tool_call>\n{"name": "Bash", "arguments": {"command": "npm test"}}\n</tool_call>'),
    ["Bash", "Read", "Edit"],
    s,
  );
  assert.equal(got.ok, false);
  assert.match(got.errorText ?? "", /^tool_call_unparsed: the turn ended on a tool call/);
  assert.equal(got.resultText.includes("npm test"), true, "the answer is kept");
  assert.deepEqual(s.warnings, [
    'the model wrote a tool call as text (a call to "Bash" in the hermes text format); Claude ' +
    "Code runs only structured tool calls, so it did not run and the turn ended on it. The " +
    'native engine runs such calls: start the job again with engine: "native" (or make it ' +
    "the default: ollama-delegate config --engine native)",
  ]);
  // Leaked tokens with no readable call are said too.
  const t = sink();
  assert.equal(withUnrunCall(outcome("<｜tool▁calls▁begin｜>MMMM"), ["Bash"], t).ok, false);
  assert.match(t.warnings[0]!, /the special text "<\|tool_calls_begin\|>"/);
});

Deno.test("withUnrunCall: an ordinary answer, one that quotes a call, and a failed turn are left as they are", () => {
  for (
    const text of [
      "All 42 tests pass.",
      'A Hermes model writes `<tool_call>{"name": "Bash"}</tool_call>` for a call.',
      'Here is the call format:\n\n```json\n{"name": "Bash", "arguments": {}}\n```\n\nThat is all.',
    ]
  ) {
    const s = sink();
    const o = outcome(text);
    assert.equal(withUnrunCall(o, ["Bash"], s), o, text);
    assert.deepEqual(s.warnings, []);
  }
  const failed = outcome('{"name": "Bash", "arguments": {"command": "ls"}}', false);
  assert.equal(withUnrunCall(failed, ["Bash"], sink()), failed);
});
