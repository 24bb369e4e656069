import assert from "node:assert/strict";
import { readBounded, sample, sizeText } from "../../src/backends/bounded.ts";
import { sseEvents } from "../../src/backends/sse.ts";

const enc = new TextEncoder();

function stream(parts: readonly (string | Uint8Array)[]): ReadableStream<Uint8Array> {
  return ReadableStream.from(parts.map((p) => (typeof p === "string" ? enc.encode(p) : p)));
}

/** An endless stream that counts what was pulled and whether it was cancelled. */
function endless(chunk: Uint8Array): {
  body: ReadableStream<Uint8Array>;
  pulled: () => number;
  cancelled: () => boolean;
} {
  let pulled = 0;
  let cancelled = false;
  const body = new ReadableStream<Uint8Array>({
    pull(c) {
      pulled += chunk.length;
      c.enqueue(chunk.slice());
    },
    cancel() {
      cancelled = true;
    },
  }, { highWaterMark: 0 });
  return { body, pulled: () => pulled, cancelled: () => cancelled };
}

Deno.test("sseEvents: a BOM, an `error:` line, a last event without blank line", async () => {
  const events = [];
  for await (
    const e of sseEvents(stream(["\uFEFFdata: 1\n\n", 'error: {"message":"x"}\n\n', "data: 2"]), {
      maxBytes: 100,
      tooLong: () => new RangeError("long"),
      notSse: (w) => new SyntaxError(w),
    })
  ) events.push(e);
  assert.deepEqual(events, [
    { event: "message", data: "1" },
    { event: "error", data: '{"message":"x"}' },
    { event: "message", data: "2" },
  ]);
});

Deno.test("sseEvents: a line that is no field is an error naming it; the body is cancelled", async () => {
  const { body, cancelled } = endless(enc.encode("<html><body>hello</body></html>\n"));
  await assert.rejects(
    async () => {
      for await (
        const _ of sseEvents(body, {
          maxBytes: 100,
          tooLong: () => new RangeError("long"),
          notSse: (w) => new SyntaxError(w),
        })
      ) {
        // Nothing arrives.
      }
    },
    {
      name: "SyntaxError",
      message: 'a line that is not server-sent events: "<html><body>hello</body></html>"',
    },
  );
  assert.equal(cancelled(), true);
});

Deno.test("sseEvents: data lines of one event count together against the cap", async () => {
  const { body, pulled, cancelled } = endless(enc.encode("data: 0123456789\n"));
  await assert.rejects(async () => {
    for await (
      const _ of sseEvents(body, {
        maxBytes: 1000,
        tooLong: () => new RangeError("long"),
        notSse: (w) => new SyntaxError(w),
      })
    ) {
      // The event never ends.
    }
  }, RangeError);
  assert.ok(pulled() < 2000, `pulled ${pulled()}`);
  assert.equal(cancelled(), true);
});

Deno.test("readBounded: stops at the cap and cancels the rest; whole bodies are complete", async () => {
  const { body, pulled, cancelled } = endless(new Uint8Array(1000).fill(65));
  const read = await readBounded(body, 2500);
  assert.equal(read.complete, false);
  assert.equal(read.bytes.length, 2500);
  assert.equal(cancelled(), true);
  assert.ok(pulled() <= 3000);
  const whole = await readBounded(stream(["ab", "cd"]), 4);
  assert.deepEqual(whole, { bytes: enc.encode("abcd"), complete: true });
  assert.deepEqual(await readBounded(null, 10), { bytes: new Uint8Array(0), complete: true });
});

Deno.test("sizeText and sample", () => {
  assert.equal(sizeText(16 * 1024 * 1024), "16 MiB");
  assert.equal(sizeText(64 * 1024), "64 KiB");
  assert.equal(sizeText(1000), "1,000 bytes");
  assert.equal(sizeText(4_000_000, "characters"), "4,000,000 characters");
  assert.equal(sample("abc"), '"abc"');
  assert.equal(sample("x".repeat(200), 5), '"xxxxx..."');
  assert.equal(sample("\u0001\u0002\uFFFD\uFFFDab"), "binary data, not text");
});
