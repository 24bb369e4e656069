/**
 * The diff a review covers: computed by the server with git, split per file, each file's
 * new-side lines in hunks noted (a finding must point at one of them), and fitted to a token
 * budget the way one-shot files are: a file whose diff does not fit, is binary or looks like a
 * secret is left out whole and named, never cut. What git prints is read up to MAX_DIFF_BYTES
 * (more is an error that names the limit); of the untracked files, the first MAX_UNTRACKED
 * are read, up to MAX_DIFF_BYTES together, those past that size are named as too large and
 * those past that count are counted (`untrackedLeftOut`), so every reply can say what the
 * review did not cover.
 */
import { lstat } from "node:fs/promises";
import { join } from "node:path";
import { estimateTokens } from "../models/tokens.ts";
import { DelegateError } from "../errors.ts";
import { linkedSecrets, secretReason } from "./diff_secrets.ts";
import { type FileDiff, parseDiff } from "./diff_parse.ts";
import { GitOutputTooBig, gitText, MAX_DIFF_BYTES, reviewConfig, runGit } from "./git.ts";

export { type FileDiff, inRanges, parseDiff } from "./diff_parse.ts";

/** Untracked files added to a review of uncommitted changes, at most. */
export const MAX_UNTRACKED = 200;

/**
 * The directory is not in a git repository (or in one without a work tree): there is nothing
 * to review, which the review gate treats as silence rather than as a failure.
 */
export class NotARepository extends DelegateError {
  override name = "NotARepository";
}

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

export interface ReviewDiff {
  /** The repository's top directory. */
  root: string;
  /** What was diffed, in words: "uncommitted changes" or "main...HEAD". */
  label: string;
  files: FileDiff[];
  /** Untracked files past MAX_UNTRACKED: neither read nor named (0 for base...HEAD). */
  untrackedLeftOut: number;
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
    // git speaks C here (LC_ALL=C, ../jobs/git.ts); any other refusal (a repository owned by
    // someone else, a broken .git) is a failure to say, not "nothing to review".
    const none = /not a git repository|must be run in a work tree/.test(top.stderr);
    throw new (none ? NotARepository : DelegateError)(
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
    return { root, label: `${base}...HEAD`, files: parseDiff(text), untrackedLeftOut: 0 };
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
  // The untracked files' diffs together are held to MAX_DIFF_BYTES, as the tracked diff is:
  // 200 files of 30 MiB each would otherwise all be read into memory.
  let room = MAX_DIFF_BYTES;
  const tooLarge = (path: string, size: number) =>
    withheld(path, {
      tooLarge: `too large (${size} bytes; the untracked files' diff is read up to ` +
        `${MAX_DIFF_BYTES / 1024 / 1024} MiB, ${room} bytes were left)`,
    });
  for (const path of untracked.slice(0, MAX_UNTRACKED)) {
    // Only regular files: a symlink's diff is its target's name, and a FIFO would block.
    const info = await lstat(join(root, path)).catch(() => undefined);
    if (!info?.isFile()) continue;
    const secret = secretReason(path, allowSecretFiles);
    if (secret !== undefined) {
      files.push(withheld(path, { secret }));
      continue;
    }
    // A new file's diff holds all of its bytes: one larger than what is left is not read.
    if (info.size > room) {
      files.push(tooLarge(path, info.size));
      continue;
    }
    let r;
    try {
      r = await runGit(
        root,
        ["diff", ...DIFF_OPTIONS, "--no-index", "--", "/dev/null", path],
        { config, maxBytes: room },
      );
    } catch (e) {
      if (!(e instanceof GitOutputTooBig)) throw e;
      files.push(tooLarge(path, info.size));
      continue;
    }
    // --no-index exits 1 when the files differ, which they do.
    if (r.code !== 0 && r.code !== 1) continue;
    room -= r.stdout.length;
    files.push(...parseDiff(new TextDecoder().decode(r.stdout)));
  }
  const linked = await linkedSecrets(
    root,
    files.filter((f) => f.secret === undefined && f.tooLarge === undefined).map((f) => f.path),
    allowSecretFiles,
  );
  for (const [i, file] of files.entries()) {
    const reason = linked.get(file.path);
    if (reason !== undefined) files[i] = withheld(file.path, { secret: reason });
  }
  const untrackedLeftOut = Math.max(0, untracked.length - MAX_UNTRACKED);
  const label = "uncommitted changes" +
    (untrackedLeftOut > 0
      ? ` (the first ${MAX_UNTRACKED} of ${untracked.length} untracked files)`
      : "");
  return { root, label, files, untrackedLeftOut };
}

/** A file listed by name only: its content stays out of the review. */
function withheld(path: string, why: { secret: string } | { tooLarge: string }): FileDiff {
  return { path, text: "", lines: [], added: 0, removed: 0, binary: false, ...why };
}

/** Why a changed file was not sent: the kind, for counts, and the reason, in words. */
export type NotSentKind = "secret" | "binary" | "size" | "budget";

export interface Budgeted {
  sent: FileDiff[];
  notSent: Array<{ path: string; reason: string; kind: NotSentKind }>;
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
      notSent.push({ path: file.path, reason: secret, kind: "secret" });
      continue;
    }
    if (file.tooLarge !== undefined) {
      notSent.push({ path: file.path, reason: file.tooLarge, kind: "size" });
      continue;
    }
    if (file.binary) {
      notSent.push({ path: file.path, reason: "binary", kind: "binary" });
      continue;
    }
    const tokens = estimateTokens(file.text.length);
    if (used + tokens > budget) {
      notSent.push({
        path: file.path,
        reason: `about ${tokens} tokens, over the remaining budget of ${budget - used}`,
        kind: "budget",
      });
      continue;
    }
    used += tokens;
    sent.push(file);
  }
  return { sent, notSent, tokens: used };
}
