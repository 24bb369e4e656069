/**
 * Edit and Write refuse to work from a stale view: a file the model read (or wrote) in this job
 * and that then changed on disk must be read again first. Files it never read are changed as
 * before. Real files in a temporary tree; the change on disk is made the way a command or the
 * user would make it, outside the tools.
 */
import assert from "node:assert/strict";
import { readFile, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { editTool } from "../../../../src/engines/native/tools/edit.ts";
import { readTool } from "../../../../src/engines/native/tools/read.ts";
import { writeTool } from "../../../../src/engines/native/tools/write.ts";
import { type Fixture, fixture } from "../tool_fixture.ts";

async function withFixture(fn: (f: Fixture, path: string) => Promise<void>): Promise<void> {
  const f = await fixture();
  try {
    const path = await f.put("proj/app.ts", "const port = 80;\n");
    await fn(f, path);
  } finally {
    await f.cleanup();
  }
}

const edit = (f: Fixture, from: string, to: string) =>
  editTool.run({ file_path: "app.ts", old_string: from, new_string: to }, f.ctx);

/** A change on disk a second later, as a formatter or the user would make it. */
async function changeOnDisk(path: string, content: string): Promise<void> {
  await writeFile(path, content);
  const later = new Date(Date.now() + 1000);
  await utimes(path, later, later);
}

Deno.test("Edit: a file changed on disk since the model read it is refused until it reads it again", async () => {
  await withFixture(async (f, path) => {
    assert.equal((await readTool.run({ file_path: "app.ts" }, f.ctx)).isError, undefined);
    await changeOnDisk(path, "const port = 8080;\nconst host = 'x';\n");
    const refused = await edit(f, "const host = 'x';", "const host = 'y';");
    assert.equal(refused.isError, true);
    assert.match(
      refused.text,
      /^Refused to edit "app\.ts": it changed on disk since you last read it \(17 bytes then, 37 now; modified \d{4}-\d\d-\d\dT[\d:.]+Z\)\. Read it again, then edit it$/,
    );
    assert.equal(await readFile(path, "utf8"), "const port = 8080;\nconst host = 'x';\n");
    assert.deepEqual(f.changed, []);

    await readTool.run({ file_path: "app.ts" }, f.ctx);
    const done = await edit(f, "const host = 'x';", "const host = 'y';");
    assert.equal(done.isError, undefined, done.text);
    assert.equal(await readFile(path, "utf8"), "const port = 8080;\nconst host = 'y';\n");
  });
});

Deno.test("Edit: a file the model never read in this job is edited as before", async () => {
  await withFixture(async (f, path) => {
    await changeOnDisk(path, "const port = 81;\n");
    const done = await edit(f, "81", "82");
    assert.equal(done.isError, undefined, done.text);
    assert.equal(await readFile(path, "utf8"), "const port = 82;\n");
  });
});

Deno.test("Edit: a file only touched (same content) is fine; the model's own edits need no new Read", async () => {
  await withFixture(async (f, path) => {
    await readTool.run({ file_path: "app.ts" }, f.ctx);
    await changeOnDisk(path, "const port = 80;\n");
    assert.equal((await edit(f, "80", "81")).isError, undefined);
    assert.equal((await edit(f, "81", "82")).isError, undefined);
    assert.equal(await readFile(path, "utf8"), "const port = 82;\n");
    // ...but a change on disk after the model's own edit is caught too.
    await changeOnDisk(path, "const port = 99;\n");
    assert.equal((await edit(f, "99", "100")).isError, true);
    assert.equal(await readFile(path, "utf8"), "const port = 99;\n");
  });
});

Deno.test("Write: overwriting a file changed since the model read it is refused; never-read files are written", async () => {
  await withFixture(async (f, path) => {
    await readTool.run({ file_path: "app.ts" }, f.ctx);
    await changeOnDisk(path, "const port = 8080;\n");
    const refused = await writeTool.run({ file_path: "app.ts", content: "// new\n" }, f.ctx);
    assert.equal(refused.isError, true);
    assert.match(
      refused.text,
      /^Refused to write "app\.ts": it changed on disk since you last read it/,
    );
    assert.match(refused.text, /Read it again, then write it$/);
    assert.equal(await readFile(path, "utf8"), "const port = 8080;\n");

    const other = await f.put("proj/other.ts", "old\n");
    await changeOnDisk(other, "changed\n");
    const written = await writeTool.run({ file_path: "other.ts", content: "new\n" }, f.ctx);
    assert.equal(written.isError, undefined, written.text);
    assert.equal(await readFile(join(f.cwd, "other.ts"), "utf8"), "new\n");
    // Its own Write counts as seen: an Edit right after needs no Read.
    const next = await editTool.run(
      { file_path: "other.ts", old_string: "new", new_string: "newer" },
      f.ctx,
    );
    assert.equal(next.isError, undefined, next.text);
  });
});

Deno.test("Read: each job keeps its own record of what was read", async () => {
  await withFixture(async (f, path) => {
    await readTool.run({ file_path: "app.ts" }, f.ctx);
    await changeOnDisk(path, "const port = 81;\n");
    // A new job (a fresh context) never read the file: its edit goes through.
    const fresh = { ...f.ctx, reads: undefined };
    const done = await editTool.run(
      { file_path: "app.ts", old_string: "81", new_string: "82" },
      fresh,
    );
    assert.equal(done.isError, undefined, done.text);
  });
});
