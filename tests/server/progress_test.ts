/** Progress notifications of one call (src/server/progress.ts): they only grow. */
import assert from "node:assert/strict";
import { progressOf, type ProgressTarget } from "../../src/server/progress.ts";

function target(token?: string) {
  const sent: Array<{ progress: number; total?: number; message?: string }> = [];
  const t: ProgressTarget = {
    ...(token !== undefined ? { _meta: { progressToken: token } } : {}),
    sendNotification: (n) => {
      assert.equal(n.params.progressToken, token);
      sent.push(n.params);
      return Promise.resolve();
    },
  };
  return { t, sent };
}

Deno.test("progress: each notification's progress is above the last, even in the same millisecond", () => {
  const { t, sent } = target("tok");
  const report = progressOf(t, 60)!;
  // A panel's reviewers tick at the same moment; whole seconds gave equal values (and a
  // client may drop or reject a notification whose progress does not increase).
  for (let i = 0; i < 5; i++) report((s) => `reviewer ${i}, ${s}s`);
  assert.equal(sent.length, 5);
  for (let i = 1; i < sent.length; i++) assert.ok(sent[i]!.progress > sent[i - 1]!.progress);
  assert.ok(sent.every((p) => p.total === 60));
  assert.equal(sent[0]!.message, "reviewer 0, 0s");
});

Deno.test("progress: none without a token, and no total when the call has no limit", () => {
  assert.equal(progressOf(target().t), undefined);
  const { t, sent } = target("x");
  progressOf(t)!((s) => `${s}s`);
  assert.equal("total" in sent[0]!, false);
});
