/**
 * formatCount writes what toLocaleString("en-US") writes, without loading ICU (the comparison
 * here does load it, in the test process only).
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { formatCount } from "../../src/platform/count_text.ts";

const icu = (n: number) => n.toLocaleString("en-US");

Deno.test("formatCount: the figures messages show", () => {
  assert.equal(formatCount(0), "0");
  assert.equal(formatCount(999), "999");
  assert.equal(formatCount(1000), "1,000");
  assert.equal(formatCount(4096), "4,096");
  assert.equal(formatCount(1_234_567), "1,234,567");
  assert.equal(formatCount(-32_768), "-32,768");
  assert.equal(formatCount(1234.5), "1,234.5");
  assert.equal(formatCount(0.4285), "0.429");
});

Deno.test("formatCount: the same text as en-US for edge values", () => {
  for (
    const n of [
      -0,
      -0.0001,
      0.0005,
      2.0005,
      999.9996,
      1e20,
      2 ** 53,
      1e-7,
      NaN,
      Infinity,
      -Infinity,
    ]
  ) {
    assert.equal(formatCount(n), icu(n), String(n));
  }
});

Deno.test("formatCount: the same text as en-US for any integer or double below 1e21", () => {
  fc.assert(
    fc.property(
      fc.oneof(
        fc.integer({ min: -(2 ** 53), max: 2 ** 53 }),
        fc.double({ min: -1e20, max: 1e20, noNaN: true }),
        fc.double({ min: -1e4, max: 1e4, noNaN: true }),
      ),
      (n) => formatCount(n) === icu(n),
    ),
    { numRuns: 20_000 },
  );
});
