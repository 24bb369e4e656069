import assert from "node:assert/strict";
import { setTimeout as delay } from "node:timers/promises";
import { LIVE_CHARS, LiveOutput } from "../../../../src/engines/native/tools/live_output.ts";
import {
  watchFailures,
  withoutReport,
} from "../../../../src/engines/native/tools/masked_failures.ts";

function collect(options: ConstructorParameters<typeof LiveOutput>[1] = {}) {
  const out: string[] = [];
  const live = new LiveOutput((text) => out.push(text), options);
  return { live, out, text: () => out.join("") };
}

Deno.test("LiveOutput: a command that ends early shows nothing live (its result holds it)", async () => {
  const { live, out } = collect({ afterMs: 200 });
  live.push("done\n");
  await delay(50);
  live.stop();
  await delay(300);
  assert.deepEqual(out, []);
});

Deno.test("LiveOutput: past the wait, what came so far goes out, then whole lines as they come", async () => {
  const { live, out, text } = collect({ afterMs: 50 });
  live.push("one\ntw");
  await delay(150);
  // The whole line went; the half line waits for its end.
  assert.equal(text(), "one\n");
  live.push("o\nthree");
  await delay(400);
  assert.equal(text(), "one\ntwo\n");
  // A line without its end goes out once it waited (a progress bar), and at the end anyway.
  await delay(1600);
  assert.equal(text(), "one\ntwo\nthree\n");
  live.push("last");
  live.stop();
  assert.equal(text(), "one\ntwo\nthree\nlast\n");
  live.push("after the end\n");
  await delay(300);
  assert.equal(out.at(-1), "last\n");
});

Deno.test("LiveOutput: past its cap it notes so and samples the latest line; bounded", async () => {
  const { live, text } = collect({ afterMs: 10, sampleMs: 100 });
  const line = `${"x".repeat(99)}\n`;
  for (let i = 0; i < 2000; i++) live.push(line);
  await delay(400);
  live.push("progress 50%\n");
  await delay(300);
  for (let i = 0; i < 2000; i++) live.push(line);
  live.push("progress 100%\n");
  live.stop();
  const shown = text();
  // The first LIVE_CHARS characters whole, then a note, then a few sampled lines.
  assert.ok(shown.startsWith(line.repeat(Math.floor(LIVE_CHARS / line.length))), "whole first");
  assert.match(
    shown,
    /\n\[live output past 65536 characters: from here its latest line every 0\.1 s; the command's result keeps the end of its output\]\n/,
  );
  assert.match(shown, /\nprogress 50%\n/);
  assert.ok(shown.endsWith("progress 100%\n"), shown.slice(-200));
  assert.ok(shown.length < LIVE_CHARS + 1000, `${shown.length} characters`);
});

Deno.test("LiveOutput: what the server adds to the output is taken out", async () => {
  const marker = "__od_masked_0123";
  const { live, text } = collect({
    afterMs: 10,
    clean: (t) => t.replace(new RegExp(`(^|\\n)${marker} [^\\n]*`, "g"), ""),
  });
  live.push("tests ran\n");
  await delay(100);
  live.push(`\n${marker} 1 npm test`);
  live.stop();
  assert.equal(text(), "tests ran\n");
});

/**
 * Past the cap the latest line is sampled, and the masked-failures report (the real watcher's
 * lines, each begun and ended with a newline) was such a line: its marker showed in the live
 * output (found by review).
 */
Deno.test("LiveOutput: past its cap, a report line sampled last is taken out too", async () => {
  const watched = watchFailures("false; true")!;
  const { live, text } = collect({
    afterMs: 10,
    sampleMs: 50,
    clean: (t) => withoutReport(t, watched),
  });
  live.push(`${"x".repeat(99)}\n`.repeat(Math.ceil(LIVE_CHARS / 100) + 10));
  await delay(100);
  live.push(`\n${watched.marker} 1 false\n`);
  await delay(300);
  live.stop();
  assert.match(text(), /\[live output past 65536 characters/);
  assert.doesNotMatch(text(), new RegExp(watched.marker));
});
