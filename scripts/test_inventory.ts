/**
 * What the test suite holds, counted from the source: per test file, its `Deno.test(` calls,
 * `t.step(` calls and assertion calls (`assert(` and `assert.<name>(`, as node:assert/strict is
 * used everywhere). With `--base <rev>` it compares the working tree against that git revision:
 * the totals and the changed files before and after, and where each test name went (a test is
 * followed by its name, so a test that moved to another file is listed as moved, not as lost).
 *
 * The counts are static: a `Deno.test(` inside a loop counts once, as it does in the source.
 * Tests that run twice in `deno task test` (once per pass) are counted as runs too: at a base
 * revision whose scripts/test.ts has no NODE_SMOKE list, the Node pass ran all of tests/e2e/
 * and tests/cli/.
 *
 * Run: deno run -A scripts/test_inventory.ts [--base <rev>] [--files]
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { NODE_SMOKE, NODE_SMOKE_ONLY } from "./test.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

export interface FileCounts {
  tests: number;
  steps: number;
  asserts: number;
  /** The test names, as written (a template literal keeps its `${...}`). */
  names: string[];
}

/** The counts of one test file's text. */
export function countFile(text: string): FileCounts {
  // Comments can quote calls; they are not tests.
  const code = text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`])\/\/.*$/gm, "$1");
  const names: string[] = [];
  const start = /Deno\.test\(\s*(?:\{\s*name:\s*)?(["'`])((?:\\.|(?!\1)[^\\])*)\1/g;
  for (const m of code.matchAll(start)) names.push(m[2]!);
  const tests = (code.match(/\bDeno\.test\(/g) ?? []).length;
  // Tests named by a call or a variable still count, under a placeholder name.
  while (names.length < tests) names.push(`(unnamed ${names.length + 1})`);
  return {
    tests,
    steps: (code.match(/\bt\.step\(/g) ?? []).length,
    asserts: (code.match(/\bassert(?:\.[a-zA-Z]+)?\(/g) ?? []).length,
    names,
  };
}

function isTestFile(path: string): boolean {
  return /_test\.ts$/.test(path);
}

/** The test files under tests/ in the working tree. */
function workingTree(): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (isTestFile(entry.name)) out.set(relative(ROOT, path), readFileSync(path, "utf8"));
    }
  };
  walk(join(ROOT, "tests"));
  return out;
}

const git = (args: string[]) =>
  execFileSync("git", args, { cwd: ROOT, encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });

interface Smoke {
  files: string[];
  /** The smoke files of which only the tests these match run (NODE_SMOKE_ONLY). */
  only: Record<string, RegExp>;
}

/** The Node pass's smoke list at a git revision, undefined when it had none. */
function smokeAtRevision(rev: string): Smoke | undefined {
  const text = git(["show", `${rev}:scripts/test.ts`]);
  const list = /NODE_SMOKE = \[([^\]]*)\]/.exec(text)?.[1];
  if (list === undefined) return undefined;
  const only: Record<string, RegExp> = {};
  const block = /NODE_SMOKE_ONLY[^=]*= \{([\s\S]*?)\n\};/.exec(text)?.[1] ?? "";
  for (const m of block.matchAll(/"([^"]+)":\s*\/(.+)\/,/g)) only[m[1]!] = new RegExp(m[2]!);
  return { files: [...list.matchAll(/"([^"]+)"/g)].map((m) => m[1]!), only };
}

/** The test files under tests/ at a git revision. */
function atRevision(rev: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const path of git(["ls-tree", "-r", "--name-only", rev, "tests/"]).split("\n")) {
    if (isTestFile(path)) out.set(path, git(["show", `${rev}:${path}`]));
  }
  return out;
}

interface Totals {
  files: number;
  tests: number;
  steps: number;
  asserts: number;
}

function totals(counts: Map<string, FileCounts>): Totals {
  const t: Totals = { files: counts.size, tests: 0, steps: 0, asserts: 0 };
  for (const c of counts.values()) {
    t.tests += c.tests;
    t.steps += c.steps;
    t.asserts += c.asserts;
  }
  return t;
}

/** Totals per top-level folder of tests/ (tests/e2e, tests/cli, ...). */
function byFolder(counts: Map<string, FileCounts>): Map<string, Totals> {
  const out = new Map<string, Totals>();
  for (const [path, c] of counts) {
    const folder = path.split("/").slice(0, 2).join("/");
    const t = out.get(folder) ?? { files: 0, tests: 0, steps: 0, asserts: 0 };
    t.files++;
    t.tests += c.tests;
    t.steps += c.steps;
    t.asserts += c.asserts;
    out.set(folder, t);
  }
  return out;
}

const line = (label: string, t: Totals) =>
  `${label.padEnd(28)} ${String(t.files).padStart(5)} files ${String(t.tests).padStart(5)} ` +
  `tests ${String(t.steps).padStart(4)} steps ${String(t.asserts).padStart(6)} asserts`;

function countAll(files: Map<string, string>): Map<string, FileCounts> {
  return new Map([...files].map(([path, text]) => [path, countFile(text)]));
}

/** The tests the Node pass runs: those in its smoke list, or (before it had one) the e2e tiers. */
function nodePassTests(
  counts: Map<string, FileCounts>,
  smoke: readonly string[] | undefined,
  only: Record<string, RegExp> = {},
) {
  let tests = 0;
  for (const [path, c] of counts) {
    const runs = smoke
      ? smoke.includes(path)
      : path.startsWith("tests/e2e/") || path.startsWith("tests/cli/");
    if (!runs) continue;
    const filter = only[path];
    tests += filter ? c.names.filter((n) => filter.test(n)).length : c.tests;
  }
  return tests;
}

const runsLine = (
  label: string,
  counts: Map<string, FileCounts>,
  smoke?: readonly string[],
  only?: Record<string, RegExp>,
) => {
  const deno = totals(counts).tests;
  const node = nodePassTests(counts, smoke, only);
  return `${label.padEnd(28)} ${deno} on Deno + ${node} on Node = ${deno + node} test runs`;
};

function report(
  head: Map<string, FileCounts>,
  base?: Map<string, FileCounts>,
  all = false,
  baseSmoke?: Smoke,
) {
  const out: string[] = [];
  if (base) out.push(line("before (base)", totals(base)));
  out.push(line(base ? "after (working tree)" : "working tree", totals(head)));
  out.push("", "deno task test, static count (a test in a loop counts once)");
  if (base) out.push(runsLine("  before (base)", base, baseSmoke?.files, baseSmoke?.only));
  out.push(
    runsLine(base ? "  after (working tree)" : "  working tree", head, NODE_SMOKE, NODE_SMOKE_ONLY),
  );
  const folders = new Set([...byFolder(head).keys(), ...(base ? byFolder(base).keys() : [])]);
  const zero = { files: 0, tests: 0, steps: 0, asserts: 0 };
  out.push("", "per folder" + (base ? " (before -> after)" : ""));
  for (const folder of [...folders].sort()) {
    const after = byFolder(head).get(folder) ?? zero;
    if (!base) {
      out.push(line(`  ${folder}`, after));
      continue;
    }
    const before = byFolder(base).get(folder) ?? zero;
    out.push(
      `  ${folder.padEnd(26)} tests ${before.tests} -> ${after.tests}, ` +
        `asserts ${before.asserts} -> ${after.asserts}`,
    );
  }
  if (all || base) {
    out.push("", base ? "files whose counts changed (tests, asserts)" : "per file");
    for (const path of [...new Set([...head.keys(), ...(base?.keys() ?? [])])].sort()) {
      const a = head.get(path);
      const b = base?.get(path);
      if (base && a?.tests === b?.tests && a?.asserts === b?.asserts) continue;
      out.push(
        base
          ? `  ${path}: ${b ? `${b.tests}, ${b.asserts}` : "-"} -> ${
            a ? `${a.tests}, ${a.asserts}` : "-"
          }`
          : `  ${path}: ${a!.tests} tests, ${a!.asserts} asserts`,
      );
    }
  }
  if (base) out.push("", ...moves(base, head));
  return out.join("\n");
}

/** Where each test name of `base` is now: moved, renamed away (gone), or new. */
function moves(base: Map<string, FileCounts>, head: Map<string, FileCounts>): string[] {
  const where = (counts: Map<string, FileCounts>) => {
    const out = new Map<string, string[]>();
    for (const [path, c] of counts) {
      for (const name of c.names) out.set(name, [...(out.get(name) ?? []), path]);
    }
    return out;
  };
  const before = where(base);
  const after = where(head);
  const moved: string[] = [];
  const gone: string[] = [];
  const added: string[] = [];
  for (const [name, paths] of before) {
    const now = after.get(name);
    if (!now) gone.push(`  ${paths.join(", ")}: ${name}`);
    else if (now.join() !== paths.join()) {
      moved.push(`  ${paths.join(", ")} -> ${now.join(", ")}: ${name}`);
    }
  }
  for (const [name, paths] of after) {
    if (!before.has(name)) added.push(`  ${paths.join(", ")}: ${name}`);
  }
  return [
    `tests moved to another file (${moved.length}):`,
    ...moved.sort(),
    "",
    `test names no longer found (${gone.length}; renamed, merged into a table, or removed):`,
    ...gone.sort(),
    "",
    `test names that are new (${added.length}):`,
    ...added.sort(),
  ];
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: { base: { type: "string" }, files: { type: "boolean" } },
  });
  const head = countAll(workingTree());
  const base = values.base ? countAll(atRevision(values.base)) : undefined;
  const baseSmoke = values.base ? smokeAtRevision(values.base) : undefined;
  console.log(report(head, base, values.files === true, baseSmoke));
}
