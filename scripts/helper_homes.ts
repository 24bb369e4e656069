/**
 * One home per helper (CONTRIBUTING.md, "A helper"): each name in HOMES is defined in its home
 * file alone. A second `function`, `const`, `let` or `var` of that name anywhere in the folders
 * it covers, exported or local, is reported; so is a retired name that a copy went by, and a
 * helper's work done inline where a pattern for it is listed (`inline`). `deno
 * task check` runs it beside the import rules. Usage: `deno run --allow-read
 * scripts/helper_homes.ts [repo-dir]`; it prints one line per second home and exits 1, or
 * exits 0 silently.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

export interface Home {
  /** The helper's name. */
  name: string;
  /** The one file that defines it, relative to the repository, with "/". */
  home: string;
  /** The folders where no other definition may be (default: src/). */
  covers?: readonly string[];
  /** For a retired name: the name to use instead (at `home`). */
  use?: string;
  /**
   * Code that does the helper's work inline, without a name to catch: a match outside the home
   * is a second home too. Matched against code with comments blanked, one line at a time.
   */
  inline?: readonly RegExp[];
}

/**
 * The helpers that had several homes (issue 33 counted them) and the names their copies went
 * by. A new helper that is written twice goes here too.
 */
export const HOMES: readonly Home[] = [
  { name: "isInside", home: "src/platform/path_inside.ts" },
  // The Python the Node journal's helper and the mount helper run: the system's folders only.
  { name: "systemPython", home: "src/platform/posix/inotify_helper.ts" },
  { name: "PYTHON_CANDIDATES", home: "src/platform/posix/inotify_helper.ts" },
  { name: "isInsideRoots", home: "src/platform/path_inside.ts" },
  { name: "insideAny", home: "src/platform/path_inside.ts", use: "isInsideRoots" },
  { name: "isObject", home: "src/platform/json_object.ts" },
  { name: "isRecord", home: "src/platform/json_object.ts", use: "isObject" },
  { name: "settleWithin", home: "src/platform/sleep.ts" },
  { name: "formatElapsed", home: "src/platform/duration.ts" },
  { name: "cutTo", home: "src/platform/text_cut.ts" },
  { name: "parseShow", home: "src/backends/ollama/api.ts" },
  // A second reader of error bodies was inline (model_list.ts's getJson, issue 33): it read
  // `body.error.message` and FastAPI's `body.detail` itself. Errors thrown in our own code have
  // no `.error.message`, and nothing else of ours has a `.detail` that is checked for a string.
  {
    name: "errorDetail",
    home: "src/backends/http_util.ts",
    inline: [/\.error\??\.message\b/, /\btypeof\s+[\w$.?]+\.detail\s*===\s*["'`]string["'`]/],
  },
  // The tests' own helpers (tests/support/): one git, one first-commit repository.
  { name: "git", home: "tests/support/git_repo.ts", covers: ["tests/"] },
  { name: "committedRepo", home: "tests/support/git_repo.ts", covers: ["tests/"] },
  { name: "tempDir", home: "tests/support/temp_dir.ts", covers: ["tests/", "bench/"] },
  { name: "withEmulator", home: "tests/support/emulator/emulator.ts", covers: ["tests/"] },
  { name: "streamedResponse", home: "tests/support/emulator/util.ts", covers: ["tests/"] },
  { name: "modelContextLength", home: "src/backends/ollama/api.ts", use: "parseShow" },
  { name: "runCommand", home: "src/platform/command_run.ts" },
  { name: "realOrSelf", home: "src/platform/raw_fs.ts" },
  { name: "DEFAULT_BACKEND", home: "src/settings/backends.ts" },
  { name: "DEFAULT_BACKEND_NAME", home: "src/settings/backends.ts", use: "DEFAULT_BACKEND" },
  // The sandboxes' cap of masks was written three times (claude turn, claude verify, native).
  { name: "MAX_SECRET_MASKS", home: "src/engines/bwrap_base.ts" },
  {
    name: "bundleForNode",
    home: "scripts/build_node.ts",
    covers: ["tests/", "bench/", "scripts/"],
  },
  // The hex digest of a project's path was written twice (unread markers, the ledger's repo id).
  { name: "sha256Hex", home: "src/platform/digest.ts" },
  // Thousands separators were ICU's toLocaleString in ten places, and a process's first call
  // loads ICU's data (27-33 ms): the first claude turn of each server paid it.
  { name: "formatCount", home: "src/platform/count_text.ts", inline: [/\.toLocaleString\(/] },
];

export interface SecondHome {
  name: string;
  /** Where the second definition is, relative to the repository. */
  file: string;
  line: number;
  message: string;
}

function tsFiles(dir: string): string[] {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((e) => {
    const full = join(dir, e.name);
    if (e.isDirectory()) return e.name === "node_modules" ? [] : tsFiles(full);
    return e.isFile() && /\.tsx?$/.test(e.name) ? [full] : [];
  });
}

/** Text with comments blanked out, line breaks kept (so a name in a comment is no definition). */
function withoutComments(text: string): string {
  return text
    .replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, " "))
    .replace(/(^|[ \t;{}])\/\/.*$/gm, "$1");
}

/** The 1-based lines of `text` that define `name` as a function, const, let or var. */
export function definitionLines(text: string, name: string): number[] {
  const code = withoutComments(text);
  const n = name.replace(/\$/g, "\\$");
  const re = new RegExp(
    String
      .raw`(?:^|[\s;{}(])(?:(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*${n}\s*[<(]` +
      String.raw`|(?:export\s+)?(?:const|let|var)\s+${n}\s*[=:])`,
    "g",
  );
  return [...code.matchAll(re)].map((m) => code.slice(0, m.index + m[0].length).split("\n").length);
}

/** The 1-based lines of `text` whose code (not comments) matches one of `patterns`. */
export function inlineLines(text: string, patterns: readonly RegExp[]): number[] {
  if (patterns.length === 0) return [];
  return withoutComments(text).split("\n").flatMap((code, i) =>
    patterns.some((p) => p.test(code)) ? [i + 1] : []
  );
}

/** Every definition of a HOMES name outside its home, in the repository at `root`. */
export function checkHelperHomes(root: string, homes: readonly Home[] = HOMES): SecondHome[] {
  const out: SecondHome[] = [];
  const files = new Map<string, string[]>();
  for (const h of homes) {
    for (const folder of h.covers ?? ["src/"]) {
      if (!files.has(folder)) {
        files.set(
          folder,
          tsFiles(join(root, folder)).map((f) => relative(root, f).split(sep).join("/")).sort(),
        );
      }
      for (const file of files.get(folder)!) {
        if (file === h.home && h.use === undefined) continue;
        const text = readFileSync(join(root, file), "utf8");
        for (const line of inlineLines(text, h.inline ?? [])) {
          out.push({
            name: h.name,
            file,
            line,
            message: `${file}:${line}: does the work of "${h.name}" inline (its home is ` +
              `${h.home}): call ${h.name} instead, or if this is another thing, say it another way`,
          });
        }
        if (!text.includes(h.name)) continue;
        for (const line of definitionLines(text, h.name)) {
          const fix = h.use === undefined
            ? `import it from ${h.home}`
            : `the helper is ${h.use} in ${h.home}; import that`;
          out.push({
            name: h.name,
            file,
            line,
            message: `${file}:${line}: a second home for "${h.name}" (its home is ${h.home}): ` +
              `${fix}, or if this is another thing, give it another name`,
          });
        }
      }
    }
  }
  return out;
}

if (import.meta.main) {
  const here = dirname(fileURLToPath(import.meta.url));
  const root = process.argv[2] ?? join(here, "..");
  const found = checkHelperHomes(root);
  for (const v of found) console.error(v.message);
  if (found.length > 0) {
    console.error(
      `${found.length} helper(s) defined outside their home (the list: HOMES in ` +
        `scripts/helper_homes.ts; CONTRIBUTING.md, "A helper")`,
    );
    process.exit(1);
  }
}
