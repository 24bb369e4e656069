/**
 * What a `verify` check runs (issue 28, item 6): the words of its commands, the files they
 * name, the tools they run and the files those read, whole or in part. The job's rounds and
 * both engines are tested in tests/jobs/rounds_test.ts and tests/in_process/verify_test.ts.
 */
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileRoles, type ToolRow, toolsOf } from "../../../src/jobs/checks/check_inputs.ts";
import { partsOf, readManifest } from "../../../src/jobs/checks/check_parts.ts";
import { planCheck } from "../../../src/jobs/checks/check_plan.ts";
import { simpleCommands } from "../../../src/jobs/checks/check_words.ts";
import { tempDir } from "../../support/harness.ts";

Deno.test("simpleCommands: operators, quotes, redirections, substitutions", () => {
  assert.deepEqual(simpleCommands(`test "$(sh sum.sh)" = 3`), [
    ["test", "$", "=", "3"],
    ["sh", "sum.sh"],
  ]);
  assert.deepEqual(simpleCommands("npm test 2>&1 | tee log.txt && echo 'a b' # done"), [
    ["npm", "test"],
    ["tee", "log.txt"],
    ["echo", "a b"],
  ]);
  assert.deepEqual(simpleCommands("if node test.js; then echo ok; fi > out"), [
    ["node", "test.js"],
    ["echo", "ok"],
  ]);
  assert.deepEqual(simpleCommands('node `echo t.js` "x\\"y"'), [
    ["node", "$", 'x"y'],
    ["echo", "t.js"],
  ]);
});

/** The plan of `commands` in a folder holding `files`. */
async function plan(commands: string[], files: Record<string, string> = {}) {
  const dir = tempDir("od-check-");
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, ".."), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  const p = await planCheck(commands, dir);
  return { named: [...p.named].sort(), tools: [...p.tools].map((t) => t.tool), p };
}

Deno.test("planCheck: the files a command runs, through scripts and wrappers", async () => {
  assert.deepEqual((await plan(["node test.js"])).named, ["test.js"]);
  assert.deepEqual((await plan(["./check.sh --fast"])).named, ["check.sh"]);
  assert.deepEqual((await plan([`test "$(sh sum.sh)" = 3`])).named, ["sum.sh"]);
  assert.deepEqual((await plan(["bash -ec 'cd x && ./run.sh'"])).named, ["run.sh"]);
  assert.deepEqual((await plan(["CI=1 timeout 60 env -u X node -r ./setup.js t.js"])).named, [
    "setup.js",
    "t.js",
  ]);
  const npm = await plan(["npm test"], {
    "package.json": JSON.stringify({
      scripts: { pretest: "tsc", test: "c8 mocha && node e2e.js" },
    }),
  });
  assert.deepEqual(npm.named, ["e2e.js"]);
  assert.deepEqual(npm.tools.sort(), [
    "c8, nyc",
    "interpreters",
    "mocha",
    "npm, pnpm, yarn, bun",
    "tsc",
  ]);
  const deno = await plan(["deno task check"], {
    "deno.jsonc": '{ // tasks\n "tasks": { "check": "deno run -A scripts/check.ts" } }',
  });
  assert.deepEqual(deno.named, ["scripts/check.ts"]);
  const pytest = await plan(["python3 -m pytest -k slow tests/test_a.py tests/"]);
  assert.deepEqual(pytest.named, ["tests/test_a.py"], "a folder is not named, a file is");
  assert.ok(pytest.tools.includes("pytest"));
  assert.ok((await plan(["uv run --frozen pytest"])).tools.includes("pytest"));
  assert.ok((await plan(["npx -y jest src/"])).tools.includes("jest"));
});

Deno.test("planCheck: a check of plain programs runs nothing of the project's", async () => {
  for (const command of ["cat fixed.txt", "test -f a.txt && grep -q ok out.txt", "exit 0"]) {
    const { p } = await plan([command]);
    assert.equal(p.runsProject, false, command);
    assert.deepEqual([...p.named], [], command);
  }
  assert.equal((await plan(["cat x", "make test"])).p.runsProject, true);
});

const tools = (...names: string[]) => new Set<ToolRow>(names.flatMap(toolsOf));
const roleOf = (rel: string, used: ReadonlySet<ToolRow>) => fileRoles(used)(rel);

Deno.test("fileRoles: tests by name, runner configuration, and the tools' own files", () => {
  const none = tools();
  for (const test of ["tests/a.py", "test/x.js", "src/a.test.ts", "a_test.go", "test_a.py"]) {
    assert.deepEqual(roleOf(test, none), { kind: "whole" }, test);
  }
  for (const config of ["conftest.py", "sub/conftest.py", "jest.config.ts", ".mocharc.yml"]) {
    assert.deepEqual(roleOf(config, none), { kind: "whole" }, config);
  }
  for (const code of ["src/a.ts", "latest.js", "contest.py", "README.md"]) {
    assert.equal(roleOf(code, none), undefined, code);
  }
  // Caches, dependencies and build output are not the check by their names.
  assert.equal(roleOf("tests/__pycache__/test_a.cpython-312.pyc", none), undefined);
  assert.equal(roleOf("node_modules/x/test/a.js", none), undefined);
  // A tool's files count when the check runs it.
  assert.equal(roleOf("Makefile", none), undefined);
  assert.deepEqual(roleOf("Makefile", tools("make")), { kind: "whole" });
  assert.deepEqual(roleOf("package.json", tools("npm")), {
    kind: "parts",
    parts: ["scripts", "jest", "mocha", "ava", "c8", "nyc"],
  });
});

Deno.test("partsOf: JSON keys, TOML and INI sections and what is above them", () => {
  const before = partsOf("package.json", '{"scripts":{"test":"node t.js"},"dependencies":{}}', [
    "scripts",
  ]);
  const deps = partsOf(
    "package.json",
    '{"dependencies":{"x":"1"},"scripts":{"test":"node t.js"}}',
    [
      "scripts",
    ],
  );
  assert.equal(before?.get("scripts"), deps?.get("scripts"), "a new dependency is no change");
  assert.equal(partsOf("package.json", "{ not json", ["scripts"]), undefined);
  const toml = (text: string) =>
    partsOf("pyproject.toml", text, ["tool.pytest"])!.get("tool.pytest");
  const base = '[project]\nname = "x"\n\n[tool.pytest.ini_options]\naddopts = "-q"\n';
  assert.equal(toml(base), toml(base.replace('"x"', '"y"')), "[project] is not the check");
  assert.notEqual(toml(base), toml(base.replace("-q", "-k nothing")));
  assert.notEqual(toml(base), toml(`${base}[tool]\npytest.ini_options.addopts = "-x"\n`));
  assert.notEqual(
    toml(base),
    toml(`tool.pytest.ini_options.testpaths = ["none"]\n${base}`),
    "a dotted key above the section reaches it",
  );
});

Deno.test("readManifest: a link out of the folder or a FIFO is not read", async () => {
  const dir = tempDir("od-check-");
  const outside = join(tempDir("od-check-out-"), "secret.json");
  writeFileSync(outside, "{}");
  Deno.symlinkSync(outside, join(dir, "package.json"));
  assert.equal(await readManifest(dir, "package.json"), undefined);
  assert.equal(await readManifest(dir, "deno.json"), "absent");
  const fifo = new Deno.Command("mkfifo", { args: [join(dir, "pyproject.toml")] }).outputSync();
  if (fifo.success) assert.equal(await readManifest(dir, "pyproject.toml"), undefined);
});

Deno.test("planCheck and partsOf: a hostile manifest costs little time", async () => {
  const started = performance.now();
  const fanOut = Array.from({ length: 5_000 }, () => "npm run t").join(" && ");
  const { p } = await plan(["npm test"], {
    "package.json": JSON.stringify({ scripts: { test: fanOut, t: fanOut } }),
  });
  assert.equal(p.runsProject, true);
  const spaces = " ".repeat(500_000);
  partsOf("pyproject.toml", `[${spaces}x\n[tool.pytest${spaces}]\n`, ["tool.pytest"]);
  partsOf("deno.jsonc", '"/*'.repeat(200_000), ["tasks"]);
  partsOf("deno.jsonc", "/*".repeat(300_000), ["tasks"]);
  const ms = performance.now() - started;
  assert.ok(ms < 3_000, `${ms.toFixed(0)} ms`);
});
