import assert from "node:assert/strict";
import { parseDiff, type ReviewDiff } from "../../src/review/diff.ts";
import { diffKeys, diffSince } from "../../src/review/diff_since.ts";

const file = (path: string, ...hunks: string[]) =>
  [
    `diff --git a/${path} b/${path}`,
    "index 1..2 100644",
    `--- a/${path}`,
    `+++ b/${path}`,
    ...hunks,
  ].join("\n");

const BINARY = "diff --git a/img.png b/img.png\nindex 3..4 100644\n" +
  "Binary files a/img.png and b/img.png differ\n";

const diffOf = (...parts: string[]): ReviewDiff => ({
  root: "/r",
  label: "uncommitted changes",
  files: parseDiff(parts.join("\n") + "\n"),
  untrackedLeftOut: 0,
});

const EVAL = "@@ -1,2 +1,3 @@\n one\n+const b = eval(input);\n two";
const LATER = "@@ -20,3 +21,3 @@ function f() {\n twenty\n-x\n+y\n twenty-two";

Deno.test("diffSince: a hunk seen before is left out, a new one kept with its header", () => {
  const before = diffOf(file("app.ts", EVAL));
  const now = diffOf(file("app.ts", EVAL, LATER), file("b.ts", "@@ -1 +1 @@\n-a\n+b"));
  const since = diffSince(now, new Set(diffKeys(before)));
  assert.equal(since.changed, true);
  assert.deepEqual(since.leftOut, { hunks: 1, files: ["app.ts"] });
  assert.deepEqual(since.diff.files.map((f) => f.path), ["app.ts", "b.ts"]);
  const [app] = since.diff.files;
  assert.doesNotMatch(app!.text, /eval/);
  assert.match(app!.text, /^diff --git a\/app\.ts b\/app\.ts\n[^]*\n\+y\n twenty-two\n$/);
  // Its lines are the kept hunk's: a finding on the left-out one is outside the diff.
  assert.deepEqual(app!.lines, [[21, 23]]);
  assert.equal(app!.added, 1);
  assert.match(
    since.diff.label,
    /^uncommitted changes, what changed since this session's last review \(1 hunk reviewed then left out/,
  );
});

Deno.test("diffSince: a hunk that moved is the same hunk; one edited is new", () => {
  const before = new Set(diffKeys(diffOf(file("app.ts", EVAL))));
  const moved = diffOf(file("app.ts", EVAL.replace("@@ -1,2 +1,3 @@", "@@ -5,2 +5,3 @@")));
  assert.equal(diffSince(moved, before).changed, false);
  const edited = diffOf(file("app.ts", EVAL.replace("eval(input)", "eval(input2)")));
  const since = diffSince(edited, before);
  assert.equal(since.changed, true);
  assert.deepEqual(since.leftOut, { hunks: 0, files: [] });
  assert.equal(since.diff.label, "uncommitted changes");
  assert.equal(since.diff.files[0]!.text, edited.files[0]!.text);
});

Deno.test("diffSince: a file without hunks comes along only when something else is new", () => {
  const before = new Set(diffKeys(diffOf(file("app.ts", EVAL), BINARY)));
  const same = diffSince(diffOf(file("app.ts", EVAL), BINARY), before);
  assert.equal(same.changed, false);
  assert.deepEqual(same.diff.files, []);
  const more = diffSince(diffOf(file("app.ts", EVAL, LATER), BINARY), before);
  assert.deepEqual(more.diff.files.map((f) => f.path), ["app.ts", "img.png"]);
  // A binary file whose blobs changed is new.
  const blob = diffSince(diffOf(file("app.ts", EVAL), BINARY.replace("3..4", "3..5")), before);
  assert.equal(blob.changed, true);
});

Deno.test("diffSince: a secret-looking file with hunks is never sent, so it is kept whole like a binary", () => {
  const env = file(".env", "@@ -1 +1 @@\n-KEY=a\n+KEY=b");
  const before = new Set(diffKeys(diffOf(file("app.ts", EVAL), env)));
  assert.equal(diffSince(diffOf(file("app.ts", EVAL), env), before).changed, false);
  const more = diffSince(diffOf(file("app.ts", EVAL, LATER), env), before);
  assert.deepEqual(more.diff.files.map((f) => f.path), ["app.ts", ".env"]);
  assert.deepEqual(more.leftOut, { hunks: 1, files: ["app.ts"] });
  // Allowed by the user, it is a file like any other: its hunk, reviewed, is left out.
  const allow = [".env"];
  const seen = new Set(diffKeys(diffOf(file("app.ts", EVAL), env), allow));
  const allowed = diffSince(diffOf(file("app.ts", EVAL, LATER), env), seen, allow);
  assert.deepEqual(allowed.diff.files.map((f) => f.path), ["app.ts"]);
  assert.deepEqual(allowed.leftOut, { hunks: 2, files: ["app.ts", ".env"] });
});
