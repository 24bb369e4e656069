/**
 * The diff a review covers: computed by the server with git, split per file, each file's
 * new-side lines in hunks noted (a finding must point at one of them), and fitted to a token
 * budget the way one-shot files are: a file whose diff does not fit, is binary or looks like a
 * secret is left out whole and named, never cut.
 */
import { lstat } from "node:fs/promises";
import { join } from "node:path";
import { estimateTokens } from "../models/tokens.ts";
import { DelegateError } from "../errors.ts";
import { linkedSecrets, secretReason } from "./diff_secrets.ts";
import { gitText, reviewConfig, runGit } from "./git.ts";

export interface FileDiff {
  /** Relative to the repository's top, `/`-separated. */
  path: string;
  /** This file's part of the diff, from its `diff --git` line. */
  text: string;
  /** New-side line numbers inside its hunks, as [first, last] ranges. */
  lines: Array<[number, number]>;
  added: number;
  removed: number;
  binary: boolean;
  /**
   * Why the file is a secret though its name does not say so (a hard link to `.env`), or
   * that its content was never read (an untracked secret); its diff is then empty.
   */
  secret?: string;
}

/** Untracked files added to a review of uncommitted changes, at most. */
const MAX_UNTRACKED = 200;

const DIFF_OPTIONS = [
  "--no-color",
  "--no-ext-diff",
  "--no-textconv",
  "--no-renames",
  // Never into a repository inside the reviewed one (its config may name a filter); only
  // the flag holds, a `.gitmodules` entry overrides the config setting.
  "--ignore-submodules=all",
  "--src-prefix=a/",
  "--dst-prefix=b/",
  "-U3",
];

/** A path as git prints it: as is, or C-quoted when it holds odd characters. */
function unquote(path: string): string {
  if (!path.startsWith('"') || !path.endsWith('"')) return path;
  const body = path.slice(1, -1);
  const bytes: number[] = [];
  const simple: Record<string, number> = { n: 10, t: 9, r: 13, '"': 34, "\\": 92, a: 7, b: 8 };
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== "\\") {
      bytes.push(...new TextEncoder().encode(c));
      continue;
    }
    const next = body[i + 1] ?? "";
    if (/[0-7]/.test(next)) {
      bytes.push(parseInt(body.slice(i + 1, i + 4), 8));
      i += 3;
    } else {
      bytes.push(simple[next] ?? next.charCodeAt(0));
      i += 1;
    }
  }
  return new TextDecoder().decode(new Uint8Array(bytes));
}

function stripPrefix(path: string, prefix: string): string {
  const p = unquote(path.replace(/\t$/, ""));
  return p.startsWith(prefix) ? p.slice(prefix.length) : p;
}

/** Splits a unified diff (as git prints it with a/ and b/ prefixes) into its files. */
export function parseDiff(text: string): FileDiff[] {
  const out: FileDiff[] = [];
  const lines = text.split("\n");
  let current: { start: number; file: FileDiff } | undefined;
  let newLine = 0;
  let oldLeft = 0;
  let newLeft = 0;
  const close = (end: number) => {
    if (!current) return;
    current.file.text = lines.slice(current.start, end).join("\n").replace(/\n*$/, "\n");
    out.push(current.file);
    current = undefined;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (oldLeft > 0 || newLeft > 0) {
      const c = line[0];
      if (c === " " || c === "+" || (c === undefined && line === "")) {
        if (c === "+") current!.file.added++;
        else oldLeft--;
        addLine(current!.file.lines, newLine++);
        newLeft--;
        continue;
      }
      if (c === "-") {
        current!.file.removed++;
        oldLeft--;
        continue;
      }
      if (c === "\\") continue;
      oldLeft = newLeft = 0;
    }
    if (line.startsWith("diff --git ")) {
      close(i);
      // The b/ side of the header; replaced by the +++ line when there is one.
      const m = / b\/(.*)$/.exec(line) ?? / "b\/(.*)"$/.exec(line);
      current = {
        start: i,
        file: {
          path: m ? unquote(m[0].trim()).replace(/^b\//, "") : "",
          text: "",
          lines: [],
          added: 0,
          removed: 0,
          binary: false,
        },
      };
      continue;
    }
    if (!current) continue;
    if (line.startsWith("+++ ")) {
      const p = line.slice(4);
      if (p !== "/dev/null") current.file.path = stripPrefix(p, "b/");
    } else if (line.startsWith("--- ") && !current.file.path) {
      current.file.path = stripPrefix(line.slice(4), "a/");
    } else if (/^Binary files .* differ$/.test(line) || line === "GIT binary patch") {
      current.file.binary = true;
    } else {
      const h = /^@@ -\d+(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/.exec(line);
      if (h) {
        oldLeft = h[1] === undefined ? 1 : Number(h[1]);
        newLine = Number(h[2]);
        newLeft = h[3] === undefined ? 1 : Number(h[3]);
      }
    }
  }
  close(lines.length);
  return out;
}

function addLine(ranges: Array<[number, number]>, n: number): void {
  const last = ranges.at(-1);
  if (last && last[1] === n - 1) last[1] = n;
  else ranges.push([n, n]);
}

/** Whether `line` is inside one of `ranges`. */
export function inRanges(ranges: ReadonlyArray<readonly [number, number]>, line: number): boolean {
  return ranges.some(([a, b]) => line >= a && line <= b);
}

export interface ReviewDiff {
  /** The repository's top directory. */
  root: string;
  /** What was diffed, in words: "uncommitted changes" or "main...HEAD". */
  label: string;
  files: FileDiff[];
}

/**
 * The diff of `base...HEAD`, or of every uncommitted change (untracked files too). An
 * untracked secret file (by name, `allowSecretFiles` excepted) is never read: it is listed
 * with an empty diff, as is a changed file that is a secret under another name (a hard link).
 */
export async function computeDiff(
  cwd: string,
  base?: string,
  allowSecretFiles: readonly string[] = [],
): Promise<ReviewDiff> {
  const top = await runGit(cwd, ["rev-parse", "--show-toplevel"]);
  if (top.code !== 0) {
    throw new DelegateError(
      `Cannot review: "${cwd}" is not in a git repository (${top.stderr || `exit ${top.code}`}). ` +
        "Pass the cwd of a repository",
    );
  }
  const root = new TextDecoder().decode(top.stdout).trim();
  const config = await reviewConfig(root);
  if (base !== undefined) {
    const ok = await runGit(root, ["rev-parse", "--verify", "--quiet", `${base}^{commit}`], {
      config,
    });
    if (ok.code !== 0) {
      throw new DelegateError(
        `Cannot review: base "${base}" names no commit in ${root}. Pass a branch, tag or commit`,
      );
    }
    const range = ["diff", ...DIFF_OPTIONS, `${base}...HEAD`, "--"];
    const text = await gitText(root, range, "git diff", config);
    return { root, label: `${base}...HEAD`, files: parseDiff(text) };
  }
  const head = await runGit(root, ["rev-parse", "--verify", "--quiet", "HEAD"], { config });
  // A repository without a commit yet: everything is new, compared with the empty tree.
  const against = head.code === 0
    ? "HEAD"
    : (await gitText(root, ["hash-object", "-t", "tree", "/dev/null"], "git hash-object", config))
      .trim();
  const text = await gitText(root, ["diff", ...DIFF_OPTIONS, against, "--"], "git diff", config);
  const files = parseDiff(text);
  const untracked = (await gitText(
    root,
    ["ls-files", "--others", "--exclude-standard", "-z"],
    "git ls-files",
    config,
  )).split("\0").filter((p) => p !== "");
  for (const path of untracked.slice(0, MAX_UNTRACKED)) {
    // Only regular files: a symlink's diff is its target's name, and a FIFO would block.
    const info = await lstat(join(root, path)).catch(() => undefined);
    if (!info?.isFile()) continue;
    const secret = secretReason(path, allowSecretFiles);
    if (secret !== undefined) {
      files.push(withheld(path, secret));
      continue;
    }
    const r = await runGit(
      root,
      ["diff", ...DIFF_OPTIONS, "--no-index", "--", "/dev/null", path],
      { config },
    );
    // --no-index exits 1 when the files differ, which they do.
    if (r.code !== 0 && r.code !== 1) continue;
    files.push(...parseDiff(new TextDecoder().decode(r.stdout)));
  }
  const linked = await linkedSecrets(
    root,
    files.filter((f) => f.secret === undefined).map((f) => f.path),
    allowSecretFiles,
  );
  for (const [i, file] of files.entries()) {
    const reason = linked.get(file.path);
    if (reason !== undefined) files[i] = withheld(file.path, reason);
  }
  const label = "uncommitted changes" +
    (untracked.length > MAX_UNTRACKED
      ? ` (the first ${MAX_UNTRACKED} of ${untracked.length} untracked files)`
      : "");
  return { root, label, files };
}

/** A file listed by name only: its content stays out of the review. */
function withheld(path: string, reason: string): FileDiff {
  return { path, text: "", lines: [], added: 0, removed: 0, binary: false, secret: reason };
}

export interface Budgeted {
  sent: FileDiff[];
  notSent: Array<{ path: string; reason: string }>;
  tokens: number;
}

/**
 * The files whose diff goes to the reviewer, within `budget` tokens (chars / 4, as for
 * one-shot files), in the diff's order. Left out and named: binary files, secret-looking ones
 * (what a delegate reads goes to its model's provider), and those that do not fit.
 */
export function fitDiff(
  files: readonly FileDiff[],
  budget: number,
  allowSecretFiles: readonly string[] = [],
): Budgeted {
  const sent: FileDiff[] = [];
  const notSent: Budgeted["notSent"] = [];
  let used = 0;
  for (const file of files) {
    const secret = file.secret ?? secretReason(file.path, allowSecretFiles);
    if (secret !== undefined) {
      notSent.push({ path: file.path, reason: secret });
      continue;
    }
    if (file.binary) {
      notSent.push({ path: file.path, reason: "binary" });
      continue;
    }
    const tokens = estimateTokens(file.text.length);
    if (used + tokens > budget) {
      notSent.push({
        path: file.path,
        reason: `about ${tokens} tokens, over the remaining budget of ${budget - used}`,
      });
      continue;
    }
    used += tokens;
    sent.push(file);
  }
  return { sent, notSent, tokens: used };
}
