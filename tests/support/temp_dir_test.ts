/**
 * The tests' own folders go when the module that made them ends: tempDir's under the system's
 * temporary folder (unless OD_KEEP_TEMP=1), and claudeWrapper's under the repository's
 * `.tools/wrappers/` always, since the suite's runner sets OD_KEEP_TEMP and removes only its
 * TMPDIR. A module is run here as a process of its own, so its end is real.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import process from "node:process";
import { pathToFileURL } from "node:url";
import { REPO, tempDir } from "./harness.ts";

function madeBy(keepTemp: boolean): { temp: string; wrapper: string } {
  const script = join(tempDir("od-temp-dir-test-"), "module.ts");
  const harness = pathToFileURL(join(REPO, "tests", "support", "harness.ts")).href;
  writeFileSync(
    script,
    `import { claudeWrapper, tempDir } from ${JSON.stringify(harness)};\n` +
      `console.log(JSON.stringify({ temp: tempDir(), wrapper: claudeWrapper("true") }));\n`,
  );
  // Empty, not left out: a child of Deno's node:child_process still inherits what `env` lacks
  // (and the suite's runner sets OD_KEEP_TEMP=1).
  const env = { ...process.env, OD_KEEP_TEMP: keepTemp ? "1" : "" };
  const out = execFileSync(
    process.execPath,
    ["run", "-A", "--no-check", "--config", join(REPO, "deno.json"), script],
    { env, encoding: "utf8" },
  );
  const made = JSON.parse(out.trim().split("\n").at(-1)!) as { temp: string; wrapper: string };
  // Both existed while the module ran: the wrapper's folder holds the script it returned.
  assert.match(made.wrapper, /\/\.tools\/wrappers\/w-[^/]+\/claude$/);
  return made;
}

Deno.test("tempDir's and claudeWrapper's folders are removed when their module ends", () => {
  const { temp, wrapper } = madeBy(false);
  assert.equal(existsSync(temp), false, temp);
  assert.equal(existsSync(dirname(wrapper)), false, wrapper);
});

Deno.test("with OD_KEEP_TEMP=1 tempDir's folder stays and claudeWrapper's still goes", () => {
  const { temp, wrapper } = madeBy(true);
  try {
    assert.equal(existsSync(temp), true, temp);
    assert.equal(existsSync(dirname(wrapper)), false, wrapper);
  } finally {
    Deno.removeSync(temp, { recursive: true });
  }
});
