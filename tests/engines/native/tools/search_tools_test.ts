import assert from "node:assert/strict";
import { open, symlink, utimes } from "node:fs/promises";
import { join } from "node:path";
import { globTool } from "../../../../src/engines/native/tools/glob.ts";
import { expandBraces, globToRegExp } from "../../../../src/engines/native/tools/glob_pattern.ts";
import { grepTool } from "../../../../src/engines/native/tools/grep.ts";
import { MAX_FILE_BYTES } from "../../../../src/engines/native/tools/types.ts";
import { type Fixture, fixture } from "../tool_fixture.ts";

Deno.test("glob patterns: **, *, ?, classes, braces, escapes", () => {
  const yes = (p: string, s: string) => assert.ok(globToRegExp(p).test(s), `${p} ~ ${s}`);
  const no = (p: string, s: string) => assert.ok(!globToRegExp(p).test(s), `${p} !~ ${s}`);
  yes("**/*.ts", "a.ts");
  yes("**/*.ts", "src/deep/a.ts");
  no("**/*.ts", "a.tsx");
  yes("src/**", "src/a/b.c");
  no("src/**", "srcx/a");
  yes("src/**/test.ts", "src/test.ts");
  yes("src/**/test.ts", "src/x/y/test.ts");
  no("src/**/test.ts", "src/xtest.ts");
  yes("*.md", "README.md");
  no("*.md", "docs/README.md");
  yes("?.txt", "a.txt");
  no("?.txt", "ab.txt");
  yes("[abc].js", "b.js");
  no("[!abc].js", "b.js");
  yes("[!abc].js", "d.js");
  yes("file[0-9].txt", "file7.txt");
  no("a[/]b", "a/b");
  yes("*.{ts,tsx}", "x.tsx");
  yes("{src,lib}/**/*.{js,mjs}", "lib/a/b.mjs");
  no("{src,lib}/*.js", "test/a.js");
  yes("\\*.txt", "*.txt");
  no("\\*.txt", "a.txt");
  yes("a.b", "a.b");
  no("a.b", "axb");
  yes("{single}", "{single}");
  assert.deepEqual(expandBraces("a{b,c{d,e}}f"), ["abf", "acdf", "acef"]);
  assert.throws(() => expandBraces("{a,b}".repeat(11)), RangeError);
});

async function tree(f: Fixture): Promise<void> {
  const files: Array<[string, number]> = [
    ["proj/old.ts", 1_000],
    ["proj/src/mid.ts", 2_000],
    ["proj/src/deep/new.ts", 3_000],
    ["proj/src/readme.md", 4_000],
    ["proj/node_modules/pkg/index.ts", 5_000],
    ["proj/.git/hooks/x.ts", 5_000],
  ];
  for (const [rel, seconds] of files) {
    const path = await f.put(rel, `// ${rel}\nexport const v = 1;\n`);
    await utimes(path, seconds, seconds);
  }
}

Deno.test("Glob: ** finds files at every depth, newest first, skipping .git and node_modules", async () => {
  const f = await fixture();
  try {
    await tree(f);
    assert.deepEqual(await globTool.run({ pattern: "**/*.ts" }, f.ctx), {
      text: "src/deep/new.ts\nsrc/mid.ts\nold.ts",
    });
    assert.deepEqual(await globTool.run({ pattern: "src/*" }, f.ctx), {
      text: "src/readme.md\nsrc/mid.ts",
    });
    assert.deepEqual(await globTool.run({ pattern: "*.ts", path: "src" }, f.ctx), {
      text: "mid.ts",
    });
    assert.deepEqual(await globTool.run({ pattern: "node_modules/**/*.ts" }, f.ctx), {
      text: "node_modules/pkg/index.ts",
    });
    assert.deepEqual(await globTool.run({ pattern: `${f.cwd}/src/**/*.ts` }, f.ctx), {
      text: `${f.cwd}/src/deep/new.ts\n${f.cwd}/src/mid.ts`,
    });
    assert.deepEqual(await globTool.run({ pattern: "**/*.py" }, f.ctx), {
      text: 'No files match "**/*.py" in "."',
    });
  } finally {
    await f.cleanup();
  }
});

Deno.test("Glob: at most 200 paths, with a note of the rest", async () => {
  const f = await fixture();
  try {
    for (let i = 0; i < 230; i++) await f.put(`proj/many/f${String(i).padStart(3, "0")}.txt`, "");
    const r = await globTool.run({ pattern: "many/*.txt" }, f.ctx);
    const lines = r.text.split("\n");
    assert.equal(lines.length, 201);
    assert.equal(lines[200], "[30 more not shown; narrow the pattern]");
    assert.ok(lines.slice(0, 200).every((l) => /^many\/f\d{3}\.txt$/.test(l)));
  } finally {
    await f.cleanup();
  }
});

Deno.test("Glob: stays inside the roots; symlinks are not followed, as ripgrep's default", async () => {
  const f = await fixture();
  try {
    await f.put("outside/secret.ts", "");
    await f.put("extra/lib/shared.ts", "");
    await f.put("proj/a.ts", "");
    await symlink(f.outside, join(f.cwd, "out"));
    await symlink(join(f.extra, "lib"), join(f.cwd, "lib"));
    await symlink(f.cwd, join(f.cwd, "loop"));
    const r = await globTool.run({ pattern: "**/*.ts" }, f.ctx);
    assert.deepEqual(r.text.split("\n").sort(), ["a.ts"]);
    // A symlinked directory inside the roots can still be searched by naming it.
    assert.deepEqual(await globTool.run({ pattern: "lib/*.ts" }, f.ctx), {
      text: "lib/shared.ts",
    });
    const dots = await globTool.run({ pattern: "../outside/*.ts" }, f.ctx);
    assert.equal(dots.isError, true);
    assert.match(dots.text, /^Refused to search "..\/outside\/\*.ts": ".." segments/);
    const abs = await globTool.run({ pattern: "*.ts", path: f.outside }, f.ctx);
    assert.equal(abs.isError, true);
    assert.match(abs.text, /^Refused to read ".*outside": it is outside the allowed directories/);
    const absPattern = await globTool.run({ pattern: `${f.outside}/*.ts` }, f.ctx);
    assert.equal(absPattern.isError, true);
    assert.deepEqual(await globTool.run({ pattern: "*.ts", path: f.extra + "/lib" }, f.ctx), {
      text: "shared.ts",
    });
    assert.deepEqual(await globTool.run({}, f.ctx), {
      text: 'Glob: invalid input: "pattern" is required (string)',
      isError: true,
    });
  } finally {
    await f.cleanup();
  }
});

async function grepTree(f: Fixture): Promise<void> {
  await f.put("proj/a.ts", "import x from 'y';\nconst Token = 1;\nconst other = 2;\n");
  await f.put("proj/sub/b.ts", "let token = 3;\n");
  await f.put("proj/sub/c.md", "token in docs\nand TOKEN again\n");
  await f.put("proj/bin.dat", new Uint8Array([0x74, 0x6f, 0x6b, 0x65, 0x6e, 0, 1, 2]));
  await f.put("proj/node_modules/m/token.ts", "token\n");
  await utimes(join(f.cwd, "a.ts"), 3_000, 3_000);
  await utimes(join(f.cwd, "sub/b.ts"), 2_000, 2_000);
  await utimes(join(f.cwd, "sub/c.md"), 1_000, 1_000);
}

Deno.test("Grep: files_with_matches, content and count modes", async () => {
  const f = await fixture();
  try {
    await grepTree(f);
    assert.deepEqual(await grepTool.run({ pattern: "token" }, f.ctx), {
      text: "sub/b.ts\nsub/c.md",
    });
    assert.deepEqual(await grepTool.run({ pattern: "token", "-i": true }, f.ctx), {
      text: "a.ts\nsub/b.ts\nsub/c.md",
    });
    assert.deepEqual(
      await grepTool.run({ pattern: "t[oO]ken", output_mode: "content", "-i": true }, f.ctx),
      {
        text:
          "a.ts:2:const Token = 1;\nsub/b.ts:1:let token = 3;\nsub/c.md:1:token in docs\nsub/c.md:2:and TOKEN again",
      },
    );
    assert.deepEqual(
      await grepTool.run(
        { pattern: "token", output_mode: "content", "-n": false, glob: "*.md" },
        f.ctx,
      ),
      { text: "sub/c.md:token in docs" },
    );
    assert.deepEqual(
      await grepTool.run(
        { pattern: "token", output_mode: "count", "-i": true, path: "sub" },
        f.ctx,
      ),
      { text: "sub/b.ts:1\nsub/c.md:2" },
    );
    assert.deepEqual(
      await grepTool.run({ pattern: "const", output_mode: "content", path: "a.ts" }, f.ctx),
      { text: "a.ts:2:const Token = 1;\na.ts:3:const other = 2;" },
    );
    assert.deepEqual(
      await grepTool.run(
        { pattern: "token", output_mode: "content", head_limit: 1, "-i": true },
        f.ctx,
      ),
      { text: "a.ts:2:const Token = 1;\n[head_limit 1: 3 more not shown]" },
    );
    assert.deepEqual(await grepTool.run({ pattern: "nothing-here" }, f.ctx), {
      text: 'No matches for /nothing-here/ in "."',
    });
    assert.deepEqual(await grepTool.run({ pattern: "token", glob: "node_modules/**" }, f.ctx), {
      text: "node_modules/m/token.ts",
    });
  } finally {
    await f.cleanup();
  }
});

Deno.test("Grep: invalid regex, bad mode and refused paths are errors", async () => {
  const f = await fixture();
  try {
    const bad = await grepTool.run({ pattern: "foo(" }, f.ctx);
    assert.equal(bad.isError, true);
    assert.match(bad.text, /^Grep: invalid input: "pattern" is not a valid regex: \/foo\(\/: /);
    const mode = await grepTool.run({ pattern: "x", output_mode: "lines" }, f.ctx);
    assert.deepEqual(mode, {
      text: 'Grep: invalid input: "output_mode" must be one of files_with_matches, content, ' +
        'count, got "lines"',
      isError: true,
    });
    await f.put("outside/s.txt", "secret");
    const out = await grepTool.run({ pattern: "secret", path: "../outside" }, f.ctx);
    assert.equal(out.isError, true);
    assert.match(out.text, /^Refused to read "..\/outside"/);
  } finally {
    await f.cleanup();
  }
});

Deno.test("Grep: output cut at 20,000 chars; huge files skipped and counted", async () => {
  const f = await fixture();
  try {
    const lines = Array.from({ length: 800 }, (_, i) => `match number ${i} `.padEnd(50, "."));
    await f.put("proj/big.txt", lines.join("\n"));
    const r = await grepTool.run({ pattern: "match", output_mode: "content" }, f.ctx);
    assert.ok(r.text.length <= 20_200, `${r.text.length}`);
    assert.match(
      r.text,
      /\n\[cut at 20000 chars: \d+ more lines not shown; narrow with path, glob or head_limit\]$/,
    );
    assert.ok(r.text.startsWith("big.txt:1:match number 0 "));
    const handle = await open(join(f.cwd, "huge.txt"), "w");
    await handle.truncate(MAX_FILE_BYTES + 1);
    await handle.close();
    const files = await grepTool.run({ pattern: "match" }, f.ctx);
    assert.equal(files.text, "big.txt\n[1 file over the 8 MiB limit not searched]");
  } finally {
    await f.cleanup();
  }
});

Deno.test("Grep: searching in chunks finds exactly the lines a line-by-line match finds", async () => {
  const f = await fixture();
  try {
    // Several 16 KiB chunks of varied lines, CRLF and LF mixed, ending in an empty line.
    const words = ["foo", "bar", "a b", "xy", "", "word", "foo bar", "o", "b", "\u2028x", "ab\r"];
    const lines = Array.from({ length: 12_000 }, (_, i) => `${words[i % words.length]}${i % 7}`);
    lines.push("");
    await f.put("proj/many.txt", lines.join("\n"));
    const expected = (pattern: string) =>
      lines.flatMap((raw, i) => {
        const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
        return new RegExp(pattern).test(line) ? [`many.txt:${i + 1}:${line}`] : [];
      });
    for (
      const pattern of [
        "^foo",
        "bar\\d$",
        "a\\sb",
        "o\\nb",
        "[^]",
        "^\\d$",
        "^$",
        "(?<=x)y",
        "foo(?!\\s)",
        "\\bword\\b",
        "x[0-9]$",
      ]
    ) {
      const r = await grepTool.run(
        { pattern, output_mode: "content", head_limit: 100_000 },
        f.ctx,
      );
      const want = expected(pattern);
      const got = r.text.startsWith("No matches") ? [] : r.text.split("\n");
      // Output is cut at 20,000 chars: compare what fits, and the count in count mode.
      assert.deepEqual(
        got.filter((l) => l.startsWith("many.txt:")),
        want.slice(0, got.length - (got.at(-1)?.startsWith("[") ? 1 : 0)),
        pattern,
      );
      const count = await grepTool.run({ pattern, output_mode: "count" }, f.ctx);
      assert.equal(
        count.text,
        want.length === 0 ? `No matches for /${pattern}/ in "."` : `many.txt:${want.length}`,
        pattern,
      );
    }
  } finally {
    await f.cleanup();
  }
});
