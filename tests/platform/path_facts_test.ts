/**
 * path_facts.ts: what it says of a path is what node:fs's Stats says, through libc's statx on
 * Deno and node:fs elsewhere; a missing path is undefined, not an exception; other failures
 * throw with node:fs's code.
 */
import assert from "node:assert/strict";
import { lstatSync, mkdirSync, type Stats, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathFacts, type StatFacts } from "../../src/platform/path_facts.ts";
import { linuxFs } from "../../src/platform/posix/inotify.ts";
import { tempDir } from "../support/temp_dir.ts";

const isLinux = Deno.build.os === "linux";

function same(facts: StatFacts | undefined, s: Stats, kind: StatFacts["kind"]): void {
  assert.ok(facts);
  assert.deepEqual(
    { ...facts },
    {
      kind,
      dev: s.dev,
      ino: s.ino,
      nlink: s.nlink,
      mode: s.mode,
      uid: s.uid,
      size: s.size,
      mtimeMs: facts.mtimeMs,
      ctimeMs: facts.ctimeMs,
    },
  );
  // Deno's node:fs gives the times to the second; Node and statx to the nanosecond.
  for (const [ours, theirs] of [[facts.mtimeMs, s.mtimeMs], [facts.ctimeMs, s.ctimeMs]]) {
    assert.ok(ours! >= theirs! && ours! - theirs! < 1000, `${ours} against ${theirs}`);
  }
}

Deno.test("pathFacts: a file, a folder and a link, followed or not, as node:fs sees them", () => {
  const top = tempDir("od-facts-");
  const file = join(top, "a.txt");
  writeFileSync(file, "12345");
  mkdirSync(join(top, "d"));
  symlinkSync(file, join(top, "link"));
  same(pathFacts(file), lstatSync(file), "file");
  same(pathFacts(join(top, "d")), lstatSync(join(top, "d")), "dir");
  same(pathFacts(join(top, "link")), lstatSync(join(top, "link")), "link");
  same(pathFacts(join(top, "link"), true), statSync(join(top, "link")), "file");
  assert.equal(pathFacts(file)!.size, 5);
});

Deno.test("pathFacts: nothing there is undefined (missing, or below a file); a loop throws ELOOP", () => {
  const top = tempDir("od-facts-");
  writeFileSync(join(top, "f"), "x");
  assert.equal(pathFacts(join(top, "missing")), undefined);
  assert.equal(pathFacts(join(top, "missing", "deeper"), true), undefined);
  assert.equal(pathFacts(join(top, "f", "below")), undefined);
  symlinkSync(join(top, "loop"), join(top, "loop"));
  assert.equal(pathFacts(join(top, "loop"))?.kind, "link");
  assert.throws(() => pathFacts(join(top, "loop"), true), { code: "ELOOP" });
});

Deno.test({
  name: "pathFacts: on Deno on Linux it goes through libc's statx",
  ignore: !isLinux,
  fn() {
    const facts = linuxFs()?.facts;
    assert.ok(facts, "libc's statx is bound");
    const top = tempDir("od-facts-");
    same(facts(top, false) as StatFacts, lstatSync(top), "dir");
    assert.equal(facts(join(top, "missing"), false), -2);
  },
});
