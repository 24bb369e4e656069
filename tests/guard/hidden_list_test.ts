/** What a turn's sandbox hides in the job's directories, as the reply names it (hidden_list.ts). */
import assert from "node:assert/strict";
import { mkdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
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

Deno.test("hiddenThroughTurn: what was hidden at the start and from the commands after, each store once", () => {
  const root = realpathSync(tempDir());
  mkdirSync(join(root, "cfg", "gh"), { recursive: true });
  symlinkSync("cfg", join(root, ".config"));
  mkdirSync(join(root, "sub", ".kube"), { recursive: true });
  const stores = [join(root, "cfg", "gh"), join(root, "sub", ".kube")];
  const atStart = hiddenByReal([root], stores, []);
  assert.deepEqual(hiddenNames(atStart), hiddenInRoots([root], stores, []));
  // As the turn's commands run: one removes the link (the store is still hidden, by what it
  // is), one makes .aws at the top, one points .config at another folder with a gh store.
  // As run_shell.ts records them: what each command's sandbox hides, added to what came before.
  let later = new Map<string, string>();
  const command = () => {
    later = hiddenThroughTurn(later, hiddenByReal([root], stores, []));
  };
  rmSync(join(root, ".config"));
  command();
  mkdirSync(join(root, ".aws"));
  command();
  mkdirSync(join(root, "other", "gh"), { recursive: true });
  symlinkSync("other", join(root, ".config"));
  command();
  assert.deepEqual(hiddenNames(hiddenThroughTurn(atStart, later)), [
    join(root, ".aws"),
    // Two stores, one name: named once. cfg/gh is not named again: the same store.
    join(root, ".config", "gh"),
    join(root, "sub", ".kube"),
  ]);
  assert.equal(hiddenThroughTurn(atStart, later).size, 4);
});
