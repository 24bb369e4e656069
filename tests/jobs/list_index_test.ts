import assert from "node:assert/strict";
import { allIds } from "../../src/jobs/list_index.ts";
import { isValidId } from "../../src/jobs/ids.ts";

Deno.test("list index: the one-pass check of the index's names answers as isValidId does", () => {
  const ids = Array.from({ length: 50 }, () => crypto.randomUUID());
  assert.equal(allIds(ids.join(","), ids.length), true);
  const swaps: Array<[string, string]> = [
    // A fifth dash in place of a digit: the length and the four places still look right.
    ["abcdef00-0000-4000-8000-000000000000", "abcdef00-0000-4000-8000-00000-000000"],
    ["abcdef00-0000-4000-8000-000000000000", "ABCDEF00-0000-4000-8000-000000000000"],
    ["abcdef00-0000-4000-8000-000000000000", "abcdef00-0000-4000-8000-00000000000g"],
    ["abcdef00-0000-4000-8000-000000000000", "abcdef0-00000-4000-8000-000000000000"],
  ];
  for (const [good, bad] of swaps) {
    assert.equal(isValidId(good) && good === good.toLowerCase(), true, good);
    assert.equal(isValidId(bad) && bad === bad.toLowerCase(), false, bad);
    const list = [...ids.slice(0, 20), bad, ...ids.slice(20)];
    assert.equal(allIds(list.join(","), list.length), false, bad);
    assert.equal(allIds([...ids, good].join(","), ids.length + 1), true, good);
  }
  // A count that does not match the text.
  assert.equal(allIds(ids.join(","), ids.length + 1), false);
});
