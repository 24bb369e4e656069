import assert from "node:assert/strict";
import { git } from "../support/git_repo.ts";
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { decodeFileName } from "../../src/platform/file_names.ts";
import {
  escapeBlock,
  escapeLine,
  flattenLine,
  quoteBlock,
  quotePath,
} from "../../src/platform/plain_text.ts";
import { tempDir } from "../support/harness.ts";
import { putBytes } from "../support/trees.ts";

const ESC = "\u001b";

Deno.test("escapeLine: every control, separator and bidi control becomes a C escape", () => {
  assert.equal(escapeLine("plain text, café \\n stays"), "plain text, café \\n stays");
  assert.equal(
    escapeLine(`a\nb\rc\td${ESC}[2J\u0007\u0000\u007f`),
    "a\\nb\\rc\\td\\033[2J\\a\\000\\177",
  );
  // C1 (NEL), the line and paragraph separators, and the bidi controls of Trojan Source.
  assert.equal(
    escapeLine("\u0085\u009b\u2028\u2029\u202e\u2066\u200f\u061c"),
    "\\302\\205\\302\\233\\342\\200\\250\\342\\200\\251\\342\\200\\256\\342\\201\\246" +
      "\\342\\200\\217\\330\\234",
  );
  // Escaping twice changes nothing: what is escaped holds nothing to escape.
  const once = escapeLine(`x\ny${ESC}`);
  assert.equal(escapeLine(once), once);
});

Deno.test("flattenLine: white space runs become one space, the rest is escaped", () => {
  assert.equal(flattenLine("  one\n\n two\u2028three\t "), "one two three");
  assert.equal(flattenLine(`red ${ESC}[31m\u0007`), "red \\033[31m\\a");
});

Deno.test("escapeBlock: lines and tabs stay, the rest is escaped", () => {
  assert.equal(escapeBlock("a\n\tb\r\nc"), "a\n\tb\r\nc");
  assert.equal(escapeBlock(`a\rb${ESC}c\u2028d\f`), "a\\rb\\033c\\342\\200\\250d\\f");
});

Deno.test("quoteBlock: every line marked, line breaks of every kind included", () => {
  assert.equal(
    quoteBlock(
      "1 failing\nstate:      completed (verified)\n\n--- output ---\r\nok\u2028x\rstate: y",
    ),
    "| 1 failing\n| state:      completed (verified)\n|\n| --- output ---\r\n| ok\\342\\200\\250x\\rstate: y",
  );
});

Deno.test("quotePath: git's quoting of the same names", () => {
  const repo = tempDir("od-quote-");
  git(repo, "init", "-q");
  // ASCII names: git quotes them the same whatever core.quotePath says.
  const ascii = [
    "plain.txt",
    "ok.txt\nstate:      completed",
    `e${ESC}[2Jx`,
    'q"uote',
    "back\\slash",
    "tab\tand\rcr\u0007\u007f",
  ];
  // Names whose only non-ASCII characters are unsafe: git with core.quotePath on.
  const unsafe = ["u\u2028v", "rlo\u202etxt.exe", "nel\u0085"];
  for (const name of [...ascii, ...unsafe]) writeFileSync(join(repo, name), "");
  git(repo, "add", "-A");
  const listed = (quote: boolean) =>
    git(repo, "-c", `core.quotePath=${quote}`, "ls-files").split("\n").filter((l) => l !== "")
      .sort();
  // With core.quotePath off, git leaves every non-ASCII character alone, the unsafe ones too.
  assert.deepEqual(listed(false), [...ascii.map(quotePath), ...unsafe].sort());
  assert.deepEqual(listed(true), [...ascii, ...unsafe].map(quotePath).sort());
  assert.equal(quotePath("plain.txt"), "plain.txt");
  // Other non-ASCII names stay readable (git's core.quotePath off).
  assert.equal(quotePath("café/ü.txt"), "café/ü.txt");
});

Deno.test({
  name: "quotePath: a name that is not UTF-8 shows its bytes in octal, as git does",
  ignore: Deno.build.os !== "linux",
  fn: () => {
    const repo = tempDir("od-quote-");
    execFileSync("git", ["-C", repo, "init", "-q"]);
    // Latin-1 é and 0xFF, whose only non-ASCII bytes are not UTF-8 (git quotes them on).
    putBytes(repo, "caf\\351 \\377.txt");
    execFileSync("git", ["-C", repo, "add", "-A"]);
    const listed = execFileSync("git", ["-C", repo, "-c", "core.quotePath=true", "ls-files"], {
      encoding: "utf8",
    }).trim();
    const name = decodeFileName(Uint8Array.from("caf\xe9 \xff.txt", (c) => c.charCodeAt(0)));
    assert.equal(quotePath(name), listed);
    assert.equal(listed, '"caf\\351 \\377.txt"');
    assert.equal(escapeLine(`x ${name}`), "x caf\\351 \\377.txt");
    assert.equal(escapeBlock(`a\n${name}`), "a\ncaf\\351 \\377.txt");
  },
});
