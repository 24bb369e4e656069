/**
 * bwrap_base.ts `rootOnlySystemFiles`: what under a folder like /etc other users cannot read is
 * found to be hidden (a file without read for others, a folder without read and search for
 * them), what they can read is walked into, and links are neither followed nor hidden.
 */
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { rootOnlySystemFiles } from "../../src/engines/bwrap_base.ts";
import { tempDir } from "../support/temp_dir.ts";

Deno.test({
  name: "rootOnlySystemFiles: unreadable files and folders are found at any depth; links are not",
  ignore: Deno.build.os === "windows",
  fn() {
    const top = tempDir("od-etc-");
    mkdirSync(join(top, "ssl", "private"), { recursive: true });
    writeFileSync(join(top, "shadow"), "root:x");
    chmodSync(join(top, "shadow"), 0o640);
    writeFileSync(join(top, "hosts"), "127.0.0.1 localhost");
    chmodSync(join(top, "hosts"), 0o644);
    writeFileSync(join(top, "ssl", "private", "key.pem"), "KEY");
    chmodSync(join(top, "ssl", "private"), 0o710);
    mkdirSync(join(top, "sudoers.d"));
    writeFileSync(join(top, "sudoers.d", "rules"), "x");
    chmodSync(join(top, "sudoers.d", "rules"), 0o440);
    symlinkSync(join(top, "shadow"), join(top, "shadow-link"));
    const found = rootOnlySystemFiles(top).map((m) => `${m.kind} ${m.path.slice(top.length)}`);
    assert.deepEqual(found.sort(), [
      "dir /ssl/private",
      "file /shadow",
      "file /sudoers.d/rules",
    ]);
  },
});
