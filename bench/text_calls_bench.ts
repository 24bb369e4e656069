/**
 * Tool calls written as text: how well the native engine's recogniser classifies the labelled
 * corpus of realistic replies (tests/support/text_call_corpus.ts): per format, the replies
 * whose calls it recovered exactly as labelled, and, for replies that hold no call (prose that
 * quotes a call, JSON that is not a call, a call to a tool not offered...), how many it took
 * for a call anyway (false positives). Also the time per reply.
 *
 *   deno run -A bench/text_calls_bench.ts
 */
import { recoverTextCalls } from "../src/engines/native/text_calls/recover_calls.ts";
import { CORPUS_TOOLS, TEXT_CALL_CORPUS } from "../tests/support/text_call_corpus.ts";

const rows = new Map<string, { total: number; right: number }>();
let falsePositives = 0;
let negatives = 0;
const started = performance.now();
for (const c of TEXT_CALL_CORPUS) {
  const tools = CORPUS_TOOLS.filter((t) => c.tools.includes(t.name));
  const got = recoverTextCalls(c.text, tools);
  const calls = got?.calls.filter((x) => !x.error).map((x) => ({
    name: x.name,
    arguments: x.arguments,
  })) ?? [];
  const right = JSON.stringify(calls) === JSON.stringify(c.calls) &&
    !got?.calls.some((x) => x.error);
  const key = c.format ?? "no call";
  const row = rows.get(key) ?? { total: 0, right: 0 };
  row.total++;
  if (right) row.right++;
  rows.set(key, row);
  if (c.calls.length === 0) {
    negatives++;
    if (got) falsePositives++;
  }
}
const ms = performance.now() - started;
const total = TEXT_CALL_CORPUS.length;
const right = [...rows.values()].reduce((n, r) => n + r.right, 0);
console.log("format            replies  classified right");
for (const [format, r] of [...rows].sort()) {
  console.log(`${format.padEnd(18)}${String(r.total).padStart(7)}  ${r.right}`);
}
console.log(
  `\n${right} of ${total} replies classified right (${(100 * right / total).toFixed(1)}%); ` +
    `${falsePositives} false positives among ${negatives} replies without a call; ` +
    `${(ms / total).toFixed(2)} ms per reply`,
);
