/**
 * The claims checker's precision and recall on its corpus (tests/jobs/claims_corpus.ts), per
 * kind of claim and in all, and how long a check takes. Run: deno run -A bench/claims_bench.ts
 */
import "./support/help.ts";
import { checkClaims, type ClaimKind } from "../src/jobs/checks/claims.ts";
import { CORPUS } from "../tests/jobs/checks/claims_corpus.ts";

const KINDS: ClaimKind[] = ["tests-pass", "changed-file", "ran-command", "no-changes"];
const counts = new Map(KINDS.map((k) => [k, { tp: 0, fp: 0, fn: 0 }]));
let falseOnNegatives = 0;
for (const c of CORPUS) {
  const found = checkClaims(c.text, c.evidence).map((m) => m.kind);
  for (const kind of KINDS) {
    const n = counts.get(kind)!;
    const want = c.expect.filter((k) => k === kind).length;
    const got = found.filter((k) => k === kind).length;
    n.tp += Math.min(want, got);
    n.fp += Math.max(0, got - want);
    n.fn += Math.max(0, want - got);
  }
  if (c.expect.length === 0 && found.length > 0) falseOnNegatives++;
}
const pct = (x: number) => Number.isFinite(x) ? `${(x * 100).toFixed(1)}%` : "n/a";
const line = (label: string, n: { tp: number; fp: number; fn: number }) =>
  `${label.padEnd(14)} precision ${pct(n.tp / (n.tp + n.fp)).padStart(6)}  recall ${
    pct(n.tp / (n.tp + n.fn)).padStart(6)
  }  (tp ${n.tp}, fp ${n.fp}, fn ${n.fn})`;
const total = { tp: 0, fp: 0, fn: 0 };
console.log(
  `claims corpus: ${CORPUS.length} messages, ${
    CORPUS.filter((c) => c.expect.length === 0).length
  } negatives`,
);
for (const [kind, n] of counts) {
  console.log(line(kind, n));
  total.tp += n.tp;
  total.fp += n.fp;
  total.fn += n.fn;
}
console.log(line("all", total));
console.log(`negatives with a flag (false positives): ${falseOnNegatives}`);
const rounds = 200;
const t0 = performance.now();
for (let i = 0; i < rounds; i++) for (const c of CORPUS) checkClaims(c.text, c.evidence);
const perCheck = (performance.now() - t0) / (rounds * CORPUS.length);
console.log(`one check: ${(perCheck * 1000).toFixed(1)} µs on average`);
