import assert from "node:assert/strict";
import { cutTo } from "../../src/platform/text_cut.ts";

Deno.test("cutTo: at most max characters, the ellipsis included", () => {
  assert.equal(cutTo("abcdef", 6), "abcdef");
  assert.equal(cutTo("abcdefg", 6), "abcde…");
  assert.equal(cutTo("abcdefg", 6).length, 6);
  assert.equal(cutTo("", 3), "");
  assert.equal(cutTo("ab", 1), "…");
});
