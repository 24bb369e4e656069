import assert from "node:assert/strict";
import {
  appendFileSync,
  mkdirSync,
  realpathSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { changeClockMs, changedSince, nestedWalk } from "../../../src/engines/tree/snapshot.ts";
import { linuxFs } from "../../../src/platform/posix/inotify.ts";
import { isDeno } from "../../../src/platform/runtime.ts";
import { putBytes } from "../../support/trees.ts";

function tree(): { top: string; [Symbol.dispose](): void } {
  const top = realpathSync(Deno.makeTempDirSync({ prefix: "tree_snapshot_test_" }));
  return { top, [Symbol.dispose]: () => rmSync(top, { recursive: true, force: true }) };
}

function put(path: string, content = "x"): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
}

/** Long enough that what was made before counts as before, also where time has seconds only. */
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

Deno.test("nestedWalk: nested repositories at any depth and credential stores, never read into", async () => {
  using t = tree();
  const top = t.top;
  for (const bulk of [".git", "node_modules"]) put(join(top, "sub", bulk, "inner.txt"));
  put(join(top, ".git", "config"));
  put(join(top, "node_modules", "pkg", ".git", "config"));
  put(join(top, "deep", ".ssh", ".git", "config"));
  put(join(top, ".aws", "credentials"));
  put(join(top, "a", ".npmrc"));
  // Stores of several parts, by the folder they are in: not `gh` or `registry` elsewhere.
  put(join(top, "b", ".config", "gh", "hosts.yml"));
  put(join(top, "node_modules", "pkg", ".cargo", "credentials.toml"));
  put(join(top, "node_modules", "pkg", ".config", "helm", "registry", "config.json"));
  put(join(top, "c", "gh", "notes.txt"));
  put(join(top, "c", "registry", "x.json"));
  symlinkSync(join(top, "sub"), join(top, "link"));
  assert.deepEqual(await nestedWalk([top], 1000), {
    // The root's own .git is not nested; a link is not followed.
    nestedGit: [join(top, "node_modules", "pkg", ".git"), join(top, "sub", ".git")],
    credentials: [
      join(top, ".aws"),
      join(top, "a", ".npmrc"),
      join(top, "b", ".config", "gh"),
      join(top, "deep", ".ssh"),
      join(top, "node_modules", "pkg", ".cargo", "credentials.toml"),
      join(top, "node_modules", "pkg", ".config", "helm", "registry"),
    ],
    // Entries that may be links to a store's first part: none here (`link` names none).
    throughLinks: [],
    capped: false,
  });
  assert.equal((await nestedWalk([top], 5)).capped, true);
  assert.deepEqual(await nestedWalk([join(top, "nope")], 10), {
    nestedGit: [],
    credentials: [],
    throughLinks: [],
    capped: false,
  });
});

Deno.test("nestedWalk: a store in a folder whose name is not UTF-8 is found by its bytes, or the walk says it could not look", async () => {
  using t = tree();
  putBytes(t.top, "d\\377/.ssh/id_rsa");
  putBytes(t.top, "d\\377/p/.git/config");
  const fs = linuxFs();
  if (fs) {
    // Through libc (Deno on Linux): every name by its bytes.
    const found = await nestedWalk([t.top], 1000, undefined, fs);
    assert.equal(found.unread, undefined);
    assert.equal(found.credentials.length, 1);
    assert.match(found.credentials[0]!, /\/\.ssh$/);
    assert.ok(found.credentials[0]!.startsWith(`${t.top}/d`));
    assert.equal(found.nestedGit.length, 1);
  }
  // The runtime's own listing: Node gives the bytes; Deno decodes the name, and then the folder
  // cannot be named, which the walk says rather than leaving it out unseen.
  const plain = await nestedWalk([t.top], 1000);
  if (isDeno) assert.equal(plain.unread, true);
  else assert.equal(plain.credentials.length, 1);
});

for (const fast of [undefined, linuxFs()]) {
  Deno.test({
    name:
      `changedSince${fast ? " (through libc)" : ""}: files whose change time falls in the turn, ` +
      "also with their times put back, in .git, node_modules and credential stores",
    ignore: fast === undefined && Deno.build.os === "windows",
    fn: async () => {
      using t = tree();
      const top = t.top;
      put(join(top, "same.txt"));
      put(join(top, "back.txt"), "b");
      put(join(top, "node_modules", "dep", "index.js"));
      put(join(top, "deep", "er", "file.txt"));
      put(join(top, ".ssh", "id_rsa"));
      put(join(top, "lib", ".docker", "config.json"));
      // Deno's own stat has the change time to the second (libc's has it to the nanosecond).
      await pause(fast ? 60 : 1100);
      // On the clock change times are stamped with, as a turn reads its start.
      const since = changeClockMs(fast);
      appendFileSync(join(top, "node_modules", "dep", "index.js"), "+");
      put(join(top, ".git", "hooks", "pre-commit"));
      writeFileSync(join(top, "back.txt"), "B");
      utimesSync(join(top, "back.txt"), new Date(2000, 0, 1), new Date(2000, 0, 1));
      appendFileSync(join(top, "deep", "er", "file.txt"), "+");
      // Credential names, each a store that no sandbox hid (new, or where none runs).
      appendFileSync(join(top, ".ssh", "id_rsa"), "+");
      appendFileSync(join(top, "lib", ".docker", "config.json"), "+");
      put(join(top, "lib", ".ssh", "payload.js"));
      put(join(top, ".npmrc"), "script-shell=lib/.ssh/payload.js");
      const found = await changedSince([top], since, 1000, fast);
      assert.deepEqual(found, {
        files: [
          join(top, ".git", "hooks", "pre-commit"),
          join(top, ".npmrc"),
          join(top, ".ssh", "id_rsa"),
          join(top, "back.txt"),
          join(top, "deep", "er", "file.txt"),
          join(top, "lib", ".docker", "config.json"),
          join(top, "lib", ".ssh", "payload.js"),
          join(top, "node_modules", "dep", "index.js"),
        ],
        capped: false,
        unnamed: [],
      });
      assert.equal((await changedSince([top], since, 3, fast)).capped, true);
    },
  });
}

for (const fast of [undefined, linuxFs()]) {
  Deno.test({
    name: `changedSince${fast ? " (through libc)" : ""}: names that are not UTF-8 ` +
      (fast ? "are listed by their bytes" : "are counted where the runtime cannot give them"),
    ignore: Deno.build.os !== "linux",
    fn: async () => {
      using t = tree();
      const top = t.top;
      put(join(top, "old.txt"));
      putBytes(top, "d\\377/old.txt");
      await pause(fast ? 60 : 1100);
      // On the clock change times are stamped with, as a turn reads its start.
      const since = changeClockMs(fast);
      putBytes(top, "caf\\351.txt");
      putBytes(top, "d\\377/f\\376.txt");
      putBytes(top, "d\\377/old.txt");
      // U+FFFD in a name that is UTF-8 is a name like any other.
      put(join(top, "ok\uFFFD.txt"));
      const found = await changedSince([top], since, 1000, fast);
      if (fast) {
        assert.deepEqual(found, {
          files: [
            join(top, "caf\udce9.txt"),
            join(top, "d\udcff", "f\udcfe.txt"),
            join(top, "d\udcff", "old.txt"),
            join(top, "ok\uFFFD.txt"),
          ],
          capped: false,
          unnamed: [],
        });
      } else {
        // Deno's node:fs decodes every name: the file and the folder cannot be looked at.
        assert.deepEqual(found, {
          files: [join(top, "ok\uFFFD.txt")],
          capped: false,
          unnamed: [{ dir: top, count: 2 }],
        });
      }
    },
  });
}
