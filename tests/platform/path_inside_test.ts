import assert from "node:assert/strict";
import fc from "fast-check";
import { posix, win32 } from "node:path";
import { isInside, isInsideRoots } from "../../src/platform/path_inside.ts";

Deno.test("isInside: the root itself and what lies below it, on POSIX", () => {
  assert.equal(isInside("/a/b", "/a/b", posix), true);
  assert.equal(isInside("/a/b", "/a/b/", posix), true);
  assert.equal(isInside("/a/b", "/a/b/c/d", posix), true);
  assert.equal(isInside("/", "/etc", posix), true);
  assert.equal(isInside("/a/b", "/a", posix), false);
  assert.equal(isInside("/a/b", "/x/y", posix), false);
});

Deno.test("isInside: a name prefix is not a folder (/a/bc is not in /a/b)", () => {
  assert.equal(isInside("/a/b", "/a/bc", posix), false);
  assert.equal(isInside("/a/b/", "/a/bc/d", posix), false);
  assert.equal(isInside("C:\\a\\b", "C:\\a\\bc", win32), false);
});

Deno.test("isInside: `..` steps are resolved, a name starting with `..` is an entry", () => {
  assert.equal(isInside("/a/b", "/a/b/../c", posix), false);
  assert.equal(isInside("/a/b", "/a/b/c/../../b/d", posix), true);
  assert.equal(isInside("/a/b", "/a/b/..", posix), false);
  assert.equal(isInside("/a/b", "/a/b/..x", posix), true);
  assert.equal(isInside("/a/b", "/a/b/...", posix), true);
  assert.equal(isInside("C:\\a", "C:\\a\\..\\b", win32), false);
  assert.equal(isInside("C:\\a", "C:\\a\\..x", win32), true);
});

Deno.test("isInside: Windows drives differ, letters and names fold case", () => {
  assert.equal(isInside("C:\\a", "D:\\a\\b", win32), false);
  assert.equal(isInside("C:\\", "D:\\", win32), false);
  assert.equal(isInside("C:\\Users\\Ann", "c:\\users\\ann\\Work", win32), true);
  assert.equal(isInside("c:\\", "C:\\Windows", win32), true);
  assert.equal(isInside("C:\\a", "C:/a/b", win32), true);
  assert.equal(isInside("\\\\srv\\share\\x", "\\\\srv\\share\\x\\y", win32), true);
  assert.equal(isInside("\\\\srv\\share\\x", "\\\\srv\\other\\x\\y", win32), false);
});

Deno.test("isInsideRoots: any of the roots", () => {
  assert.equal(isInsideRoots(["/a", "/b"], "/b/c", posix), true);
  assert.equal(isInsideRoots(["/a", "/b"], "/bc", posix), false);
  assert.equal(isInsideRoots([], "/a", posix), false);
});

Deno.test("isInside: the shortcut for real paths agrees with resolving both, on any POSIX path", () => {
  // Paths with and without steps to normalise (`.`, `..`, `//`, a `/` at the end), so that
  // both the shortcut and `relative` answer, checked against a different way to the same fact.
  const segment = fc.constantFrom("a", "b", "ab", "..", ".", "..x", ".a", "", "a b");
  const path = fc.array(segment, { maxLength: 5 }).map((parts) => "/" + parts.join("/"));
  const resolved = (root: string, p: string) => {
    const r = posix.resolve(root);
    const q = posix.resolve(p);
    return q === r || q.startsWith(r === "/" ? "/" : `${r}/`);
  };
  fc.assert(
    fc.property(path, path, (root, p) => {
      assert.equal(isInside(root, p, posix), resolved(root, p), `${root} ⊇ ${p}`);
      assert.equal(isInside(root, p), resolved(root, p), `${root} ⊇ ${p} (node:path)`);
    }),
    { numRuns: 20_000 },
  );
  // The shortcut's own edges, spelled out.
  assert.equal(isInside("/", "/"), true);
  assert.equal(isInside("/a", "/ab"), false);
  assert.equal(isInside("/a", "/a/..b"), true);
  assert.equal(isInside("/a/b", "/a/b//c"), true);
  assert.equal(isInside("/a/b/", "/a/b"), true);
});
