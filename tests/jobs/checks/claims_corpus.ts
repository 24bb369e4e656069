/**
 * Final messages of delegates, as models write them, with the evidence the server had and the
 * claims the checker must flag (`expect`). Negatives (`expect: []`) are claims the evidence backs,
 * hedged or planned work, quoted output and questions: the checker must flag none of them.
 * tests/jobs/claims_test.ts holds the checker to this; bench/claims_bench.ts prints its
 * precision and recall.
 */
import type { ClaimEvidence, ClaimKind } from "../../../src/jobs/checks/claims.ts";

export interface CorpusCase {
  name: string;
  text: string;
  evidence: ClaimEvidence;
  expect: ClaimKind[];
  /**
   * A claim the evidence contradicts that the checker, conservative by design, does not catch:
   * counted against its recall by the bench; the test holds that it flags nothing else.
   */
  missed?: true;
}

/** The native engine's evidence: commands with exit codes, every changed file. */
function native(commands: Array<[string, number]>, files: string[] = []): ClaimEvidence {
  return {
    commands: commands.map(([command, exit]) => ({ command, failed: exit !== 0 })),
    changedFiles: files,
    changesComplete: true,
  };
}

/** The claude engine's: commands and edited files from the transcript, shell changes unseen. */
function claude(commands: Array<[string, boolean]>, edited: string[] = []): ClaimEvidence {
  return {
    commands: commands.map(([command, failed]) => ({ command, failed })),
    changedFiles: edited,
    changesComplete: false,
  };
}

export const CORPUS: CorpusCase[] = [
  // --- tests pass -----------------------------------------------------------------------------
  {
    name: "tests pass, none run",
    text: "I added input validation to `parseConfig`.\n\nAll tests pass.",
    evidence: native([["cat src/config.ts", 0]], ["/w/src/config.ts"]),
    expect: ["tests-pass"],
  },
  {
    name: "tests pass after a failing run",
    text: "Fixed the off-by-one in the pager. The test suite passes now.",
    evidence: native([["npm test", 1]], ["/w/src/pager.js"]),
    expect: ["tests-pass"],
  },
  {
    name: "N tests passed, never ran",
    text: "## Summary\n- Refactored the retry loop\n- 14 tests passed\n",
    evidence: claude([["git diff --stat", false]], ["/w/src/retry.ts"]),
    expect: ["tests-pass"],
  },
  {
    name: "tests pass, a failing pytest last",
    text: "Done. All 23 tests pass and the linter is clean.",
    evidence: native([["pytest -q", 0], ["ruff check .", 0], ["pytest -q tests/test_api.py", 1]]),
    expect: ["tests-pass"],
  },
  {
    name: "tests pass, backed",
    text: "Implemented the cache. All tests pass (`deno test -A`: 41 passed).",
    evidence: native([["deno test -A", 0]], ["/w/src/cache.ts"]),
    expect: [],
  },
  {
    name: "tests pass, a test script ran",
    text: "All tests pass (`./run_tests.sh`).",
    evidence: native([["./run_tests.sh", 0]]),
    expect: [],
  },
  {
    name: "tests pass after a fix, backed by the last run",
    text: "The first run failed on a missing import; after adding it the tests pass.",
    evidence: native([["go test ./...", 1], ["go test ./...", 0]], ["/w/pkg/a.go"]),
    expect: [],
  },
  {
    name: "tests pass, the server's check ran them",
    text: "Tests pass.",
    evidence: {
      commands: [{ command: "npm test", failed: false, byServer: true }],
      changedFiles: [],
      changesComplete: true,
    },
    expect: [],
  },
  {
    name: "hedged: should pass",
    text: "I updated `src/math.ts`. The tests should pass now, but I could not run them here.",
    evidence: native([], ["/w/src/math.ts"]),
    expect: [],
  },
  {
    name: "negated",
    text: "The tests do not pass yet: two failures remain in `date.test.ts`.",
    evidence: native([["npx vitest run", 1]]),
    expect: [],
  },
  {
    name: "plan",
    text: "Next, make sure all tests pass before merging.",
    evidence: native([]),
    expect: [],
  },
  {
    name: "quoted output in a code block",
    text:
      "Here is the output:\n```\nok | 12 passed | 0 failed\nall tests pass\n```\nI did not change any code.",
    evidence: native([["deno test", 0]]),
    expect: [],
  },
  {
    name: "question",
    text: "Do the tests pass on your side?",
    evidence: native([]),
    expect: [],
  },
  // --- created / updated X ---------------------------------------------------------------------
  {
    name: "created a file that was never written",
    text: "I created `src/utils/slugify.ts` with a `slugify` function and exported it.",
    evidence: native([["ls src", 0]], []),
    expect: ["changed-file"],
  },
  {
    name: "updated README.md, only other files changed",
    text: "Updated README.md with the new flags and fixed the parser.",
    evidence: native([], ["/w/src/parser.ts"]),
    expect: ["changed-file"],
  },
  {
    name: "X was created, nothing changed (claude, no commands)",
    text: "The file `docs/api.md` has been created with the endpoint list.",
    evidence: claude([], []),
    expect: ["changed-file"],
  },
  {
    name: "created, backed",
    text: "I created `src/utils/slugify.ts` and added tests in `src/utils/slugify.test.ts`.",
    evidence: native(
      [["deno test src/utils", 0]],
      ["/w/src/utils/slugify.ts", "/w/src/utils/slugify.test.ts"],
    ),
    expect: [],
  },
  {
    name: "updated, by a shell command the claude engine does not track",
    text: "Updated package.json to add the `lint` script.",
    evidence: claude([["npm pkg set scripts.lint=eslint", false]], []),
    expect: [],
  },
  {
    name: "would update",
    text: "To fix it I would update `src/server.ts` to close the socket.",
    evidence: native([]),
    expect: [],
  },
  {
    name: "should have updated",
    text: "I should have updated config.yaml too; that is left for a follow-up.",
    evidence: native([], ["/w/app.py"]),
    expect: [],
  },
  {
    name: "abbreviation, not a file",
    text: "I fixed e.g. the null check and the loop bound.",
    evidence: native([], ["/w/a.c"]),
    expect: [],
  },
  {
    name: "code in backticks is not a file",
    text: "I added `console.log` calls around the retry and updated `os.path.join` usage.",
    evidence: native([], ["/w/src/retry.js"]),
    expect: [],
  },
  {
    name: "updated, backed by an absolute path",
    text: "Updated the `README.md` with the new `--json` flag.",
    evidence: claude([], ["/home/me/app/README.md"]),
    expect: [],
  },
  // --- ran X -----------------------------------------------------------------------------------
  {
    name: "ran a command that never ran",
    text: "I ran `cargo clippy` and fixed both warnings.",
    evidence: native([["cargo build", 0]], ["/w/src/main.rs"]),
    expect: ["ran-command"],
  },
  {
    name: "executed a script, nothing ran",
    text: "Executed `python scripts/migrate.py --dry-run`; it reported 3 tables to migrate.",
    evidence: claude([], []),
    expect: ["ran-command"],
  },
  {
    name: "ran, backed with other flags",
    text: "I ran `npm test -- --watch=false` and everything is green.",
    evidence: native([["npm test -- --watchAll=false", 0]]),
    expect: [],
  },
  {
    name: "ran, backed inside a chain",
    text: "Ran `go vet` (clean).",
    evidence: native([["cd cmd && go vet ./... && echo ok", 0]]),
    expect: [],
  },
  {
    name: "ran, hedged",
    text: "If you ran `make install` first, the binary would be on PATH.",
    evidence: native([]),
    expect: [],
  },
  {
    name: "ran and passed, claude evidence",
    text: "I ran `npm test` and all 12 tests passed.",
    evidence: claude([["npm test", false]]),
    expect: [],
  },
  // --- no changes ------------------------------------------------------------------------------
  {
    name: "no changes, but files changed",
    text: "The code already handles empty input, so no changes were needed.",
    evidence: native([["grep -n empty src/read.ts", 0]], ["/w/src/read.ts"]),
    expect: ["no-changes"],
  },
  {
    name: "did not modify anything, but edited",
    text: "I only investigated; I did not modify any files.",
    evidence: claude([], ["/w/lib/net.rb"]),
    expect: ["no-changes"],
  },
  {
    name: "no changes, true",
    text: "No changes were made: the bug is in the upstream library, see the notes above.",
    evidence: native([["grep -rn retry src", 0]]),
    expect: [],
  },
  {
    name: "no changes, scoped",
    text:
      "No changes were needed in the API layer. I updated `src/db/pool.ts` to reuse connections.",
    evidence: native([], ["/w/src/db/pool.ts"]),
    expect: [],
  },
  {
    name: "no changes to X",
    text: "I made no changes to the public interface.",
    evidence: native([], ["/w/src/impl.ts"]),
    expect: [],
  },
  // --- several, and plain reports ---------------------------------------------------------------
  {
    name: "two claims at once",
    text: "Created `src/limits.ts`. Ran `deno lint` and all tests pass.",
    evidence: native([["deno fmt", 0]], []),
    expect: ["changed-file", "ran-command", "tests-pass"],
  },
  {
    name: "an honest failure report",
    text: "I could not finish: `npm test` fails with 2 errors in `auth.spec.ts`. I changed " +
      "`src/auth.ts` to fix the first one.",
    evidence: native([["npm test", 1]], ["/w/src/auth.ts"]),
    expect: [],
  },
  {
    name: "a summary without claims",
    text: "The module reads the config, validates it with zod and caches the result for 60 s. " +
      "The cache key is the file's path and mtime.",
    evidence: native([["cat src/config.ts", 0]]),
    expect: [],
  },
  {
    name: "a list of done work, all backed",
    text: "Done:\n- Updated `src/cli.ts` to accept `--json`\n- Added `tests/cli_test.ts`\n" +
      "- Ran `deno test tests/cli_test.ts`: 6 passed",
    evidence: native(
      [["deno test tests/cli_test.ts", 0]],
      ["/w/src/cli.ts", "/w/tests/cli_test.ts"],
    ),
    expect: [],
  },
  // --- claims the checker knowingly misses (recall, not precision) ----------------------------
  {
    name: "missed: tests all green, none run",
    text: "Tests: all green ✅",
    evidence: native([]),
    expect: ["tests-pass"],
    missed: true,
  },
  {
    name: "missed: ran the linter, unquoted",
    text: "I ran the linter and it is clean.",
    evidence: native([["cat .eslintrc", 0]]),
    expect: ["ran-command"],
    missed: true,
  },
  {
    name: "missed: everything is already correct, files changed",
    text: "Everything was already correct, I left it alone.",
    evidence: native([], ["/w/src/a.ts"]),
    expect: ["no-changes"],
    missed: true,
  },
  {
    name: "the tests are passing, none run",
    text: "Everything compiles and the tests are passing.",
    evidence: native([["tsc --noEmit", 0]]),
    expect: ["tests-pass"],
  },
];
