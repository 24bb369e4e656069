/**
 * What a `verify` check runs, as files a delegate could change to make it pass without fixing
 * anything (issue 28, item 6: a delegate replaced `test.js` with `process.exit(0)`, or set
 * `"test": "exit 0"`, and its job read `completed (verified)`). This module holds the one
 * table of such files; check_plan.ts reads a check's commands against it, check_watch.ts
 * matches a job's changed files. docs/jobs.md ("What the check runs") lists the table in words.
 *
 * A file counts when
 * - the command names it as something it runs (`./check.sh`, `node test.js`, `sh sum.sh`,
 *   `pytest tests/x.py`, `jest src/`: a folder means all below it), or an npm, pnpm, yarn or
 *   bun script, or a deno task, the command runs names it so;
 * - a tool the command runs reads it (`package.json` "scripts" for `npm test`, `Makefile` for
 *   `make`), by the TOOLS table below;
 * - it is a test runner's configuration or a test by its name (TEST_DIRS, TEST_NAMES), which
 *   count for every check that runs anything of the project's: a script or a Makefile can
 *   reach a test runner the command does not name.
 * A check whose every command is a plain one (PLAIN: `cat out.txt`, `test -f a.txt`, `grep`)
 * runs nothing of the project's: the files it reads are the work, not the check.
 *
 * Dependencies are outside the table (`node_modules`, virtual environments, `go.mod`,
 * `Cargo.lock`): installing one is common and legitimate, and telling a patched dependency
 * from an installed one needs more than a file's name.
 */

/** One tool of the table. */
export interface ToolRow {
  /** Its name, for the documentation and the tests. */
  tool: string;
  /** Program names that run it (a path's base name too: `node_modules/.bin/jest`). */
  programs: readonly string[];
  /**
   * What its operands are: a script it runs (the first one), tests it runs (every path), or
   * nothing it runs (absent: targets, packages, files it only reads).
   */
  operands?: "script" | "tests";
  /** Files it reads, by base name at any depth. */
  files?: RegExp;
  /**
   * Files it reads in part: base name -> the JSON keys, or the TOML/INI section names (a
   * section and those below it: `tool.pytest` holds `[tool.pytest.ini_options]`), that count.
   */
  parts?: Readonly<Record<string, readonly string[]>>;
  /** A test runner: its files count for every check that runs the project's code. */
  always?: boolean;
}

const SCRIPT = "script" as const;
const TESTS = "tests" as const;

export const TOOLS: readonly ToolRow[] = [
  {
    tool: "interpreters",
    programs: [
      "node",
      "nodejs",
      "python",
      "python2",
      "python3",
      "pypy",
      "pypy3",
      "ruby",
      "perl",
      "php",
      "lua",
      "Rscript",
      "tsx",
      "ts-node",
      "sh",
      "bash",
      "dash",
      "zsh",
      "ksh",
      "fish",
    ],
    operands: SCRIPT,
  },
  {
    tool: "npm, pnpm, yarn, bun",
    programs: ["npm", "pnpm", "yarn", "bun"],
    files: /^(\.npmrc|\.yarnrc(\.yml)?|\.pnpmfile\.cjs|bunfig\.toml)$/,
    parts: { "package.json": ["scripts"] },
  },
  {
    tool: "deno",
    programs: ["deno"],
    parts: {
      "deno.json": ["tasks", "test", "imports", "importMap", "scopes", "compilerOptions", "lint"],
      "deno.jsonc": ["tasks", "test", "imports", "importMap", "scopes", "compilerOptions", "lint"],
    },
  },
  { tool: "make", programs: ["make", "gmake"], files: /^(GNUmakefile|[Mm]akefile|.+\.mk)$/ },
  { tool: "just", programs: ["just"], files: /^\.?[Jj]ustfile$/ },
  { tool: "rake", programs: ["rake"], files: /^(Rakefile|.+\.rake)$/ },
  { tool: "cargo", programs: ["cargo"], files: /^(Cargo\.toml|build\.rs)$/ },
  { tool: "maven", programs: ["mvn", "mvnw"], files: /^pom\.xml$/ },
  {
    tool: "gradle",
    programs: ["gradle", "gradlew"],
    files: /^(build|settings)\.gradle(\.kts)?$/,
  },
  {
    tool: "pytest",
    programs: ["pytest", "py.test"],
    operands: TESTS,
    files: /^(conftest\.py|pytest\.ini|\.coveragerc)$/,
    parts: {
      "pyproject.toml": ["tool.pytest", "tool.coverage"],
      "setup.cfg": ["tool:pytest", "coverage:run", "coverage:report"],
    },
    always: true,
  },
  { tool: "unittest", programs: ["unittest"], operands: TESTS, always: true },
  {
    tool: "tox, nox, hatch",
    programs: ["tox", "nox", "hatch"],
    files: /^(tox\.ini|noxfile\.py|hatch\.toml)$/,
    parts: { "pyproject.toml": ["tool.tox", "tool.hatch.envs", "tool.poe"] },
    always: true,
  },
  {
    tool: "jest",
    programs: ["jest"],
    operands: TESTS,
    files: /^jest\.(config|setup)(\.[\w-]+)?\.([cm]?[jt]s|json)$/,
    parts: { "package.json": ["jest"] },
    always: true,
  },
  {
    tool: "vitest",
    programs: ["vitest"],
    operands: TESTS,
    files: /^(vitest\.(config|workspace|setup)|vite\.config)(\.[\w-]+)?\.[cm]?[jt]s$/,
    always: true,
  },
  {
    tool: "mocha",
    programs: ["mocha", "_mocha"],
    operands: TESTS,
    files: /^\.mocharc(\.(c?js|mjs|jsonc?|ya?ml))?$/,
    parts: { "package.json": ["mocha"] },
    always: true,
  },
  {
    tool: "ava",
    programs: ["ava"],
    operands: TESTS,
    files: /^ava\.config\.[cm]?js$/,
    parts: { "package.json": ["ava"] },
    always: true,
  },
  {
    tool: "c8, nyc",
    programs: ["c8", "nyc"],
    files: /^\.(c8rc|nycrc)(\.(json|ya?ml))?$/,
    parts: { "package.json": ["c8", "nyc"] },
    always: true,
  },
  {
    tool: "karma, playwright, cypress",
    programs: ["karma", "playwright", "cypress"],
    operands: TESTS,
    files: /^(karma\.conf|playwright\.config|cypress\.config)\.[cm]?[jt]s$/,
    always: true,
  },
  {
    tool: "phpunit, rspec",
    programs: ["phpunit", "rspec"],
    operands: TESTS,
    files: /^(phpunit\.xml(\.dist)?|\.rspec)$/,
    always: true,
  },
  {
    tool: "eslint",
    programs: ["eslint"],
    files: /^(eslint\.config\.[cm]?[jt]s|\.eslintrc(\.[\w]+)?)$/,
    parts: { "package.json": ["eslintConfig"] },
  },
  { tool: "tsc", programs: ["tsc", "vue-tsc"], files: /^tsconfig(\.[\w-]+)?\.json$/ },
  {
    tool: "ruff, mypy, flake8, pylint",
    programs: ["ruff", "mypy", "flake8", "pylint"],
    files: /^(\.?ruff\.toml|\.?mypy\.ini|\.flake8|\.?pylintrc)$/,
    parts: {
      "pyproject.toml": ["tool.ruff", "tool.mypy", "tool.pylint"],
      "setup.cfg": ["mypy", "flake8"],
    },
  },
];

/** Programs that run nothing of the project's: what they read is the work, not the check. */
export const PLAIN = new Set([
  ":",
  "[",
  "[[",
  "cat",
  "cd",
  "cmp",
  "diff",
  "echo",
  "egrep",
  "exit",
  "export",
  "false",
  "fgrep",
  "file",
  "grep",
  "head",
  "jq",
  "ls",
  "md5sum",
  "printf",
  "pwd",
  "rg",
  "set",
  "sha1sum",
  "sha256sum",
  "sleep",
  "sort",
  "stat",
  "tail",
  "tee",
  "test",
  "tr",
  "true",
  "uniq",
  "wc",
]);

/** Folders whose files are tests, by name. */
export const TEST_DIRS = new Set([
  "test",
  "tests",
  "__tests__",
  "__test__",
  "spec",
  "specs",
  "testdata",
  "__snapshots__",
  "__fixtures__",
  "__mocks__",
]);

/** Files that are tests by their name: `test.js`, `a_test.go`, `a.test.ts`, `test_a.py`... */
export const TEST_NAMES = new RegExp(
  [
    /^tests?(\.[\w.-]+)?$/,
    /^test_.+\.py$/,
    /^conftest\.py$/,
    /.[._-](test|spec)s?\.\w+$/,
    /.(Test|Tests|Spec|IT)\.(java|kt|scala|groovy|cs)$/,
  ].map((r) => r.source).join("|"),
);

/**
 * Folders whose files are never taken for tests or configuration by their name: dependencies,
 * caches and build output (a test run writes `tests/__pycache__/`). A file the command names
 * counts there too.
 */
export const NOT_THE_CHECK = new Set([
  ".git",
  "node_modules",
  "vendor",
  ".venv",
  "venv",
  "site-packages",
  "__pycache__",
  ".pytest_cache",
  ".mypy_cache",
  ".ruff_cache",
  ".tox",
  ".nox",
  ".cache",
  ".nyc_output",
  "coverage",
  "htmlcov",
  "dist",
  "build",
  "target",
]);

/** The rows of `program` (a base name). */
export function toolsOf(program: string): ToolRow[] {
  return TOOLS.filter((t) => t.programs.includes(program));
}

/** What a changed file is to a check, from its path below a root of the job. */
export type FileRole =
  | { kind: "named" }
  | { kind: "whole" }
  | { kind: "parts"; parts: readonly string[] };

/**
 * What a file is to a check that uses `tools` (and every `always` row), from its path `rel`
 * relative to its root (`/`-separated): undefined when nothing of the check. Named files are
 * the plan's concern (check_plan.ts), not this. Made once per check: a turn that installs
 * dependencies reports a hundred thousand files.
 */
export function fileRoles(tools: ReadonlySet<ToolRow>): (rel: string) => FileRole | undefined {
  const rows = TOOLS.filter((t) => t.always || tools.has(t));
  const sources = rows.flatMap((t) => (t.files ? [`(?:${t.files.source})`] : []));
  const files = sources.length > 0 ? new RegExp(sources.join("|")) : undefined;
  const parts = new Map<string, string[]>();
  for (const row of rows) {
    for (const [name, keys] of Object.entries(row.parts ?? {})) {
      parts.set(name, [...new Set([...(parts.get(name) ?? []), ...keys])]);
    }
  }
  return (rel) => {
    if (NOT_THE_CHECK_DIR.test(rel)) return undefined;
    const base = rel.slice(rel.lastIndexOf("/") + 1);
    if (files?.test(base)) return { kind: "whole" };
    if (TEST_DIR.test(rel) || TEST_NAMES.test(base)) return { kind: "whole" };
    const keys = parts.get(base);
    return keys ? { kind: "parts", parts: keys } : undefined;
  };
}

/** A folder of `names` anywhere in a relative path, as one expression (a path at a time). */
const folderIn = (names: ReadonlySet<string>) =>
  new RegExp(`(^|/)(${[...names].map((n) => n.replace(/[.]/g, "\\.")).join("|")})/`);
const NOT_THE_CHECK_DIR = folderIn(NOT_THE_CHECK);
const TEST_DIR = folderIn(TEST_DIRS);
