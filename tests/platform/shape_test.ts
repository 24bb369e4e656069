import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as is from "../../src/platform/shape.ts";
import { bundleForNode } from "../../scripts/build_node.ts";
import { tempDir } from "../support/temp_dir.ts";

function issues(shape: is.Shape<unknown>, value: unknown): is.Issue[] {
  const parsed = shape.safeParse(value);
  assert.equal(parsed.success, false, `${JSON.stringify(value)} was accepted`);
  return parsed.success ? [] : parsed.error.issues;
}

function first(shape: is.Shape<unknown>, value: unknown): string {
  return issues(shape, value)[0]!.message;
}

Deno.test("shape: strings are trimmed before the checks written after the trim, and kept trimmed", () => {
  const name = is.string().trim().min(1, "empty").max(3, "long");
  assert.equal(name.parse("  ab "), "ab");
  assert.equal(first(name, "   "), "empty");
  assert.equal(first(name, " abcd "), "long");
  assert.equal(is.string().max(3).parse(" ab"), " ab");
  assert.equal(first(is.string().max(2), " ab"), "must be at most 2 characters");
  assert.equal(first(is.string().min(1), ""), "cannot be empty");
  assert.equal(first(is.string().regex(/^a/, "starts with a"), "b"), "starts with a");
  assert.equal(first(is.string(), 5), "must be a string, not a number");
  assert.equal(first(is.string(), null), "must be a string, not null");
  assert.equal(first(is.string(), ["x"]), "must be a string, not an array");
});

Deno.test("shape: numbers are finite; int, min, max and positive say what they want", () => {
  const n = is.number().int("whole").min(1).max(64);
  assert.equal(n.parse(4), 4);
  assert.equal(first(n, 1.5), "whole");
  assert.equal(first(n, 0), "must be at least 1");
  assert.equal(first(n, 65), "must be at most 64");
  assert.equal(first(is.number(), "4"), "must be a number, not a string");
  assert.equal(first(is.number(), Number.NaN), "must be a number, not a non-finite number");
  assert.equal(first(is.number(), Infinity), "must be a number, not a non-finite number");
  assert.equal(first(is.number().positive(), 0), "must be more than 0");
  assert.equal(first(is.number().int(), 2.5), "must be a whole number");
  const i = issues(is.number().int("whole").min(5), 2.5);
  assert.deepEqual(i.map((x) => x.message), ["whole", "must be at least 5"], "every check runs");
});

Deno.test("shape: enums and literals are invalid_value issues listing what is allowed", () => {
  const mode = is.enumOf(["off", "on"] as const);
  assert.equal(mode.parse("on"), "on");
  const [issue] = issues(mode, "sometimes");
  assert.equal(issue!.code, "invalid_value");
  assert.deepEqual(issue!.values, ["off", "on"]);
  assert.equal(issue!.message, "must be one of off, on");
  assert.equal(first(is.literal(1), 2), "must be 1");
  assert.equal(is.literal(1).parse(1), 1);
});

Deno.test("shape: objects drop keys they do not name, strict ones refuse them", () => {
  const o = is.object({ a: is.string(), b: is.number().optional() });
  assert.deepEqual(o.parse({ a: "x", c: 1 }), { a: "x" });
  assert.deepEqual(o.parse({ a: "x", b: 2 }), { a: "x", b: 2 });
  const [issue] = issues(o.strict(), { a: "x", c: 1, d: 2 });
  assert.equal(issue!.code, "unrecognized_keys");
  assert.equal(issue!.message, 'has keys it does not know: "c", "d"');
  assert.equal(first(o, []), "must be an object, not an array");
  assert.equal(first(o, null), "must be an object, not null");
  // A key inherited from the prototype is not the object's own.
  assert.equal(first(o, Object.create({ a: "x" })), "must be a string, not undefined");
});

Deno.test("shape: an issue's path leads to the value inside objects, arrays and records", () => {
  const o = is.object({
    list: is.array(is.object({ n: is.number() })),
    map: is.record(is.string().regex(/^[a-z]+$/, "lower case"), is.number()),
  });
  const [deep] = issues(o, { list: [{ n: 1 }, { n: "2" }], map: {} });
  assert.deepEqual(deep!.path, ["list", 1, "n"]);
  const [value] = issues(o, { list: [], map: { a: "1" } });
  assert.deepEqual(value!.path, ["map", "a"]);
  const [key] = issues(o, { list: [], map: { A: 1 } });
  assert.equal(key!.code, "invalid_key");
  assert.deepEqual(key!.path, ["map", "A"]);
  assert.equal(key!.issues?.[0]?.message, "lower case");
  assert.equal(
    o.safeParse({ list: [{ n: "2" }], map: {} }).success ? "" : new is.ShapeError(
      issues(o, { list: [{ n: "2" }], map: {} }),
    ).message,
    "must be a number, not a string (at list.0.n)",
  );
});

Deno.test("shape: defaults fill a missing value, optional and nullable let it be missing or null", () => {
  const o = is.object({
    d: is.number().default(3),
    opt: is.string().optional(),
    nul: is.string().nullable(),
  });
  assert.deepEqual(o.parse({ nul: null }), { d: 3, nul: null });
  assert.deepEqual(o.parse({ d: 5, opt: "x", nul: "y" }), { d: 5, opt: "x", nul: "y" });
  assert.equal(first(o, { d: "5", nul: null }), "must be a number, not a string");
  assert.equal(first(o, {}), "must be a string, not undefined");
  // The default is checked like any value.
  assert.equal(first(is.number().min(5).default(1), undefined), "must be at least 5");
});

Deno.test("shape: refine and transform run only on a value of the right shape", () => {
  let calls = 0;
  const r = is.string().refine((s) => {
    calls++;
    return s !== "no";
  }, (s) => `"${s}" is refused`);
  assert.equal(first(r, "no"), '"no" is refused');
  assert.equal(first(r, 5), "must be a string, not a number");
  assert.equal(calls, 1);
  const t = is.string().transform((s, ctx) => {
    if (s === "bad") {
      ctx.addIssue({ message: "bad one", path: ["inner"] });
      return is.NEVER;
    }
    return s.length;
  });
  assert.equal(t.parse("abc"), 3);
  const [issue] = issues(is.object({ x: t }), { x: "bad" });
  assert.equal(issue!.message, "bad one");
  assert.deepEqual(issue!.path, ["x", "inner"]);
  const sr = is.array(is.string()).superRefine((list, ctx) => {
    if (new Set(list).size !== list.length) ctx.addIssue({ message: "twice" });
  });
  assert.equal(first(sr, ["a", "a"]), "twice");
  assert.deepEqual(sr.parse(["a", "b"]), ["a", "b"]);
});

Deno.test("shape: a union takes the first option that accepts, and reports the most telling failure", () => {
  const name = is.string().trim().min(1).refine((s) => !/\s/.test(s), "no spaces");
  const u = is.union([is.literal(""), name]);
  assert.equal(u.parse(""), "");
  assert.equal(u.parse(" m "), "m");
  // The name got past its type: its problem is the one to say.
  assert.equal(first(u, "a b"), "no spaces");
  // No fixed value is an array: the type is what is wrong.
  const [typed] = issues(u, ["x"]);
  assert.equal(typed!.code, "invalid_type");
  assert.equal(typed!.message, "must be a string, not an array");
  // Both options fixed values: the first's.
  assert.equal(first(is.union([is.literal("a"), is.literal("b")]), "c"), 'must be "a"');
  const either = is.union([
    is.string().transform((s) => ({ url: s })),
    is.object({ url: is.string() }),
  ]);
  assert.deepEqual(either.parse("u"), { url: "u" });
  assert.deepEqual(either.parse({ url: "v", extra: 1 }), { url: "v" });
});

Deno.test("shape: arrays check each item and their length", () => {
  assert.equal(first(is.array(is.number()).max(2), [1, 2, 3]), "must list at most 2 entries");
  assert.equal(first(is.array(is.number()).min(1), []), "cannot be empty");
  assert.equal(first(is.array(is.number()), "1,2"), "must be an array, not a string");
});

Deno.test("shape: pick and extend make a new object shape; parse throws what safeParse says", () => {
  const full = is.object({ a: is.string(), b: is.number(), c: is.boolean() });
  const line = full.pick({ a: true, b: true }).extend({ at: is.number() });
  assert.deepEqual(line.parse({ a: "x", b: 1, c: true, at: 2 }), { a: "x", b: 1, at: 2 });
  assert.throws(() => line.parse({ a: "x", b: 1 }), (e: unknown) => {
    assert.ok(e instanceof is.ShapeError);
    assert.equal(e.message, "must be a number, not undefined (at at)");
    return true;
  });
});

Deno.test("shape: a record leaves a __proto__ key out unchecked, as zod's does", () => {
  const names = is.record(is.string().regex(/^[a-z]+$/, "lower case"), is.number());
  assert.deepEqual(Object.keys(names.parse(JSON.parse('{"__proto__": "x", "a": 2}'))), ["a"]);
});

Deno.test("shape: int takes safe integers only, as zod's does", () => {
  assert.equal(first(is.number().int(), 2 ** 53), "must be a whole number");
  assert.equal(is.number().int().parse(2 ** 53 - 1), 2 ** 53 - 1);
});

Deno.test({
  // Deno has no __proto__ accessor, Node has: there `out[key] = value` sets the prototype.
  name: "shape: under Node too, a record leaves a __proto__ key out and pollutes nothing",
  ignore: Deno.build.os === "windows",
  fn() {
    const bundle = join(tempDir("od-shape-node-"), "shape.mjs");
    bundleForNode(
      join(dirname(fileURLToPath(import.meta.url)), "../../src/platform/shape.ts"),
      bundle,
    );
    const script = `import * as is from ${JSON.stringify(bundle)};
      const m = is.record(is.string(), is.object({ n: is.number() }))
        .parse(JSON.parse('{"__proto__": {"n": 1}, "a": {"n": 2}}'));
      console.log(JSON.stringify([Object.keys(m), Object.getPrototypeOf(m) === Object.prototype]));`;
    const out = execFileSync("node", ["--input-type=module", "-e", script], { encoding: "utf8" });
    assert.deepEqual(JSON.parse(out), [["a"], true]);
  },
});

Deno.test("shape: values made from a default array or object are new each time, as zod's are", () => {
  const o = is.object({
    list: is.array(is.string()).default([]),
    map: is.record(is.string(), is.number()).default({}),
  });
  const a = o.parse({});
  a.list.push("x");
  a.map["k"] = 1;
  assert.deepEqual(o.parse({}), { list: [], map: {} });
});
