/**
 * scripts/import_rules.ts against a copy of src/ with one rule broken at a time: each planted
 * import must be reported by file, line, specifier and rule, and the tree as it is must pass.
 */
import { tempDir } from "../support/temp_dir.ts";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { appendFileSync, cpSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  checkImports,
  localAliases,
  syncSpawns,
  type Violation,
} from "../../scripts/import_rules.ts";
import { importsOf } from "../../scripts/import_graph.ts";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const src = join(repo, "src");
const script = join(repo, "scripts", "import_rules.ts");

/** A copy of src/ with `plant` applied; removed after `use`. */
function withPlanted(plant: (copy: string) => void, use: (copy: string) => void): void {
  const top = tempDir("import_rules_");
  try {
    const copy = join(top, "src");
    cpSync(src, copy, { recursive: true });
    plant(copy);
    use(copy);
  } finally {
    rmSync(top, { recursive: true, force: true });
  }
}

function planted(plant: (copy: string) => void): Violation[] {
  let found: Violation[] = [];
  withPlanted(plant, (copy) => found = checkImports(copy));
  return found;
}

/** Appends `line` to `src/<file>` in the copy. */
const add = (file: string, line: string) => (copy: string) =>
  appendFileSync(join(copy, file), `\n${line}\n`);

/**
 * Writes `src/<file>` importing nothing and then imports it from `from`: an import up a
 * layer that closes no cycle (one to an existing file often would, through its own imports).
 */
const addUp = (from: string, file: string, line: string) => (copy: string) => {
  writeFileSync(join(copy, file), "export type X = 1;\nexport const x = 1;\n");
  add(from, line)(copy);
};

Deno.test("the repository's src/ keeps every import rule", () => {
  assert.deepEqual(checkImports(src).map((v) => v.message), []);
});

Deno.test("an import running up a layer is named with its file, line, specifier and layers", () => {
  const found = planted(
    addUp("platform/bytes.ts", "jobs/planted.ts", 'import "../jobs/planted.ts";'),
  );
  assert.equal(found.length, 1, found.map((v) => v.message).join("\n"));
  const [v] = found;
  assert.equal(v!.rule, "up a layer");
  assert.equal(v!.file, "src/platform/bytes.ts");
  assert.equal(v!.specifier, "../jobs/planted.ts");
  assert.match(v!.message, /^src\/platform\/bytes\.ts:\d+: imports "\.\.\/jobs\/planted\.ts": /);
  assert.match(v!.message, /the jobs layer, above this file's platform layer/);
});

Deno.test("a type-only or dynamic import up a layer counts as much as a static one", () => {
  const typeOnly = planted(
    addUp("backends/bounded.ts", "jobs/planted.ts", 'import type { X } from "../jobs/planted.ts";'),
  );
  assert.deepEqual(typeOnly.map((v) => v.rule), ["up a layer"]);
  const dynamic = planted(
    addUp(
      "models/catalog.ts",
      "server/planted.ts",
      'export const later = () => import("../server/planted.ts");',
    ),
  );
  assert.deepEqual(dynamic.map((v) => [v.rule, v.specifier]), [[
    "up a layer",
    "../server/planted.ts",
  ]]);
});

for (const from of ["cli/stats.ts", "jobs/store.ts", "server/tools.ts", "review/diff.ts"]) {
  Deno.test(`${from.split("/")[0]}/ importing an engine's own folder is refused`, () => {
    const found = planted(add(from, 'import "../engines/native/facts.ts";'));
    assert.equal(found.length, 1, found.map((v) => v.message).join("\n"));
    assert.equal(found[0]!.rule, "engine folder");
    assert.equal(found[0]!.file, `src/${from}`);
    assert.match(
      found[0]!.message,
      /inside the native engine's own folder \(src\/engines\/native\/\)/,
    );
  });
}

Deno.test("one engine importing another's folder is refused; the engine table may", () => {
  const found = planted(add("engines/claude/facts.ts", 'import "../native/facts.ts";'));
  assert.deepEqual(found.map((v) => [v.rule, v.file]), [[
    "engine folder",
    "src/engines/claude/facts.ts",
  ]]);
  // registry.ts reaches every engine's folder already; a new engine folder is covered too.
  const third = planted((copy) => {
    mkdirSync(join(copy, "engines", "third"));
    writeFileSync(join(copy, "engines", "third", "run.ts"), 'import "../types.ts";\n');
    add("engines/registry.ts", 'import "./third/run.ts";')(copy);
    add("jobs/store.ts", 'import "../engines/third/run.ts";')(copy);
  });
  assert.deepEqual(third.map((v) => [v.rule, v.file]), [["engine folder", "src/jobs/store.ts"]]);
});

Deno.test("the front ends importing each other is refused both ways", () => {
  const found = planted((copy) => {
    add("cli/stats.ts", 'import "../server/tools.ts";')(copy);
    add("server/tools.ts", 'import "../cli/stats.ts";')(copy);
  });
  const rules = found.map((v) => `${v.rule} ${v.file}`).sort();
  // The pair is also a cycle, reported once more as such.
  assert.deepEqual(rules, [
    "cycle src/cli/stats.ts",
    "front ends src/cli/stats.ts",
    "front ends src/server/tools.ts",
  ]);
});

Deno.test("an import cycle inside one layer is reported with its path", () => {
  const found = planted((copy) => {
    writeFileSync(join(copy, "jobs", "planted_a.ts"), 'import "./planted_b.ts";\n');
    writeFileSync(join(copy, "jobs", "planted_b.ts"), 'import type { X } from "./planted_c.ts";\n');
    writeFileSync(
      join(copy, "jobs", "planted_c.ts"),
      'export type X = 1;\nimport "./planted_a.ts";\n',
    );
  });
  assert.deepEqual(found.map((v) => v.message), [
    "import cycle: src/jobs/planted_a.ts -> src/jobs/planted_b.ts -> src/jobs/planted_c.ts -> " +
    "src/jobs/planted_a.ts; break it by moving what the files share into a lower file",
  ]);
});

Deno.test("a folder no layer holds, and an import out of src/, are named", () => {
  const found = planted((copy) => {
    mkdirSync(join(copy, "extras"));
    writeFileSync(join(copy, "extras", "x.ts"), "export const x = 1;\n");
    add("jobs/store.ts", 'import "../../tests/support/scene.ts";')(copy);
  });
  assert.deepEqual(found.map((v) => [v.rule, v.file]).sort(), [
    ["no layer", "src/extras/x.ts"],
    ["outside", "src/jobs/store.ts"],
  ]);
});

Deno.test("imports in comments are not imports; multi-line ones are reported at the specifier", () => {
  const text = [
    "/**",
    ' * Loaded with import("../server/tools.ts") by nobody.',
    " */",
    '// import "../cli/jobs.ts";',
    "import {",
    "  a,",
    "  type B,",
    '} from "./a.ts";',
    'export * from "./b.ts";',
    'const url = "http://example.com"; import("./c.ts");',
  ].join("\n");
  assert.deepEqual(importsOf(text), [
    { specifier: "./a.ts", line: 8 },
    { specifier: "./b.ts", line: 9 },
    { specifier: "./c.ts", line: 10 },
  ]);
});

Deno.test("the script exits 1 naming the violation, and 0 silently on the clean tree", () => {
  const run = (dir: string) =>
    spawnSync(Deno.execPath(), ["run", "--allow-read", script, dir], { encoding: "utf8" });
  const clean = run(src);
  assert.equal(clean.status, 0, clean.stderr);
  assert.equal(clean.stderr, "");
  const plant = addUp("guard/workdirs.ts", "engines/planted.ts", 'import "../engines/planted.ts";');
  withPlanted(plant, (copy) => {
    const broken = run(copy);
    assert.equal(broken.status, 1);
    assert.match(
      broken.stderr,
      /src\/guard\/workdirs\.ts:\d+: imports "\.\.\/engines\/planted\.ts": the engines layer/,
    );
    assert.match(broken.stderr, /1 import rule\(s\) broken/);
  });
});

Deno.test("an own file reached through a deno.json import-map alias is refused", () => {
  const top = tempDir("import_rules_");
  try {
    const copy = join(top, "src");
    cpSync(src, copy, { recursive: true });
    // The alias hides an import up a layer (platform -> jobs) behind a bare name.
    writeFileSync(
      join(top, "deno.json"),
      JSON.stringify({ imports: { "#jobs/": "./src/jobs/", "zod": "npm:zod@4" } }),
    );
    appendFileSync(join(copy, "platform/bytes.ts"), '\nimport "#jobs/ledger.ts";\nimport "zod";\n');
    const found = checkImports(copy);
    assert.equal(found.length, 1, found.map((v) => v.message).join("\n"));
    assert.equal(found[0]!.rule, "import map");
    assert.equal(found[0]!.specifier, "#jobs/ledger.ts");
    assert.match(found[0]!.message, /src\/platform\/bytes\.ts:\d+: imports "#jobs\/ledger\.ts"/);
    assert.match(found[0]!.message, /sends "#jobs\/" to a local path/);
  } finally {
    rmSync(top, { recursive: true, force: true });
  }
});

Deno.test("an own file imported by an absolute path or file: URL is refused", () => {
  const found = planted(add("platform/bytes.ts", 'import "/work/src/jobs/ledger.ts";'));
  assert.deepEqual(found.map((v) => [v.rule, v.specifier]), [
    ["import map", "/work/src/jobs/ledger.ts"],
  ]);
});

Deno.test("the repository's deno.json maps no alias to a local path", () => {
  assert.deepEqual(localAliases(join(repo, "deno.json")), []);
});

Deno.test("a synchronous spawn from node:child_process in src/ is named, outside its one home", () => {
  // Deno gives such a child the parent's whole environment even with `env` (spawn_sync.ts).
  const found = planted((copy) => {
    add("platform/posix/session.ts", 'import { execFileSync as run } from "node:child_process";')(
      copy,
    );
    add(
      "engines/mount_helper.ts",
      'import * as cp from "node:child_process";\nexport const y = () => cp.spawnSync("true");',
    )(copy);
  }).filter((v) => v.rule === "sync spawn");
  assert.deepEqual(
    found.map((v) => [v.file, v.message.split(": uses ")[1]!.split(" ")[0]]),
    [
      ["src/platform/posix/session.ts", "execFileSync"],
      ["src/engines/mount_helper.ts", "spawnSync"],
    ].sort((a, b) => a[0]!.localeCompare(b[0]!)),
  );
  assert.match(found[0]!.message, /spawnSyncExact \(src\/platform\/posix\/spawn_sync\.ts\)/);
});

Deno.test("syncSpawns: named, renamed, type-only and namespace imports; other modules are not it", () => {
  assert.deepEqual(
    syncSpawns('import { spawn, spawnSync } from "node:child_process";').map((h) => h.name),
    ["spawnSync"],
  );
  assert.deepEqual(
    syncSpawns("import {\n  execSync as x,\n} from 'child_process';").map((h) => [h.name, h.line]),
    [["execSync", 1]],
  );
  assert.deepEqual(
    syncSpawns('import cp from "node:child_process";\n\ncp.execFileSync("a");').map((h) => h.line),
    [3],
  );
  assert.deepEqual(syncSpawns('import { spawn } from "node:child_process";'), []);
  assert.deepEqual(syncSpawns('import { spawnSync } from "./my_child_process.ts";'), []);
});
