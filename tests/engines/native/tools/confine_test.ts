import assert from "node:assert/strict";
import { mkdir, readFile, stat, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { confinePath, PathRefused } from "../../../../src/engines/native/tools/confine.ts";
import { protectedPaths } from "../../../../src/guard/real_paths.ts";
import { isInside } from "../../../../src/platform/path_inside.ts";
import { readTool } from "../../../../src/engines/native/tools/read.ts";
import { writeTool } from "../../../../src/engines/native/tools/write.ts";
import { fixture } from "../tool_fixture.ts";

async function refused(promise: Promise<string>): Promise<string> {
  try {
    const path = await promise;
    assert.fail(`expected a refusal, got ${path}`);
  } catch (e) {
    assert.ok(e instanceof PathRefused, `expected PathRefused, got ${e}`);
    return e.message;
  }
}

Deno.test("confine: relative paths resolve against cwd, missing tails included", async () => {
  const f = await fixture();
  try {
    await f.put("proj/a.txt", "x");
    assert.equal(await confinePath("a.txt", f.ctx, "read"), join(f.cwd, "a.txt"));
    assert.equal(
      await confinePath("./new/deep/b.txt", f.ctx, "write"),
      join(f.cwd, "new/deep/b.txt"),
    );
    assert.equal(await confinePath(join(f.cwd, "a.txt"), f.ctx, "read"), join(f.cwd, "a.txt"));
  } finally {
    await f.cleanup();
  }
});

Deno.test("confine: any '..' segment is refused, naming the roots", async () => {
  const f = await fixture();
  try {
    const msg = await refused(confinePath("../x", f.ctx, "write"));
    assert.equal(
      msg,
      `Refused to write "../x": ".." segments are not allowed; use a path inside the allowed ` +
        `directories (${f.cwd}, ${f.extra})`,
    );
    // Even when the result would be inside: the rule is on the text, before resolution.
    await refused(confinePath("sub/../a.txt", f.ctx, "read"));
    await refused(confinePath(`${f.cwd}/../proj/a.txt`, f.ctx, "read"));
    // A name that merely starts with two dots is a name.
    assert.equal(await confinePath("..hidden", f.ctx, "write"), join(f.cwd, "..hidden"));
  } finally {
    await f.cleanup();
  }
});

Deno.test("confine: absolute paths outside the roots are refused", async () => {
  const f = await fixture();
  try {
    const target = await f.put("outside/secret.txt", "s");
    const msg = await refused(confinePath(target, f.ctx, "read"));
    assert.match(msg, /^Refused to read ".*secret\.txt": it is outside the allowed directories/);
    assert.ok(msg.includes(f.cwd) && msg.includes(f.extra));
    await refused(confinePath("/etc/passwd", f.ctx, "read"));
  } finally {
    await f.cleanup();
  }
});

Deno.test("confine: the prefix trick (/top/proj2 vs /top/proj) is refused", async () => {
  const f = await fixture();
  try {
    await refused(confinePath(join(f.proj2, "x.txt"), f.ctx, "write"));
    await refused(confinePath(f.proj2, f.ctx, "read"));
    assert.equal(isInside(f.cwd, f.proj2), false);
    assert.equal(isInside(f.cwd, f.cwd), true);
    assert.equal(isInside(f.cwd, join(f.cwd, "..x")), true);
  } finally {
    await f.cleanup();
  }
});

Deno.test("confine: a symlink inside cwd pointing outside is refused for read and write", async () => {
  const f = await fixture();
  try {
    const secret = await f.put("outside/secret.txt", "s");
    await symlink(secret, join(f.cwd, "link.txt"));
    for (const purpose of ["read", "write"] as const) {
      const msg = await refused(confinePath("link.txt", f.ctx, purpose));
      assert.match(
        msg,
        new RegExp(`^Refused to ${purpose} "link.txt": it resolves through a symlink`),
      );
      assert.ok(msg.includes(secret));
    }
    // A link to the prefix-sharing sibling is outside too.
    await symlink(f.proj2, join(f.cwd, "p2"));
    await refused(confinePath("p2/new.txt", f.ctx, "write"));
  } finally {
    await f.cleanup();
  }
});

Deno.test("confine: a dangling symlink is followed, so writing through it cannot escape", async () => {
  const f = await fixture();
  try {
    await symlink(join(f.outside, "created.txt"), join(f.cwd, "dangling"));
    await refused(confinePath("dangling", f.ctx, "write"));
    // A chain of dangling links ending inside is fine.
    await symlink(join(f.cwd, "real-target.txt"), join(f.cwd, "inner"));
    assert.equal(await confinePath("inner", f.ctx, "write"), join(f.cwd, "real-target.txt"));
    await assert.rejects(stat(join(f.outside, "created.txt")));
  } finally {
    await f.cleanup();
  }
});

Deno.test("confine: a symlinked parent directory escaping the root is refused", async () => {
  const f = await fixture();
  try {
    await symlink(f.outside, join(f.cwd, "escape"));
    const msg = await refused(confinePath("escape/new/file.txt", f.ctx, "write"));
    assert.ok(msg.includes(join(f.outside, "new/file.txt")), msg);
    // A symlinked directory that stays inside resolves to its real place.
    await f.put("proj/real/a.txt", "a");
    await symlink(join(f.cwd, "real"), join(f.cwd, "alias"));
    assert.equal(await confinePath("alias/a.txt", f.ctx, "read"), join(f.cwd, "real/a.txt"));
  } finally {
    await f.cleanup();
  }
});

Deno.test("confine: an add_dirs root is allowed, relative paths still use cwd", async () => {
  const f = await fixture();
  try {
    await f.put("extra/notes.md", "n");
    assert.equal(
      await confinePath(join(f.extra, "notes.md"), f.ctx, "read"),
      join(f.extra, "notes.md"),
    );
    assert.equal(await readFile(join(f.extra, "notes.md"), "utf8"), "n");
    await refused(confinePath("", f.ctx, "read"));
    await refused(confinePath("a", { cwd: f.cwd, roots: [] }, "read"));
  } finally {
    await f.cleanup();
  }
});

Deno.test("confine: protected directories are refused by what they will be, before they exist", async () => {
  const f = await fixture();
  try {
    // The user config dir below cwd does not exist yet; its parent is reached through a link.
    await mkdir(join(f.cwd, "real-config"));
    await symlink(join(f.cwd, "real-config"), join(f.cwd, ".config"));
    const state = join(f.cwd, "state");
    await mkdir(state);
    const protect = await protectedPaths([join(f.cwd, ".config/ollama-mcp"), state]);
    assert.deepEqual(
      protect.sort(),
      [
        join(f.cwd, ".config/ollama-mcp"),
        join(f.cwd, "real-config/ollama-mcp"),
        state,
      ].sort(),
    );
    const ctx = { ...f.ctx, protect };
    for (
      const path of [
        ".config/ollama-mcp/config.json",
        "real-config/ollama-mcp/config.json",
        "state/jobs/x.json",
        join(f.cwd, ".config/ollama-mcp"),
      ]
    ) {
      const w = await writeTool.run({ file_path: path, content: "{}" }, ctx);
      assert.equal(w.isError, true, path);
      assert.match(w.text, /it is part of ollama-delegate's own settings or job records$/, path);
    }
    await assert.rejects(stat(join(f.cwd, "real-config/ollama-mcp")));
    await writeFile(join(state, "job.json"), "{}");
    const r = await readTool.run({ file_path: "state/job.json" }, ctx);
    assert.match(r.text, /own settings or job records$/);
    // A link made later to the protected place leads nowhere either.
    await symlink(state, join(f.cwd, "innocent"));
    const viaLink = await readTool.run({ file_path: "innocent/job.json" }, ctx);
    assert.match(viaLink.text, /own settings or job records$/);
  } finally {
    await f.cleanup();
  }
});
