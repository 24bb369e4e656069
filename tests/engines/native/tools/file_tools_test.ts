import assert from "node:assert/strict";
import { open, readFile, stat, symlink } from "node:fs/promises";
import { join } from "node:path";
import { editTool } from "../../../../src/engines/native/tools/edit.ts";
import { FILE_TOOLS } from "../../../../src/engines/native/tools/index.ts";
import { readTool } from "../../../../src/engines/native/tools/read.ts";
import { MAX_FILE_BYTES, READ_MAX_CHARS } from "../../../../src/engines/native/tools/types.ts";
import { writeTool } from "../../../../src/engines/native/tools/write.ts";
import { fixture } from "../tool_fixture.ts";

Deno.test("tools: the five file tools in order, compact schemas, read-only flags", () => {
  assert.deepEqual(FILE_TOOLS.map((t) => t.name), ["Read", "Write", "Edit", "Glob", "Grep"]);
  assert.deepEqual(FILE_TOOLS.filter((t) => t.readOnly).map((t) => t.name), [
    "Read",
    "Glob",
    "Grep",
  ]);
  for (const tool of FILE_TOOLS) {
    const size = JSON.stringify({ description: tool.description, parameters: tool.parameters });
    assert.ok(size.length <= 1000, `${tool.name} schema is ${size.length} chars`);
  }
});

Deno.test("Write: creates a file in cwd, then overwrites it, reporting each change", async () => {
  const f = await fixture();
  try {
    const first = await writeTool.run({ file_path: "hello.txt", content: "héllo\n" }, f.ctx);
    assert.deepEqual(first, { text: 'Created "hello.txt" (7 bytes)' });
    assert.equal(await readFile(join(f.cwd, "hello.txt"), "utf8"), "héllo\n");
    const second = await writeTool.run({ file_path: "hello.txt", content: "" }, f.ctx);
    assert.deepEqual(second, { text: 'Overwrote "hello.txt" (0 bytes)' });
    assert.equal(await readFile(join(f.cwd, "hello.txt"), "utf8"), "");
    assert.deepEqual(f.changed, [join(f.cwd, "hello.txt"), join(f.cwd, "hello.txt")]);
  } finally {
    await f.cleanup();
  }
});

Deno.test("Write: creates nested parents inside the root, and in an add_dirs root", async () => {
  const f = await fixture();
  try {
    const r = await writeTool.run({ file_path: "a/b/c/d.txt", content: "deep" }, f.ctx);
    assert.equal(r.isError, undefined);
    assert.equal(await readFile(join(f.cwd, "a/b/c/d.txt"), "utf8"), "deep");
    const extra = join(f.extra, "x/y.txt");
    await writeTool.run({ file_path: extra, content: "e" }, f.ctx);
    assert.equal(await readFile(extra, "utf8"), "e");
    assert.deepEqual(f.changed, [join(f.cwd, "a/b/c/d.txt"), extra]);
  } finally {
    await f.cleanup();
  }
});

Deno.test("Write: escapes are refused and nothing appears outside", async () => {
  const f = await fixture();
  try {
    await symlink(f.outside, join(f.cwd, "escape"));
    const secret = await f.put("outside/secret.txt", "keep");
    await symlink(secret, join(f.cwd, "link.txt"));
    const attempts = [
      "../x",
      join(f.outside, "abs.txt"),
      "escape/new/file.txt",
      "link.txt",
      join(f.proj2, "p.txt"),
    ];
    for (const file_path of attempts) {
      const r = await writeTool.run({ file_path, content: "pwned" }, f.ctx);
      assert.equal(r.isError, true, file_path);
      assert.match(r.text, /^Refused to write /);
    }
    assert.equal(await readFile(secret, "utf8"), "keep");
    await assert.rejects(stat(join(f.top, "x")));
    await assert.rejects(stat(join(f.outside, "abs.txt")));
    await assert.rejects(stat(join(f.outside, "new")));
    await assert.rejects(stat(join(f.proj2, "p.txt")));
    assert.deepEqual(f.changed, []);
  } finally {
    await f.cleanup();
  }
});

Deno.test("Write: bad input and oversized content are errors naming the field", async () => {
  const f = await fixture();
  try {
    const missing = await writeTool.run({ file_path: "a.txt" }, f.ctx);
    assert.deepEqual(missing, {
      text: 'Write: invalid input: "content" is required (string)',
      isError: true,
    });
    const typed = await writeTool.run({ file_path: 7, content: "x" }, f.ctx);
    assert.deepEqual(typed, {
      text: 'Write: invalid input: "file_path" must be a string, got number',
      isError: true,
    });
    const big = await writeTool.run({
      file_path: "big.txt",
      content: "x".repeat(MAX_FILE_BYTES + 1),
    }, f.ctx);
    assert.equal(big.isError, true);
    assert.match(big.text, /content is 8388609 bytes, over the 8 MiB limit/);
    await assert.rejects(stat(join(f.cwd, "big.txt")));
    const dir = await writeTool.run({ file_path: ".", content: "x" }, f.ctx);
    assert.deepEqual(dir, { text: 'Cannot write ".": it is a directory', isError: true });
  } finally {
    await f.cleanup();
  }
});

Deno.test("Read: numbered lines, offset and limit, refusals", async () => {
  const f = await fixture();
  try {
    await f.put("proj/a.txt", "one\ntwo\r\nthree\n");
    assert.deepEqual(await readTool.run({ file_path: "a.txt" }, f.ctx), {
      text: "     1\tone\n     2\ttwo\n     3\tthree\n",
    });
    const part = await readTool.run({ file_path: "a.txt", offset: 2, limit: 1 }, f.ctx);
    assert.equal(part.text, "     2\ttwo\n[showed lines 2-2 of 3; continue with offset=3]");
    const past = await readTool.run({ file_path: "a.txt", offset: 9 }, f.ctx);
    assert.deepEqual(past, {
      text: '"a.txt" has 3 lines; offset=9 is past the end',
      isError: true,
    });
    const escaped = await readTool.run({ file_path: "../outside/x" }, f.ctx);
    assert.equal(escaped.isError, true);
    assert.match(escaped.text, /^Refused to read "..\/outside\/x"/);
    const dir = await readTool.run({ file_path: "." }, f.ctx);
    assert.deepEqual(dir, {
      text: 'Cannot read ".": it is a directory; use Glob to list files',
      isError: true,
    });
    const missing = await readTool.run({ file_path: "nope.txt" }, f.ctx);
    assert.deepEqual(missing, { text: 'Cannot read: "nope.txt" does not exist', isError: true });
    const bad = await readTool.run({ file_path: "a.txt", offset: "two" }, f.ctx);
    assert.deepEqual(bad, {
      text: 'Read: invalid input: "offset" must be an integer, got "two"',
      isError: true,
    });
    await f.put("proj/empty.txt", "");
    assert.deepEqual(await readTool.run({ file_path: "empty.txt" }, f.ctx), {
      text: '"empty.txt" exists but is empty (0 bytes)',
    });
  } finally {
    await f.cleanup();
  }
});

Deno.test("Read: cut at 50,000 chars with a hint, and the hinted offset continues", async () => {
  const f = await fixture();
  try {
    // 1,000 lines of 60 chars: about 68,000 chars numbered, under the 2,000-line limit.
    const lines = Array.from({ length: 1000 }, (_, i) => `line ${i + 1} `.padEnd(60, "x"));
    await f.put("proj/long.txt", lines.join("\n") + "\n");
    const first = await readTool.run({ file_path: "long.txt" }, f.ctx);
    assert.ok(first.text.length <= READ_MAX_CHARS, `${first.text.length}`);
    const hint = first.text.match(
      /\[cut at 50000 chars: file has 1000 lines; continue with offset=(\d+)\]$/,
    );
    assert.ok(hint, first.text.slice(-200));
    const next = Number(hint[1]);
    // The last line shown is the one before the hinted offset.
    assert.ok(first.text.includes(`${String(next - 1).padStart(6)}\tline ${next - 1} x`));
    assert.ok(!first.text.includes(`\tline ${next} x`));
    const second = await readTool.run({ file_path: "long.txt", offset: next }, f.ctx);
    assert.ok(second.text.startsWith(`${String(next).padStart(6)}\tline ${next} x`));
    assert.ok(second.text.includes(`  1000\tline 1000 x`));
    assert.ok(!second.text.includes("[cut at"));
  } finally {
    await f.cleanup();
  }
});

Deno.test("Read: default limit of 2,000 lines says how to continue", async () => {
  const f = await fixture();
  try {
    await f.put("proj/many.txt", Array.from({ length: 2500 }, (_, i) => `${i + 1}`).join("\n"));
    const r = await readTool.run({ file_path: "many.txt" }, f.ctx);
    assert.ok(
      r.text.endsWith("  2000\t2000\n[showed lines 1-2000 of 2500; continue with offset=2001]"),
    );
  } finally {
    await f.cleanup();
  }
});

Deno.test("Read: long lines are cut with a note", async () => {
  const f = await fixture();
  try {
    await f.put("proj/min.js", "a".repeat(5000) + "\nshort\n");
    const r = await readTool.run({ file_path: "min.js" }, f.ctx);
    assert.equal(
      r.text,
      `     1\t${"a".repeat(2000)} [line cut at 2000 of 5000 chars]\n     2\tshort\n`,
    );
  } finally {
    await f.cleanup();
  }
});

Deno.test("Read: binary files are reported, not dumped", async () => {
  const f = await fixture();
  try {
    await f.put("proj/img.png", new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 13, 1, 2]));
    const r = await readTool.run({ file_path: "img.png" }, f.ctx);
    assert.deepEqual(r, { text: '"img.png": binary file, 10 bytes, not shown' });
    // No NUL byte, but mostly invalid UTF-8.
    const junk = new Uint8Array(300).map((_, i) => 0x80 + (i % 60));
    await f.put("proj/junk.bin", junk);
    assert.deepEqual(await readTool.run({ file_path: "junk.bin" }, f.ctx), {
      text: '"junk.bin": binary file, 300 bytes, not shown',
    });
    // A little Latin-1 in a text file is still text.
    const enc = new TextEncoder();
    const latin = [...enc.encode("un caf"), 0xe9, ...enc.encode(" au lait\n")];
    await f.put("proj/latin.txt", new Uint8Array(latin));
    assert.deepEqual(await readTool.run({ file_path: "latin.txt" }, f.ctx), {
      text: "     1\tun caf\uFFFD au lait\n",
    });
  } finally {
    await f.cleanup();
  }
});

Deno.test("Read and Edit: a file over 8 MiB is refused with its size", async () => {
  const f = await fixture();
  try {
    const path = join(f.cwd, "huge.log");
    const handle = await open(path, "w");
    await handle.truncate(MAX_FILE_BYTES + 1); // sparse: no 8 MiB actually written
    await handle.close();
    const r = await readTool.run({ file_path: "huge.log" }, f.ctx);
    assert.equal(r.isError, true);
    assert.match(
      r.text,
      /^Refused to read "huge.log": it is 8388609 bytes, over the 8 MiB limit; /,
    );
    const e = await editTool.run(
      { file_path: "huge.log", old_string: "a", new_string: "b" },
      f.ctx,
    );
    assert.match(e.text, /^Refused to edit "huge.log": it is 8388609 bytes/);
    assert.equal((await stat(path)).size, MAX_FILE_BYTES + 1);
  } finally {
    await f.cleanup();
  }
});

Deno.test("Edit: a unique match is replaced; several or none are errors", async () => {
  const f = await fixture();
  try {
    const path = await f.put("proj/code.ts", "let a = 1;\nlet b = 1;\nlet c = 2;\n");
    const one = await editTool.run(
      { file_path: "code.ts", old_string: "c = 2", new_string: "c = $& 3" },
      f.ctx,
    );
    assert.deepEqual(one, { text: 'Edited "code.ts": replaced 1 occurrence at line 3' });
    assert.equal(await readFile(path, "utf8"), "let a = 1;\nlet b = 1;\nlet c = $& 3;\n");

    const many = await editTool.run(
      { file_path: "code.ts", old_string: "= 1", new_string: "= 0" },
      f.ctx,
    );
    assert.deepEqual(many, {
      text: 'old_string found 2 times in "code.ts"; add context or use replace_all',
      isError: true,
    });
    const none = await editTool.run(
      { file_path: "code.ts", old_string: "let d", new_string: "let e" },
      f.ctx,
    );
    assert.equal(none.isError, true);
    assert.match(none.text, /^old_string not found in "code.ts"/);
    const same = await editTool.run(
      { file_path: "code.ts", old_string: "a", new_string: "a" },
      f.ctx,
    );
    assert.equal(same.isError, true);
    assert.match(same.text, /old_string and new_string are the same/);
    assert.equal(await readFile(path, "utf8"), "let a = 1;\nlet b = 1;\nlet c = $& 3;\n");

    const all = await editTool.run(
      { file_path: "code.ts", old_string: "= 1", new_string: "= 0", replace_all: true },
      f.ctx,
    );
    assert.deepEqual(all, { text: 'Edited "code.ts": replaced 2 occurrences' });
    assert.equal(await readFile(path, "utf8"), "let a = 0;\nlet b = 0;\nlet c = $& 3;\n");
    assert.deepEqual(f.changed, [path, path]);
  } finally {
    await f.cleanup();
  }
});

Deno.test("Edit: CRLF files match LF old_string; empty old_string creates a new file", async () => {
  const f = await fixture();
  try {
    const path = await f.put("proj/win.txt", "a\r\nb\r\nc\r\n");
    const r = await editTool.run(
      { file_path: "win.txt", old_string: "a\nb", new_string: "a\nB" },
      f.ctx,
    );
    assert.equal(r.isError, undefined, r.text);
    assert.equal(await readFile(path, "utf8"), "a\r\nB\r\nc\r\n");
    const created = await editTool.run(
      { file_path: "new/file.txt", old_string: "", new_string: "hi" },
      f.ctx,
    );
    assert.deepEqual(created, { text: 'Created "new/file.txt"' });
    assert.equal(await readFile(join(f.cwd, "new/file.txt"), "utf8"), "hi");
    const exists = await editTool.run(
      { file_path: "win.txt", old_string: "", new_string: "x" },
      f.ctx,
    );
    assert.equal(exists.isError, true);
    const outside = await editTool.run(
      { file_path: "../outside/x", old_string: "", new_string: "x" },
      f.ctx,
    );
    assert.equal(outside.isError, true);
    await assert.rejects(stat(join(f.outside, "x")));
  } finally {
    await f.cleanup();
  }
});
