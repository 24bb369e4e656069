import { git } from "../support/git_repo.ts";
import assert from "node:assert/strict";
import { existsSync, linkSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { computeDiff, fitDiff, parseDiff } from "../../src/review/diff.ts";
import { tempDir } from "../support/harness.ts";

const SAMPLE = [
  "diff --git a/src/a.ts b/src/a.ts",
  "index 1..2 100644",
  "--- a/src/a.ts",
  "+++ b/src/a.ts",
  "@@ -1,3 +1,4 @@",
  " one",
  "-two",
  "+TWO",
  "+2b",
  " three",
  "@@ -10,2 +11,2 @@ function f() {",
  " ten",
  "-eleven",
  "+ELEVEN",
  "\\ No newline at end of file",
  "diff --git a/gone.txt b/gone.txt",
  "deleted file mode 100644",
  "--- a/gone.txt",
  "+++ /dev/null",
  "@@ -1 +0,0 @@",
  "-bye",
  "diff --git a/img.png b/img.png",
  "Binary files a/img.png and b/img.png differ",
  "",
].join("\n");

Deno.test("diff: files, their new-side lines in hunks, and binaries", () => {
  const files = parseDiff(SAMPLE);
  assert.deepEqual(files.map((f) => f.path), ["src/a.ts", "gone.txt", "img.png"]);
  const [a, gone, img] = files;
  assert.deepEqual(a!.lines, [[1, 4], [11, 12]]);
  assert.equal(a!.added, 3);
  assert.equal(a!.removed, 2);
  assert.ok(a!.text.startsWith("diff --git a/src/a.ts") && a!.text.includes("+ELEVEN"));
  assert.deepEqual(gone!.lines, []);
  assert.equal(gone!.removed, 1);
  assert.equal(img!.binary, true);
});

Deno.test("diff: the budget leaves out whole files, secrets and binaries, and names them", () => {
  const files = parseDiff(
    SAMPLE + [
      "diff --git a/.env b/.env",
      "--- a/.env",
      "+++ b/.env",
      "@@ -1 +1 @@",
      "-KEY=1",
      "+KEY=2",
      "",
    ].join("\n"),
  );
  const fit = fitDiff(files, 1000);
  assert.deepEqual(fit.sent.map((f) => f.path), ["src/a.ts", "gone.txt"]);
  assert.deepEqual(fit.notSent.map((n) => n.path), ["img.png", ".env"]);
  assert.match(fit.notSent[1]!.reason, /looks like a secret/);
  const small = fitDiff(files, 30);
  assert.deepEqual(small.sent.map((f) => f.path), ["gone.txt"]);
  assert.match(small.notSent[0]!.reason, /^about \d+ tokens, over the remaining budget of 30$/);
});

Deno.test("diff: uncommitted changes with untracked files; base...HEAD; hooks never run", async () => {
  const repo = tempDir("od-review-");
  git(repo, "init", "-q", "-b", "main");
  writeFileSync(join(repo, "a.txt"), "1\n2\n3\n");
  git(repo, "add", ".");
  git(repo, "commit", "-q", "-m", "one");
  git(repo, "checkout", "-q", "-b", "topic");
  writeFileSync(join(repo, "a.txt"), "1\n2\n3\n4\n");
  git(repo, "commit", "-q", "-am", "two");
  // A repository's config naming a program: the review must not run it.
  const marker = join(repo, "..", `fsmonitor-ran-${crypto.randomUUID()}`);
  writeFileSync(join(repo, "monitor.sh"), `#!/bin/sh\ntouch ${marker}\n`, { mode: 0o755 });
  git(repo, "config", "core.fsmonitor", join(repo, "monitor.sh"));
  writeFileSync(join(repo, "a.txt"), "1\nTWO\n3\n4\n");
  writeFileSync(join(repo, "new.txt"), "fresh\n");
  symlinkSync("/etc/passwd", join(repo, "link"));
  mkdirSync(join(repo, "sub"));
  const uncommitted = await computeDiff(join(repo, "sub"));
  assert.equal(uncommitted.label, "uncommitted changes");
  const byPath = new Map(uncommitted.files.map((f) => [f.path, f]));
  assert.deepEqual([...byPath.keys()].sort(), ["a.txt", "monitor.sh", "new.txt"]);
  assert.deepEqual(byPath.get("a.txt")!.lines, [[1, 4]]);
  assert.deepEqual(byPath.get("new.txt")!.lines, [[1, 1]]);
  const range = await computeDiff(repo, "main");
  assert.equal(range.label, "main...HEAD");
  assert.deepEqual(range.files.map((f) => [f.path, f.lines]), [["a.txt", [[1, 4]]]]);
  await assert.rejects(() => computeDiff(repo, "nope"), /base "nope" names no commit/);
  await assert.rejects(() => computeDiff(tempDir("od-norepo-")), /is not in a git repository/);
  assert.equal(existsSync(marker), false, "the repository's fsmonitor command ran");
});

Deno.test("diff: a repository inside the reviewed one, or the repository's own filter, never runs a filter", async () => {
  const repo = tempDir("od-review-embedded-");
  const marker = join(repo, "..", `filter-ran-${crypto.randomUUID()}`);
  const ownMarker = `${marker}-own`;
  git(repo, "init", "-q", "-b", "main");
  writeFileSync(join(repo, "a.txt"), "1\n");
  // A repository inside, committed as a gitlink, whose own config names a filter that its
  // own .gitattributes applies: `git diff HEAD` would descend into it and run the filter.
  const sub = join(repo, "sub");
  mkdirSync(sub);
  git(sub, "init", "-q");
  writeFileSync(join(sub, "f.txt"), "hi\n");
  writeFileSync(join(sub, ".gitattributes"), "* filter=x\n");
  git(sub, "add", ".");
  git(sub, "commit", "-q", "-m", "x");
  git(repo, "add", ".");
  git(repo, "commit", "-q", "-m", "one");
  git(repo, "checkout", "-q", "-b", "topic");
  // A .gitmodules asking git to look inside whatever its config says.
  writeFileSync(join(repo, ".gitmodules"), '[submodule "sub"]\n\tpath = sub\n\tignore = none\n');
  // A .gitattributes in the reviewed changes naming a filter of the repository's own config.
  writeFileSync(join(repo, ".gitattributes"), "a.txt filter=y\n");
  git(repo, "add", ".");
  git(repo, "commit", "-q", "-m", "two");
  // The filters last: the setup's own git commands must not run them.
  git(sub, "config", "filter.x.clean", `touch ${marker}; cat`);
  git(repo, "config", "filter.y.clean", `touch ${ownMarker}; cat`);
  writeFileSync(join(sub, "f.txt"), "changed, and longer than before\n");
  writeFileSync(join(repo, "a.txt"), "1\n2, longer than before\n");
  const uncommitted = await computeDiff(repo);
  const range = await computeDiff(repo, "main");
  assert.equal(existsSync(marker), false, "the inner repository's filter ran on the server");
  assert.equal(existsSync(ownMarker), false, "the repository's own filter ran on the server");
  assert.deepEqual(uncommitted.files.map((f) => f.path), ["a.txt"]);
  assert.deepEqual(range.files.map((f) => f.path).sort(), [".gitattributes", ".gitmodules"]);
});

Deno.test("diff: untracked secret files and hard links to them are named, never diffed or sent", async () => {
  const repo = tempDir("od-review-secrets-");
  git(repo, "init", "-q", "-b", "main");
  writeFileSync(join(repo, "a.txt"), "1\n");
  writeFileSync(join(repo, "notes.txt"), "old notes\n");
  git(repo, "add", ".");
  git(repo, "commit", "-q", "-m", "one");
  writeFileSync(join(repo, "a.txt"), "1\n2\n");
  writeFileSync(join(repo, ".env.local"), "DB_PASSWORD=poison-local\n");
  writeFileSync(join(repo, "app.env"), "TOKEN=poison-app-env\n");
  mkdirSync(join(repo, "infra"));
  writeFileSync(join(repo, "infra", "prod.tfvars"), 'db_password = "poison-tfvars"\n');
  writeFileSync(join(repo, ".dev.vars"), "API_KEY=poison-dev-vars\n");
  // `.env` ignored, as it usually is; a tracked file and an untracked one made hard links of it.
  writeFileSync(join(repo, ".gitignore"), ".env\n");
  writeFileSync(join(repo, ".env"), "STRIPE=poison-dotenv\n");
  rmSync(join(repo, "notes.txt"));
  linkSync(join(repo, ".env"), join(repo, "notes.txt"));
  linkSync(join(repo, ".env"), join(repo, "todo.md"));
  const diff = await computeDiff(repo);
  const byPath = new Map(diff.files.map((f) => [f.path, f]));
  for (const path of [".env.local", "app.env", "infra/prod.tfvars", ".dev.vars"]) {
    assert.equal(byPath.get(path)?.text, "", path);
    assert.match(byPath.get(path)!.secret ?? "", /looks like a secret/, path);
  }
  for (const path of ["notes.txt", "todo.md"]) {
    assert.equal(byPath.get(path)?.text, "", path);
    assert.equal(byPath.get(path)!.secret, 'the same file as the secret ".env" (a hard link)');
  }
  assert.doesNotMatch(diff.files.map((f) => f.text).join(""), /poison-/);
  const fit = fitDiff(diff.files, 100_000);
  assert.deepEqual(fit.sent.map((f) => f.path).sort(), [".gitignore", "a.txt"]);
  assert.deepEqual(
    fit.notSent.map((n) => n.path).sort(),
    [".dev.vars", ".env.local", "app.env", "infra/prod.tfvars", "notes.txt", "todo.md"],
  );
  // Allowed names are diffed as any file.
  const allowed = await computeDiff(repo, undefined, ["app.env"]);
  const appEnv = allowed.files.find((f) => f.path === "app.env")!;
  assert.equal(appEnv.secret, undefined);
  assert.match(appEnv.text, /poison-app-env/);
});

Deno.test("diff: untracked files are read up to 32 MiB together; the rest are named as too large, never read", async () => {
  const repo = tempDir("od-review-big-");
  git(repo, "init", "-q", "-b", "main");
  writeFileSync(join(repo, "a.txt"), "1\n");
  git(repo, "add", ".");
  git(repo, "commit", "-q", "-m", "one");
  // 20 MiB each: the first fits, the second would take the untracked diff past 32 MiB.
  const line = "x".repeat(1023) + "\n";
  writeFileSync(join(repo, "big-1.txt"), line.repeat(20 * 1024));
  writeFileSync(join(repo, "big-2.txt"), line.repeat(20 * 1024));
  writeFileSync(join(repo, "small.txt"), "small\n");
  const diff = await computeDiff(repo);
  const byPath = new Map(diff.files.map((f) => [f.path, f]));
  assert.equal(byPath.get("big-1.txt")?.added, 20 * 1024);
  assert.equal(byPath.get("big-2.txt")?.text, "");
  assert.match(
    byPath.get("big-2.txt")?.tooLarge ?? "",
    /^too large \(20971520 bytes; the untracked files' diff is read up to 32 MiB, \d+ bytes were left\)$/,
  );
  assert.equal(byPath.get("small.txt")?.added, 1, "a smaller file after it is still read");
  assert.equal(diff.untrackedLeftOut, 0);
  const fit = fitDiff(diff.files, 100_000_000);
  assert.deepEqual(fit.notSent.map((n) => [n.path, n.kind]), [["big-2.txt", "size"]]);
});
