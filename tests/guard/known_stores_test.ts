/**
 * guard/known_stores.ts: a credential store a link led to (`.config -> cfg`, so `cfg/gh`) is
 * remembered by what it is, and found again after the link is gone or its folder was renamed;
 * forgotten once it left the roots; never confused with another folder of the same name.
 */
import assert from "node:assert/strict";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import {
  knownStores,
  knownStoresDir,
  linkedStores,
  rememberStores,
  storesBehindLinks,
} from "../../src/guard/known_stores.ts";
import { storesThroughLink } from "../../src/engines/tree/names.ts";
import { tempDir } from "../support/temp_dir.ts";

/** A project with `.config -> cfg` and the GitHub CLI's store in `cfg/gh`, and a state dir. */
function scene() {
  const work = realpathSync(tempDir("od-known-stores-"));
  mkdirSync(join(work, "cfg", "gh"), { recursive: true });
  writeFileSync(join(work, "cfg", "gh", "hosts.yml"), "oauth_token: x\n");
  symlinkSync("cfg", join(work, ".config"));
  const dir = knownStoresDir(realpathSync(tempDir("od-state-")));
  return { work, dir, store: join(work, "cfg", "gh") };
}

Deno.test("linkedStores: a store reached through a linked folder, by its real path; named ones are not", () => {
  const { work, store } = scene();
  mkdirSync(join(work, ".ssh"));
  assert.deepEqual(linkedStores([work]), [store]);
  // Outside the roots: no sandbox shows it, nothing to hide.
  const outside = realpathSync(tempDir("od-outside-"));
  mkdirSync(join(outside, ".aws"));
  symlinkSync(join(outside, ".aws"), join(work, ".aws"));
  assert.deepEqual(linkedStores([work]), [store]);
});

Deno.test("knownStores: a remembered store stays known after its link is removed, and follows a renamed folder", () => {
  const { work, dir, store } = scene();
  assert.deepEqual(knownStores(dir, [work]).paths, [], "nothing remembered yet");
  rememberStores(dir, linkedStores([work]));
  rmSync(join(work, ".config"));
  assert.deepEqual(linkedStores([work]), [], "by name it is no store any more");
  assert.deepEqual(knownStores(dir, [work]), { paths: [store] });
  renameSync(join(work, "cfg"), join(work, "moved"));
  mkdirSync(join(work, "cfg", "gh"), { recursive: true }); // another folder, same name
  assert.deepEqual(knownStores(dir, [work]), { paths: [join(work, "moved", "gh")] });
  // The record followed it: found at once next time.
  assert.deepEqual(knownStores(dir, [work], 0), { paths: [join(work, "moved", "gh")] });
  // Other roots do not see it.
  assert.deepEqual(knownStores(dir, [realpathSync(tempDir("od-other-"))]).paths, []);
});

Deno.test("knownStores: a store gone from the roots is forgotten; a search past its bound says so", () => {
  const { work, dir } = scene();
  rememberStores(dir, linkedStores([work]));
  renameSync(join(work, "cfg"), join(work, "elsewhere"));
  for (let i = 0; i < 5; i++) mkdirSync(join(work, `d${i}`));
  const bounded = knownStores(dir, [work], 3);
  assert.deepEqual(bounded.paths, []);
  assert.match(bounded.incomplete ?? "", /cfg\/gh \(a credential store seen before\) moved/);
  assert.equal(readdirSync(dir).length, 1, "kept while it may still be there");
  rmSync(join(work, "elsewhere"), { recursive: true });
  assert.deepEqual(knownStores(dir, [work]), { paths: [] });
  assert.equal(readdirSync(dir).length, 0, "forgotten");
  assert.ok(existsSync(dir));
});

Deno.test("storesBehindLinks: stores a link leads to below the top, by their real paths", () => {
  const work = realpathSync(tempDir("od-behind-links-"));
  mkdirSync(join(work, "keys"));
  mkdirSync(join(work, "shared", "gh"), { recursive: true });
  mkdirSync(join(work, "sub"));
  symlinkSync("../keys", join(work, "sub", ".ssh"));
  symlinkSync("../shared", join(work, "sub", ".config"));
  const outside = realpathSync(tempDir("od-behind-outside-"));
  mkdirSync(join(outside, "gh"));
  mkdirSync(join(work, "other"));
  symlinkSync(outside, join(work, "other", ".config"));
  const candidates = [
    join(work, "sub", ".ssh"),
    ...storesThroughLink(join(work, "sub"), ".config"),
    ...storesThroughLink(join(work, "other"), ".config"),
  ];
  assert.deepEqual(storesBehindLinks(candidates, [work]), [
    join(work, "keys"),
    join(work, "shared", "gh"),
  ]);
});

Deno.test("storesThroughLink: the stores an entry's name starts, where its folder allows them", () => {
  assert.ok(storesThroughLink("/p/sub", ".config").includes("/p/sub/.config/gh"));
  assert.ok(storesThroughLink("/p/sub", ".cargo").includes("/p/sub/.cargo/credentials.toml"));
  assert.ok(storesThroughLink("/p/.config", "helm").includes("/p/.config/helm/registry"));
  assert.deepEqual(storesThroughLink("/p/x", "helm"), []);
  assert.deepEqual(storesThroughLink("/p/x", "src"), []);
  assert.deepEqual(storesThroughLink("/p/x", ".ssh"), [], "a store itself: found by its name");
});
