import assert from "node:assert/strict";
import { isDelegateError } from "../../src/errors.ts";
import { requestChecks } from "../../src/intake/checks.ts";

Deno.test("requestChecks: the request's verify, one command or several, with its budgets", () => {
  assert.deepEqual(requestChecks({ verify: "npm test", budgetTokens: 5000, budgetUsd: 0.5 }), {
    verify: ["npm test"],
    budgetTokens: 5000,
    budgetUsd: 0.5,
  });
  assert.deepEqual(requestChecks({ verify: ["a", "b"], verifyRounds: 2 }), {
    verify: ["a", "b"],
    verifyRounds: 2,
  });
  assert.deepEqual(requestChecks({}), {});
});

Deno.test("requestChecks: the agent's verify and rounds when the request names none", () => {
  const agent = { verify: ["deno test"], verifyRounds: 3 };
  assert.deepEqual(requestChecks({}, agent), { verify: ["deno test"], verifyRounds: 3 });
  // The request's own verify replaces the agent's, and with it the agent's rounds.
  assert.deepEqual(requestChecks({ verify: "make" }, agent), { verify: ["make"] });
});

Deno.test("requestChecks: verify_rounds needs a verify, the request's, the agent's or the session's", () => {
  assert.throws(
    () => requestChecks({ verifyRounds: 2 }),
    (e: unknown) =>
      isDelegateError(e) && e.message.startsWith("Cannot use verify_rounds without verify"),
  );
  assert.deepEqual(requestChecks({ verifyRounds: 2 }, undefined, { verify: ["npm test"] }), {
    verifyRounds: 2,
  });
});
