/**
 * The claims checker against its corpus: every expected mismatch flagged, and not one flag on
 * a message whose claims the evidence backs (0 false positives on the negatives).
 */
import assert from "node:assert/strict";
import { checkClaims } from "../../../src/jobs/checks/claims.ts";
import { CORPUS } from "./claims_corpus.ts";

for (const c of CORPUS) {
  Deno.test(`claims: ${c.name}`, () => {
    const found = checkClaims(c.text, c.evidence);
    assert.deepEqual(
      found.map((m) => m.kind).sort(),
      c.missed ? [] : [...c.expect].sort(),
      JSON.stringify(found, null, 2),
    );
  });
}

Deno.test("claims: the corpus has positives and negatives of every kind", () => {
  const negatives = CORPUS.filter((c) => c.expect.length === 0).length;
  assert.ok(CORPUS.length >= 40, `${CORPUS.length} messages`);
  assert.ok(negatives >= 15, `${negatives} negatives`);
  for (const kind of ["tests-pass", "changed-file", "ran-command", "no-changes"]) {
    assert.ok(CORPUS.some((c) => c.expect.includes(kind as never)), kind);
  }
});

Deno.test("claims: the reason names the evidence", () => {
  const [m] = checkClaims("Fixed it. The tests pass.", {
    commands: [{ command: "npm test", failed: false }, {
      command: "npm test -- -t parse",
      failed: true,
    }],
    changedFiles: [],
    changesComplete: true,
  });
  assert.deepEqual(m, {
    kind: "tests-pass",
    claim: "The tests pass",
    reason: "the last test command failed: npm test -- -t parse",
  });
});
