/**
 * scripts/helper_homes.ts against a copy of the repository's src/ with a second home planted:
 * each must be reported by file, line and name, and the tree as it is must pass.
 */
import { tempDir } from "../support/temp_dir.ts";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { appendFileSync, cpSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { checkHelperHomes, definitionLines, type SecondHome } from "../../scripts/helper_homes.ts";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const script = join(repo, "scripts", "helper_homes.ts");

/** A repository holding a copy of src/ with `text` appended to `src/<file>`; removed after. */
function withPlanted<T>(file: string, text: string, use: (root: string) => T): T {
  const top = tempDir("helper_homes_");
  try {
    cpSync(join(repo, "src"), join(top, "src"), { recursive: true });
    appendFileSync(join(top, "src", file), `\n${text}\n`);
    return use(top);
  } finally {
    rmSync(top, { recursive: true, force: true });
  }
}

const planted = (file: string, text: string): SecondHome[] =>
  withPlanted(file, text, (root) => checkHelperHomes(root));

Deno.test("the repository keeps one home per listed helper", () => {
  assert.deepEqual(checkHelperHomes(repo).map((v) => v.message), []);
});

Deno.test("a local copy of a helper is a second home, named with file and line", () => {
  const found = planted(
    "jobs/store.ts",
    "const isObject = (v: unknown) => typeof v === 'object';",
  );
  assert.equal(found.length, 1, found.map((v) => v.message).join("\n"));
  assert.equal(found[0]!.name, "isObject");
  assert.equal(found[0]!.file, "src/jobs/store.ts");
  assert.match(found[0]!.message, /^src\/jobs\/store\.ts:\d+: a second home for "isObject"/);
  assert.match(found[0]!.message, /src\/platform\/json_object\.ts/);
});

Deno.test("an exported function, async or not, is a second home too", () => {
  const found = planted(
    "cli/stats.ts",
    [
      "export async function settleWithin<T>(p: Promise<T>) { return await p; }",
      "export function isInside(a: string, b: string): boolean { return a === b; }",
    ].join("\n"),
  );
  assert.deepEqual(found.map((v) => v.name).sort(), ["isInside", "settleWithin"]);
});

Deno.test("a retired name a copy went by is refused everywhere, with the name to use", () => {
  const found = planted("guard/refusals.ts", "export const DEFAULT_BACKEND_NAME = 'ollama';");
  assert.equal(found.length, 1);
  assert.match(found[0]!.message, /the helper is DEFAULT_BACKEND in src\/settings\/backends\.ts/);
});

Deno.test("an error body read inline is a second home of errorDetail, by line", () => {
  // The reader model_list.ts had before issue 33's step 2, as it was.
  const found = planted(
    "backends/model_list.ts",
    [
      "function oldDetail(body: unknown, text: string): string {",
      "  const error = isObject(body) ? body.error : undefined;",
      '  return typeof error === "string"',
      "    ? error",
      '    : isObject(error) && typeof error.message === "string"',
      "    ? error.message",
      '    : isObject(body) && typeof body.detail === "string"',
      "    ? body.detail",
      "    : text.slice(0, 200);",
      "}",
      'const m = isObject(b) && isObject(b.error) ? b.error?.message : "";',
      "// body.error.message, in a comment, is no reader",
    ].join("\n"),
  );
  assert.deepEqual(found.map((v) => v.name), ["errorDetail", "errorDetail"]);
  const lines = found.map((v) => v.line);
  assert.equal(lines[1]! - lines[0]!, 4, "the detail line and the error?.message line");
  assert.match(
    found[0]!.message,
    /^src\/backends\/model_list\.ts:\d+: does the work of "errorDetail" inline \(its home is src\/backends\/http_util\.ts\): call errorDetail instead/,
  );
});

Deno.test("a number formatted by ICU inline is a second home of formatCount", () => {
  // The context check's sentence before: every server's first claude turn loaded ICU for it.
  const found = planted(
    "engines/claude/context_check.ts",
    'const tokensText = (v: number) => `${v.toLocaleString("en-US")} tokens`;',
  );
  assert.deepEqual(found.map((v) => v.name), ["formatCount"]);
  assert.match(found[0]!.message, /call formatCount instead/);
});

Deno.test("uses, imports, aliases and comments are not definitions", () => {
  const text = [
    'import { isObject } from "./json_object.ts";',
    'import { isObject as isThing } from "./json_object.ts";',
    "// const isObject = 1;",
    "/** function isObject() {} */",
    "const ok = isObject(x) && isObjectLike(y);",
    "const isObjectLike = (v: unknown) => v;",
    "obj.isObject = 1;",
  ].join("\n");
  assert.deepEqual(definitionLines(text, "isObject"), []);
  assert.deepEqual(definitionLines("\n\n  let isObject: number = 1;", "isObject"), [3]);
});

Deno.test("the script exits 1 naming the second home, and 0 silently on the repository", () => {
  const run = (dir: string) =>
    spawnSync(Deno.execPath(), ["run", "--allow-read", script, dir], { encoding: "utf8" });
  const clean = run(repo);
  assert.equal(clean.status, 0, clean.stderr);
  assert.equal(clean.stderr, "");
  withPlanted("server/render.ts", "function runCommand() {}", (root) => {
    const broken = run(root);
    assert.equal(broken.status, 1);
    assert.match(broken.stderr, /src\/server\/render\.ts:\d+: a second home for "runCommand"/);
    assert.match(broken.stderr, /1 helper\(s\) defined outside their home/);
  });
});
