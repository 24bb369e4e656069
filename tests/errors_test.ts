import assert from "node:assert/strict";
import { DelegateError, failureFacts, failureText } from "../src/errors.ts";

Deno.test("a DelegateError built from parts says them in one sentence and keeps them", () => {
  const parts = {
    action: "Cannot start job",
    facts: 'model "m" was retired by Ollama (HTTP 410)',
    advice: "Pick another model; see ollama_models",
  };
  const e = new DelegateError(parts);
  assert.equal(
    e.message,
    'Cannot start job: model "m" was retired by Ollama (HTTP 410). Pick another model; ' +
      "see ollama_models",
  );
  assert.deepEqual(e.failureParts, parts);
  assert.equal(failureText(parts), e.message);
});

Deno.test("failureFacts: the action and facts of parts, the whole message otherwise", () => {
  assert.equal(
    failureFacts(new DelegateError({ facts: "Cannot reach x (ECONNREFUSED)", advice: "Start x" })),
    "Cannot reach x (ECONNREFUSED)",
  );
  // A message not built from parts is never cut, whatever it holds.
  const plain = "Cannot reach x. Start it with y";
  assert.equal(failureFacts(new DelegateError(plain)), plain);
  assert.equal(failureFacts(new Error(plain)), plain);
  assert.equal(failureFacts("text"), "text");
});
