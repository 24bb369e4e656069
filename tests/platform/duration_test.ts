/**
 * The one duration parser. It replaced two: `config --job-timeout`'s (ms, s, m, h, or bare
 * milliseconds) and `jobs prune --older-than`'s (m or min, h, d, w, any case). Each now takes
 * the other's units; a bare number stays the caller's choice.
 */
import assert from "node:assert/strict";
import { parseDuration } from "../../src/platform/duration.ts";

Deno.test("parseDuration: every unit, fractions, any case, spaces around", () => {
  const cases: Array<[string, number]> = [
    ["1500ms", 1500],
    ["90s", 90_000],
    ["1.5s", 1500],
    ["30m", 1_800_000],
    ["5min", 300_000],
    ["2h", 7_200_000],
    [" 2 h ", 7_200_000],
    ["12H", 43_200_000],
    ["7d", 604_800_000],
    ["2w", 1_209_600_000],
    ["0m", 0],
  ];
  for (const [text, ms] of cases) assert.equal(parseDuration(text), ms, text);
});

Deno.test("parseDuration: a bare number is milliseconds only where the caller says so", () => {
  assert.equal(parseDuration("5000"), undefined);
  assert.equal(parseDuration("5000", { bare: "ms" }), 5000);
  assert.equal(parseDuration("2.5", { bare: "ms" }), 3);
});

Deno.test("parseDuration: what is not one number and one unit is refused", () => {
  for (const bad of ["", "s", "-5s", "1e3", "1h30m", "7 parsecs", "5 sec", "d7", "1,5h"]) {
    assert.equal(parseDuration(bad, { bare: "ms" }), undefined, bad);
  }
});
