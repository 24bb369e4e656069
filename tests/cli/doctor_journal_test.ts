/**
 * `doctor`'s "Change journal" line: whether turns learn what changed from inotify, or walk the
 * tree. Under Node on Linux the journal needs a system Python (platform/posix/inotify_helper.ts);
 * the helper is the real one, run with the real Python or with a program that is none.
 */
import assert from "node:assert/strict";
import { journalCheck, type JournalFacts } from "../../src/cli/doctor/local.ts";
import { linuxFs } from "../../src/platform/posix/inotify.ts";
import { helperFsWith, systemPython } from "../../src/platform/posix/inotify_helper.ts";

/** Node's route on Linux: no libc calls, the helper with `python`. */
const onNode = (python: string | undefined): JournalFacts => ({
  linux: true,
  libc: () => undefined,
  python: () => python,
  helper: helperFsWith,
});

Deno.test({
  name: "doctor journal: kept through libc under Deno on Linux",
  ignore: Deno.build.os !== "linux",
  fn: () => {
    const check = journalCheck();
    assert.equal(check.status, "pass", check.summary);
    assert.match(check.summary, /^kept through inotify: /);
    assert.deepEqual(check.details, { kept: true, through: "libc" });
    assert.ok(linuxFs());
  },
});

Deno.test({
  name: "doctor journal: under Node, kept by the helper the system's Python runs",
  ignore: Deno.build.os !== "linux" || systemPython() === undefined,
  sanitizeOps: false,
  sanitizeResources: false,
  fn: () => {
    const python = systemPython()!;
    const check = journalCheck(onNode(python));
    assert.equal(check.status, "pass", check.summary);
    assert.match(
      check.summary,
      new RegExp(`^kept through inotify, by a helper run with ${python}`),
    );
  },
});

Deno.test("doctor journal: under Node without Python, or with one that fails, a warning and the fix", () => {
  const none = journalCheck(onNode(undefined));
  assert.equal(none.status, "warn");
  assert.match(none.summary, /^no system python3 \(\/usr\/bin\/python3, .*\): each turn walks/);
  assert.match(none.hint ?? "", /apt install python3/);
  // A program that ends at once: the helper never answers, and that is said.
  const broken = journalCheck(onNode("/bin/false"));
  assert.equal(broken.status, "warn");
  assert.match(
    broken.summary,
    /could not be started with \/bin\/false \(errno 38\): each turn walks/,
  );
  const elsewhere = journalCheck({ ...onNode(undefined), linux: false });
  assert.equal(elsewhere.status, "pass");
  assert.match(elsewhere.summary, /a change journal needs Linux$/);
});
