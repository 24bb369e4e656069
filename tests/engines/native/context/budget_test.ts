import assert from "node:assert/strict";
import {
  ASSUMED_CONTEXT_TOKENS,
  contextBucket,
  contextCap,
  MAX_CLAIMED_CONTEXT_TOKENS,
  replyReserve,
} from "../../../../src/engines/native/context/budget.ts";

Deno.test("contextCap: the smaller of the model's maximum and maxContext, and where it came from", () => {
  assert.deepEqual(contextCap(32768, 0), { tokens: 32768, source: "model" });
  assert.deepEqual(contextCap(32768, 16384), { tokens: 16384, source: "setting" });
  assert.deepEqual(contextCap(8192, 16384), { tokens: 8192, source: "model" });
  // The setting is all we know when the backend does not report the model's context.
  assert.deepEqual(contextCap(undefined, 50_000), { tokens: 50_000, source: "setting" });
  assert.deepEqual(contextCap(undefined, 0), { tokens: ASSUMED_CONTEXT_TOKENS, source: "assumed" });
});

Deno.test("contextCap: a backend's claim over a million tokens is clamped unless maxContext says more", () => {
  assert.equal(MAX_CLAIMED_CONTEXT_TOKENS, 1_048_576);
  assert.deepEqual(contextCap(1_000_000_000, 0), {
    tokens: MAX_CLAIMED_CONTEXT_TOKENS,
    source: "clamped",
    claimed: 1_000_000_000,
  });
  assert.deepEqual(contextCap(1_048_576, 0), { tokens: 1_048_576, source: "model" });
  // The user's word is taken, up to what the model claims.
  assert.deepEqual(contextCap(1_000_000_000, 4_000_000), { tokens: 4_000_000, source: "setting" });
  assert.deepEqual(contextCap(2_000_000, 4_000_000), { tokens: 2_000_000, source: "model" });
});

Deno.test("contextBucket: powers of two from 8k, never below the previous one, at most the cap", () => {
  assert.equal(contextBucket(100, 131072), 8192);
  assert.equal(contextBucket(8193, 131072), 16384);
  assert.equal(contextBucket(40_000, 131072), 65536);
  assert.equal(contextBucket(40_000, 50_000), 50_000);
  assert.equal(contextBucket(100, 131072, 32768), 32768, "it never shrinks");
  assert.equal(contextBucket(100, 4096), 4096, "a model smaller than the first step");
});

Deno.test("replyReserve: 8k, or a quarter of a small window", () => {
  assert.equal(replyReserve(131072), 8192);
  assert.equal(replyReserve(16384), 4096);
  assert.equal(replyReserve(4096), 1024);
});
