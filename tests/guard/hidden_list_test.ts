/** What a turn's sandbox hides in the job's directories, as the reply names it (hidden_list.ts). */
import assert from "node:assert/strict";
import { mkdirSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  hiddenByReal,
  hiddenInRoots,
  hiddenNames,
  hiddenThroughTurn,
} from "../../src/guard/hidden_list.ts";
import { tempDir } from "../support/temp_dir.ts";

Deno.test("hiddenInRoots: top-level stores by name, stores and secrets given, each once by what it is", () => {
  const root = realpathSync(tempDir());
  mkdirSync(join(root, ".ssh"));
  mkdirSync(join(root, "cfg", "gh"), { recursive: true });
  symlinkSync("cfg", join(root, ".config"));
  mkdirSync(join(root, "sub", ".aws"), { recursive: true });
  writeFileSync(join(root, ".env"), "TOKEN=x\n");
  const hidden = hiddenInRoots(
    [root],
    // The store behind the link, given by its real path as the turn's search finds it, and
    // one the search found below the top; a store that is gone is not named.
    [join(root, "cfg", "gh"), join(root, "sub", ".aws"), join(root, "gone", ".kube")],
    [join(root, ".env")],
  );
  assert.deepEqual(hidden, [
    join(root, ".config", "gh"),
    join(root, ".env"),
    join(root, ".ssh"),
    join(root, "sub", ".aws"),
  ]);
  assert.deepEqual(hiddenInRoots([realpathSync(tempDir())], [], []), []);
});

Deno.test("hiddenThroughTurn: what was hidden at the start and what is hidden at the end, each store once", () => {
  const root = realpathSync(tempDir());
  mkdirSync(join(root, "cfg", "gh"), { recursive: true });
  symlinkSync("cfg", join(root, ".config"));
  mkdirSync(join(root, "old", ".kube"), { recursive: true });
  const stores = [join(root, "cfg", "gh"), join(root, "old", ".kube")];
  const atStart = hiddenByReal([root], stores, []);
  assert.deepEqual(hiddenNames(atStart), hiddenInRoots([root], stores, []));
  // During the turn: the link goes (the store is still hidden by what it is), a command makes
  // .aws at the top, and the nested store is renamed and then found under its new name.
  rmSync(join(root, ".config"));
  mkdirSync(join(root, ".aws"));
  renameSync(join(root, "old"), join(root, "moved"));
  const atEnd = hiddenByReal([root], [join(root, "cfg", "gh"), join(root, "moved", ".kube")], []);
  assert.deepEqual(hiddenNames(hiddenThroughTurn(atStart, atEnd)), [
    join(root, ".aws"),
    // Named as at the start, not again as cfg/gh: the same store.
    join(root, ".config", "gh"),
    // Hidden under both names in the turn (it moved), so both are named.
    join(root, "moved", ".kube"),
    join(root, "old", ".kube"),
  ]);
});
