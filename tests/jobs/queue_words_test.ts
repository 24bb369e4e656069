import assert from "node:assert/strict";
import { ordinal, queueLines } from "../../src/jobs/queue_words.ts";

const line = (label: string, value: string) => `${`${label}:`.padEnd(12)}${value}`;
const A = "aaaaaaaa-0000-4000-8000-000000000001";
const B = "bbbbbbbb-0000-4000-8000-000000000002";
const C = "cccccccc-0000-4000-8000-000000000003";

Deno.test("queueLines: place in line, slots held here and by other sessions, and by whom", () => {
  const got = queueLines({
    backend: "ollama",
    position: 2,
    limit: 4,
    holders: [
      { jobId: A, pid: 4242, here: false },
      { jobId: B, pid: 10, here: true },
      { jobId: C, pid: 4242, here: false },
    ],
  }, line);
  assert.deepEqual(got, [
    'queue:      2nd in line for backend "ollama" (3 of 4 slots held: 2 by other sessions, 1 here)',
    `held by:    ${A}, ${C} in server pid 4242; ${B} here`,
  ]);
});

Deno.test("queueLines: nobody holds a slot (jobs ahead in line); many holders are counted", () => {
  assert.deepEqual(
    queueLines({ backend: "lab", position: 3, limit: 1, holders: [] }, line),
    ['queue:      3rd in line for backend "lab" (0 of 1 slot held)'],
  );
  const holders = Array.from({ length: 10 }, (_, i) => ({ jobId: `j${i}`, pid: 7, here: false }));
  const [first, second] = queueLines({ backend: "lab", position: 1, limit: 10, holders }, line);
  assert.equal(
    first,
    'queue:      1st in line for backend "lab" (10 of 10 slots held: 10 by other sessions)',
  );
  assert.equal(second, "held by:    j0, j1, j2, j3, j4, j5, j6, j7 in server pid 7; +2 more");
});

Deno.test("ordinal: English suffixes, teens included", () => {
  assert.deepEqual(
    [1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 101, 111].map(ordinal),
    ["1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "23rd", "101st", "111th"],
  );
});
