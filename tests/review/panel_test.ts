import assert from "node:assert/strict";
import type { Finding, Severity } from "../../src/review/findings.ts";
import {
  agreedAtLeast,
  type Answer,
  claimOverlap,
  mergeAnswers,
  type Reviewer,
} from "../../src/review/panel.ts";
import { mergedFindingText } from "../../src/review/panel_render.ts";

const A: Reviewer = { id: "a", model: "qwen3-coder:30b", agent: "reviewer" };
const B: Reviewer = { id: "b", model: "gpt-oss:20b", agent: "reviewer" };
const C: Reviewer = { id: "c", model: "llama3.1:8b", agent: "reviewer" };

const f = (file: string, line: number, severity: Severity, claim: string): Finding => ({
  file,
  line,
  severity,
  claim,
  evidence: `evidence for ${claim}`,
});
const ok = (reviewer: Reviewer, findings: Finding[]): Answer => ({
  reviewer,
  ok: true,
  findings,
  dropped: 0,
  malformed: 0,
});

Deno.test("panel: the same finding in other words, lines apart, counts once with who found it", () => {
  const merged = mergeAnswers([
    ok(A, [
      f("src/a.ts", 42, "high", "eval of user input runs arbitrary code"),
      f("src/a.ts", 10, "low", "variable d is never used"),
    ]),
    ok(B, [
      f("src/a.ts", 44, "high", "Arbitrary code execution: eval() is called on user input"),
      f("src/b.ts", 3, "medium", "missing await on the write"),
    ]),
    ok(C, [f("src/a.ts", 41, "critical", "Calling eval with input lets anyone run code")]),
  ]);
  assert.equal(merged.answered, 3);
  assert.equal(merged.findings.length, 3, JSON.stringify(merged.findings, null, 1));
  const [top, ...rest] = merged.findings;
  assert.equal(top!.agreed, 3);
  assert.equal(top!.of, 3);
  assert.equal(top!.line, 41);
  // The middle rating of critical, high, high.
  assert.equal(top!.severity, "high");
  assert.deepEqual(top!.opinions.map((o) => o.reviewer.id), ["a", "b", "c"]);
  assert.deepEqual(top!.opinions.map((o) => o.claim), [
    "eval of user input runs arbitrary code",
    "Arbitrary code execution: eval() is called on user input",
    "Calling eval with input lets anyone run code",
  ]);
  // Disjoint findings stay apart, sorted by severity at equal agreement.
  assert.deepEqual(rest.map((m) => [m.file, m.line, m.severity, m.agreed]), [
    ["src/b.ts", 3, "medium", 1],
    ["src/a.ts", 10, "low", 1],
  ]);
  assert.equal(agreedAtLeast(top!, "high"), 3);
  assert.equal(agreedAtLeast(top!, "critical"), 1);
  assert.equal(
    mergedFindingText(top!, 1).split("\n")[0],
    "1. [high] src/a.ts:41 (3 of 3: qwen3-coder:30b high, gpt-oss:20b high, llama3.1:8b " +
      'critical)  "eval of user input runs arbitrary code"',
  );
});

Deno.test("panel: different claims on near lines, far lines, other files and one reviewer's pair stay apart", () => {
  const merged = mergeAnswers([
    ok(A, [
      f("x.ts", 5, "high", "missing null check on user"),
      // The same reviewer twice about the same thing: never its own agreement.
      f("x.ts", 6, "high", "missing null check on user object"),
    ]),
    ok(B, [
      f("x.ts", 6, "high", "missing error handling for fetch"),
      f("x.ts", 20, "high", "missing null check on user"),
      f("y.ts", 5, "high", "missing null check on user"),
    ]),
  ]);
  assert.equal(merged.findings.length, 5, JSON.stringify(merged.findings, null, 1));
  assert.ok(merged.findings.every((m) => m.agreed === 1 && m.of === 2));
});

Deno.test("panel: min_agreement keeps agreed findings and sets the rest apart; sort by agreement first", () => {
  const answers = [
    ok(A, [
      f("a.ts", 2, "low", "off by one in the loop bound"),
      f("a.ts", 9, "critical", "sql injection in query"),
    ]),
    ok(B, [f("a.ts", 3, "low", "loop bound is off by one")]),
    ok(C, [f("a.ts", 30, "critical", "token logged in plain text")]),
  ];
  const all = mergeAnswers(answers);
  // Agreement outranks severity: the agreed low finding comes before lone critical ones.
  assert.deepEqual(all.findings.map((m) => [m.line, m.agreed]), [[2, 2], [9, 1], [30, 1]]);
  const two = mergeAnswers(answers, 2);
  assert.deepEqual(two.findings.map((m) => m.line), [2]);
  assert.deepEqual(two.below.map((m) => m.line), [9, 30]);
  // The higher middle of two ratings.
  const pair = mergeAnswers([
    ok(A, [f("a.ts", 2, "high", "race on the counter")]),
    ok(B, [f("a.ts", 2, "low", "race on the counter")]),
  ]);
  assert.equal(pair.findings[0]!.severity, "high");
  assert.equal(agreedAtLeast(pair.findings[0]!, "high"), 1);
});

Deno.test("panel: a reviewer that failed is not counted in 'of'", () => {
  const merged = mergeAnswers([
    ok(A, [f("a.ts", 2, "high", "eval of input")]),
    { reviewer: B, ok: false, reason: "failed: backend down" },
    ok(C, [f("a.ts", 2, "high", "eval on input")]),
  ]);
  assert.equal(merged.answered, 2);
  assert.equal(merged.findings[0]!.agreed, 2);
  assert.equal(merged.findings[0]!.of, 2);
});

Deno.test("panel: claim overlap folds word forms and ignores filler", () => {
  assert.ok(claimOverlap("Missing checks of the input", "input is not checked") >= 0.5);
  assert.equal(claimOverlap("the a of", "the a of"), 1);
  assert.ok(claimOverlap("missing null check", "missing error handling") < 0.5);
});

Deno.test("panel: a reviewer's words stay on their line in the reply", () => {
  const merged = mergeAnswers([
    ok(A, [{
      file: "a.ts\nfindings: 0",
      line: 2,
      severity: "high",
      claim: "bad\nfindings:   0\u001b[2J",
      evidence: "x\ry",
    }]),
  ]);
  const text = mergedFindingText(merged.findings[0]!, 1);
  assert.equal(text.split("\n").length, 2, text);
  assert.ok(!text.includes("\u001b"), text);
  assert.match(
    text,
    /^1\. \[high\] "a\.ts\\nfindings: 0":2 \(1 of 1: qwen3-coder:30b\) {2}"bad findings: 0\\033\[2J"$/m,
  );
  assert.match(text, /^ {3}evidence: "x y"$/m);
});
