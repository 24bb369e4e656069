/**
 * What a backend's reported usage is counted as (issue 28, item 8): whole tokens, at least the
 * server's estimate of the request and the reply, at most what they allow.
 */
import assert from "node:assert/strict";
import type { ResponseTokens } from "../../../src/engines/types.ts";
import { LARGEST_CONTEXT_TOKENS } from "../../../src/models/tokens.ts";
import {
  countWithin,
  PROMPT_FACTOR,
  PROMPT_SLACK,
  REPLY_FACTOR,
  REPLY_SLACK,
  responseBounds,
  TurnTokens,
  wholeTokens,
} from "../../../src/jobs/spend/usage_bounds.ts";

const reported = (input: number, output: number, cacheRead = 0, cacheCreation = 0) => ({
  inputTokens: input,
  outputTokens: output,
  cacheReadTokens: cacheRead,
  cacheCreationTokens: cacheCreation,
});

function response(id: string, input: number, output: number, over: Partial<ResponseTokens> = {}) {
  return { id, reported: reported(input, output), requestTokens: 1000, replyTokens: 50, ...over };
}

Deno.test("wholeTokens: negative, NaN and infinite figures are no credit; a fraction counts up", () => {
  assert.deepEqual(
    [-1e9, -0.5, NaN, 0, 0.5, 7, 1e15, Infinity].map(wholeTokens),
    [0, 0, 0, 0, 1, 7, 1e15, Number.MAX_SAFE_INTEGER],
  );
});

Deno.test("a response counts between the server's estimates and what they allow", () => {
  const b = responseBounds(response("1", 0, 0));
  assert.deepEqual(b, {
    promptLow: 1000,
    promptHigh: PROMPT_FACTOR * 1000 + PROMPT_SLACK,
    outputLow: 50,
    outputHigh: REPLY_FACTOR * 50 + REPLY_SLACK,
  });
  // Negative and fractional figures count the estimates; an absurd one the most allowed.
  assert.deepEqual(countWithin(reported(-1e9, -1e9), b), reported(1000, 50));
  assert.deepEqual(countWithin(reported(0.5, 0.5), b), reported(1000, 50));
  assert.deepEqual(countWithin(reported(1e15, 1e15), b), reported(b.promptHigh, b.outputHigh));
  // Plausible figures stand; a prompt part from a cache counts as prompt.
  assert.deepEqual(countWithin(reported(1200, 80), b), reported(1200, 80));
  assert.deepEqual(countWithin(reported(200, 80, 900), b), reported(200, 80, 900));
  // Past the top, every part of the prompt is scaled down together.
  const scaled = countWithin(reported(1e15, 0, 1e15, -3), b);
  assert.equal(
    scaled.inputTokens + scaled.cacheReadTokens + scaled.cacheCreationTokens,
    b.promptHigh,
  );
  assert.ok(scaled.cacheReadTokens > 0 && scaled.cacheCreationTokens === 0);
});

Deno.test("never above the largest context, unless the server's own estimate is", () => {
  const big = responseBounds(response("1", 0, 0, { requestTokens: 500_000, replyTokens: 400_000 }));
  assert.equal(big.promptHigh, LARGEST_CONTEXT_TOKENS);
  assert.equal(big.outputHigh, LARGEST_CONTEXT_TOKENS);
  const huge = responseBounds(response("1", 0, 0, { requestTokens: 2_000_000 }));
  assert.equal(huge.promptHigh, 2_000_000, "a request the server sent counts whole");
  // What the server did not see of a request (a resumed session) may fill the context.
  const unseen = responseBounds(response("1", 0, 0, { requestUnseen: true }));
  assert.equal(unseen.promptHigh, LARGEST_CONTEXT_TOKENS);
});

Deno.test("TurnTokens: responses count once by id; the turn's total is held to their bounds", () => {
  const t = new TurnTokens();
  t.add(response("a", 900, 0));
  assert.equal(t.implausible, undefined, "a prompt under the estimate is normal (a kept prefix)");
  t.add(response("a", 1100, 60));
  t.add(response("b", -1e9, 0));
  assert.deepEqual(t.soFar, reported(1100 + 1000, 60 + 50));
  assert.match(t.implausible ?? "", /^prompt -1000000000 and output 0 tokens for a request of/);
  const total = (input: number, output: number) =>
    t.total({ ...reported(input, output), numTurns: 2.5, durationMs: -4 });
  // Claude Code's result event: the sum of what the backend reported, ends of replies included.
  assert.deepEqual(total(-999_998_900, 1e15), {
    ...reported(2000, 2 * (REPLY_FACTOR * 50 + REPLY_SLACK)),
    numTurns: 3,
    durationMs: 0,
  });
  assert.deepEqual(total(2100, 300), { ...reported(2100, 300), numTurns: 3, durationMs: 0 });
  assert.equal(new TurnTokens().total(undefined), undefined);
  // An engine that reports no responses is only made whole.
  assert.deepEqual(new TurnTokens().total({ ...reported(-5, 1e15), numTurns: 1, durationMs: 9 }), {
    ...reported(0, 1e15),
    numTurns: 1,
    durationMs: 9,
  });
});
