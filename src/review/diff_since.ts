/**
 * What a diff holds that an earlier look at the same changes did not: the review gate
 * (cli/hooks/review_gate.ts) reviews only that at a later stop of a Claude Code session, instead of
 * the whole diff again, which would raise the same findings again.
 *
 * A diff is compared hunk by hunk: a hunk (git's unit, changed lines with 3 lines of context)
 * is known by its file and its lines, not its position, so a hunk that moved because lines
 * were added above it is still the same hunk, and one whose lines changed at all (a fix, an
 * edit within 3 lines of it, which git merges into it) is new and reviewed whole. A new file
 * is one hunk: a line added to it makes the whole file new. A file no reviewer is sent
 * (binary, secret-looking, too large to read: fitDiff's rules but the token budget) is known by
 * its whole diff text, which names its blobs.
 */
import { createHash } from "node:crypto";
import { type FileDiff, parseDiff, type ReviewDiff } from "./diff.ts";
import { secretReason } from "./diff_secrets.ts";

/** Keys kept of a look at most; past them, hunks are reviewed again (the safe side). */
export const MAX_KEYS = 10_000;

/** A file's diff cut at its hunks: the lines before the first `@@`, then each hunk. */
function hunksOf(file: FileDiff): { header: string; hunks: string[] } {
  const lines = file.text.split("\n");
  const starts = lines.flatMap((l, i) => (l.startsWith("@@ ") ? [i] : []));
  if (starts.length === 0) return { header: file.text, hunks: [] };
  const hunks = starts.map((s, i) => lines.slice(s, starts[i + 1] ?? lines.length).join("\n"));
  return { header: lines.slice(0, starts[0]).join("\n"), hunks };
}

const digest = (text: string) => createHash("sha256").update(text).digest("hex").slice(0, 32);

/** A hunk's key: its file and its lines, without the `@@` line's numbers. */
function hunkKey(path: string, hunk: string): string {
  return digest(`${path}\0${hunk.slice(hunk.indexOf("\n") + 1).replace(/\n+$/, "")}`);
}

/** A file without hunks: its path, why it has none, its diff text (blob names included). */
function wholeKey(file: FileDiff): string {
  return digest(
    `${file.path}\0${file.secret ?? ""}\0${file.tooLarge ?? ""}\0${file.binary}\0${file.text}`,
  );
}

/** Whether no reviewer is ever sent `file` (fitDiff), whatever the budget. */
const unsendable = (file: FileDiff, allowSecretFiles: readonly string[]) =>
  file.binary || file.secret !== undefined || file.tooLarge !== undefined ||
  secretReason(file.path, allowSecretFiles) !== undefined;

/** The keys of every hunk of `diff`, and of every file no reviewer is sent. */
export function diffKeys(diff: ReviewDiff, allowSecretFiles: readonly string[] = []): string[] {
  const keys = diff.files.flatMap((f) => {
    const { hunks } = hunksOf(f);
    return hunks.length === 0 || unsendable(f, allowSecretFiles)
      ? [wholeKey(f)]
      : hunks.map((h) => hunkKey(f.path, h));
  });
  return keys.slice(0, MAX_KEYS);
}

/** What `diffSince` left out: hunks seen before, by file. */
export interface LeftOut {
  hunks: number;
  files: string[];
}

/**
 * `diff` with only what `seen` does not hold: each file's new hunks, under its header. A file
 * no reviewer is sent (binary, secret-looking, too large) comes along whole whenever anything
 * is new, seen or not: the review names it as not sent each time. `changed` is false when
 * nothing is new.
 */
export function diffSince(
  diff: ReviewDiff,
  seen: ReadonlySet<string>,
  allowSecretFiles: readonly string[] = [],
): { diff: ReviewDiff; leftOut: LeftOut; changed: boolean } {
  const files: FileDiff[] = [];
  const leftOut: LeftOut = { hunks: 0, files: [] };
  let changed = false;
  for (const file of diff.files) {
    const { header, hunks } = hunksOf(file);
    if (hunks.length === 0 || unsendable(file, allowSecretFiles)) {
      if (!seen.has(wholeKey(file))) changed = true;
      files.push(file);
      continue;
    }
    const fresh = hunks.filter((h) => !seen.has(hunkKey(file.path, h)));
    if (fresh.length < hunks.length) {
      leftOut.hunks += hunks.length - fresh.length;
      leftOut.files.push(file.path);
    }
    if (fresh.length === 0) continue;
    changed = true;
    if (fresh.length === hunks.length) {
      files.push(file);
      continue;
    }
    // The header and the new hunks, read again for their line numbers and counts.
    const text = [header, ...fresh].join("\n").replace(/\n*$/, "\n");
    const [cut] = parseDiff(text);
    files.push(cut ? { ...cut, path: file.path } : file);
  }
  if (!changed) return { diff: { ...diff, files: [] }, leftOut, changed };
  const label = leftOut.hunks === 0 ? diff.label : `${diff.label}, what changed since this ` +
    `session's last review (${leftOut.hunks} hunk${leftOut.hunks === 1 ? "" : "s"} reviewed ` +
    "then left out; you may Read the files)";
  return { diff: { ...diff, label, files }, leftOut, changed };
}
