/**
 * The verdict word a job's state carries (`interrupted (not verified)`): an ended job with a
 * check that never ran says so, also when it ended before the server recorded that the check
 * did not run (the server stopped while the turn was being stopped: the prompt hook and the
 * listings read such a record).
 */
import assert from "node:assert/strict";
import { stateWithVerdict, verifyMark } from "../../../src/jobs/checks/verify_words.ts";
import { baseRecord } from "../../cli/jobs_support.ts";

const checks = { verify: ["deno task test"] };

Deno.test("verifyMark: an ended job whose check never ran is not verified, recorded or not", () => {
  const interrupted = baseRecord("a", "s", { state: "interrupted", checks });
  assert.equal(verifyMark(interrupted), "not verified");
  assert.equal(stateWithVerdict(interrupted, "interrupted"), "interrupted (not verified)");
  const recorded = { ...interrupted, verification: { rounds: [], verdict: "not-run" as const } };
  assert.equal(verifyMark(recorded), "not verified");
  assert.equal(verifyMark(baseRecord("b", "s", { state: "cancelled", checks })), "not verified");
});

Deno.test("verifyMark: no word for a job without a check, nor for one still running", () => {
  assert.equal(verifyMark(baseRecord("a", "s", { state: "interrupted" })), undefined);
  assert.equal(verifyMark(baseRecord("b", "s", { state: "running", checks })), undefined);
  const passed = baseRecord("c", "s", {
    checks,
    verification: { rounds: [], verdict: "passed" },
  });
  assert.equal(verifyMark(passed), "verified");
  const failed = { ...passed, verification: { rounds: [], verdict: "failed" as const } };
  assert.equal(verifyMark(failed), "verify failed");
});
