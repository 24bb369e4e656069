import assert from "node:assert/strict";
import { checkFindings, parseFindings } from "../../src/review/findings.ts";

const f = (file: string, line: number, severity: string, claim = "c") => ({
  file,
  line,
  severity,
  claim,
  evidence: "e",
});

Deno.test("findings: plain JSON, an array, a fenced block, trailing commas", () => {
  const plain = parseFindings(JSON.stringify({ findings: [f("a.ts", 1, "high")] }));
  assert.ok(plain.ok);
  assert.equal(plain.findings.length, 1);
  assert.equal(plain.repaired, undefined);
  const array = parseFindings(JSON.stringify([f("a.ts", 1, "low")]));
  assert.ok(array.ok && array.findings[0]!.severity === "low");
  const fenced = parseFindings(
    'Here you go:\n```json\n{"findings": [{"file": "a.ts", "line": 2, "severity": "High", ' +
      '"claim": "x", "evidence": "y"},]}\n```\nDone.',
  );
  assert.ok(fenced.ok, JSON.stringify(fenced));
  assert.equal(fenced.findings[0]!.severity, "high");
  assert.match(fenced.repaired!, /fenced code block/);
});

Deno.test("findings: entries out of shape are counted, prose is refused clearly", () => {
  const mixed = parseFindings(JSON.stringify({
    findings: [f("a.ts", 3, "medium"), f("a.ts", 0, "high"), f("a.ts", 3, "urgent"), { file: "x" }],
  }));
  assert.ok(mixed.ok);
  assert.equal(mixed.findings.length, 1);
  assert.equal(mixed.malformed, 3);
  const prose = parseFindings("The code looks fine to me, no problems.");
  assert.deepEqual(prose, { ok: false, reason: "no JSON found in it" });
  const other = parseFindings('{"verdict": "ok"}');
  assert.ok(!other.ok);
  assert.match(other.reason, /no "findings" list/);
});

Deno.test("findings: only lines inside the diff's hunks are kept, sorted by severity", () => {
  const lines = new Map<string, Array<[number, number]>>([
    ["src/a.ts", [[10, 14], [40, 40]]],
    ["b.ts", [[1, 3]]],
  ]);
  const { kept, dropped } = checkFindings(
    [
      f("src/a.ts", 12, "low", "l"),
      f("b.ts", 2, "critical", "c"),
      f("./src/a.ts", 40, "high", "h"),
      f("/repo/src/a.ts", 10, "info", "i"),
      f("src/a.ts", 15, "critical", "outside"),
      f("other.ts", 1, "high", "not in diff"),
    ].map((x) => ({ ...x, severity: x.severity as "low" })),
    lines,
    "/repo",
  );
  assert.deepEqual(kept.map((k) => `${k.severity} ${k.file}:${k.line}`), [
    "critical b.ts:2",
    "high src/a.ts:40",
    "low src/a.ts:12",
    "info src/a.ts:10",
  ]);
  assert.deepEqual(dropped.map((d) => d.claim), ["outside", "not in diff"]);
});
