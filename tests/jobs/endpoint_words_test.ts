/** The reply lines that name a pool's endpoint: where a turn ran, where it waits, and moves. */
import assert from "node:assert/strict";
import type { JobRecord } from "../../src/jobs/record.ts";
import { endpointLines, queueLines } from "../../src/jobs/queue_words.ts";
import { escapeLine } from "../../src/platform/plain_text.ts";

const line = (label: string, value: string) => `${`${label}:`.padEnd(12)}${escapeLine(value)}`;
const at = (endpoint: JobRecord["endpoint"]) => ({ endpoint } as JobRecord);

Deno.test("endpointLines: shown for a pool or a move, never for a backend of one endpoint", () => {
  assert.deepEqual(endpointLines(at(undefined), line), []);
  assert.deepEqual(endpointLines(at({ url: "http://gpu:11434", poolSize: 1 }), line), []);
  assert.deepEqual(endpointLines(at({ url: "http://gpu2:11434", poolSize: 2 }), line), [
    "endpoint:   http://gpu2:11434",
  ]);
  const moves = [{ from: "http://gpu1:11434", to: "http://gpu2:11434", reason: "HTTP 500: boom" }];
  assert.deepEqual(endpointLines(at({ url: "http://gpu2:11434", poolSize: 2, moves }), line), [
    "endpoint:   http://gpu2:11434  (moved from http://gpu1:11434: HTTP 500: boom)",
  ]);
  const twice = [...moves, { from: "http://gpu2:11434", to: "http://gpu3:11434", reason: "x\ny" }];
  assert.deepEqual(
    endpointLines(at({ url: "http://gpu3:11434", poolSize: 3, moves: twice }), line),
    // A backend's error text cannot add a line of its own.
    ["endpoint:   http://gpu3:11434  (moved 2 times, last from http://gpu2:11434: x\\ny)"],
  );
});

Deno.test("queueLines: a pool's line names the endpoint the job waits for", () => {
  assert.deepEqual(
    queueLines(
      { backend: "gpus", endpoint: "http://gpu2:8000", position: 1, limit: 1, holders: [] },
      line,
    ),
    ['queue:      1st in line for backend "gpus" at http://gpu2:8000 (0 of 1 slot held)'],
  );
});
