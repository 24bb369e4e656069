/** What a turn's sandbox hides in the job's directories, as the reply names it (hidden_list.ts). */
import assert from "node:assert/strict";
import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { hiddenInRoots } from "../../src/guard/hidden_list.ts";
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
