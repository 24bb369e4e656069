import assert from "node:assert/strict";
import {
  type AskContext,
  askedText,
  type AskOutcome,
  jobAsk,
  MAX_ASKS_PER_JOB,
  type PermissionAsker,
} from "../../src/jobs/permission_asks.ts";
import type { JobRecord } from "../../src/jobs/record.ts";

/** A person who answers `answer` to everything, and the questions they were shown. */
function asker(answer: AskOutcome): PermissionAsker & { asked: AskContext[] } {
  const asked: AskContext[] = [];
  return {
    asked,
    seconds: 7,
    canAsk: () => true,
    ask(q) {
      asked.push(q);
      return Promise.resolve(answer);
    },
  };
}

const record = () => ({ id: "4f8e1c2a-0000", model: "qwen3:8b", cwd: "/w" }) as JobRecord;

Deno.test("jobAsk: allow for this job covers the same tool only, and every answer is recorded", async () => {
  const r = record();
  const person = asker({ answer: "job", by: "person" });
  const ask = jobAsk(r, person, () => {});
  assert.deepEqual(await ask({ tool: "Write", detail: "a.txt", reason: "m" }), {
    allow: true,
    message: "",
  });
  assert.equal((await ask({ tool: "Write", detail: "b.txt", reason: "m" })).allow, true);
  assert.equal(person.asked.length, 1, "the second Write was asked again");
  await ask({ tool: "Bash", detail: "make", reason: "m" });
  assert.equal(person.asked.length, 2, "Bash was covered by an answer about Write");
  assert.deepEqual(person.asked[0], {
    tool: "Write",
    detail: "a.txt",
    reason: "m",
    jobId: r.id,
    model: "qwen3:8b",
    cwd: "/w",
  });
  assert.equal(
    askedText(r),
    "3: Write(a.txt) allowed for this job, Write(b.txt) allowed for this job (by an earlier " +
      "answer), Bash(make) allowed for this job",
  );
});

Deno.test("jobAsk: past the cap a job's calls are denied without asking; why each was denied is told", async () => {
  const r = record();
  const person = asker({ answer: "deny", by: "timeout" });
  const ask = jobAsk(r, person, () => {});
  const first = await ask({ tool: "Bash", detail: "x", reason: "permission mode manual" });
  assert.equal(first.allow, false);
  assert.match(
    first.message,
    /^Permission to use Bash was denied: nobody answered within 7 s \(permission mode manual\)/,
  );
  for (let i = 1; i < MAX_ASKS_PER_JOB; i++) {
    await ask({ tool: "Bash", detail: `${i}`, reason: "" });
  }
  assert.equal(person.asked.length, MAX_ASKS_PER_JOB);
  const over = await ask({ tool: "Bash", detail: "more", reason: "" });
  assert.equal(person.asked.length, MAX_ASKS_PER_JOB, "asked past the cap");
  assert.equal(over.allow, false);
  assert.match(over.message, new RegExp(`this job already asked ${MAX_ASKS_PER_JOB} times`));
  assert.match(askedText(r)!, /^21: Bash\(x\) denied \(no answer in time\), .*, \+16 more$/);
});

Deno.test("askedText: a command's control characters are escaped and a long one is cut", () => {
  const text = askedText({
    permissionAsks: [{
      tool: "Bash",
      detail: `echo \x1b[31m${"y".repeat(200)}`,
      answer: "once",
      by: "person",
    }],
  })!;
  assert.equal(text.includes("\x1b"), false);
  assert.match(text, /^1: Bash\(echo \\033\[31my+…\) allowed once$/);
  assert.equal(askedText({}), undefined);
});
