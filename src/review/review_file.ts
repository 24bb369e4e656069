/**
 * A review job's own file, `review.json` in its job folder, written by the server when it
 * starts the job: what was diffed, which files were sent and which were not, and each sent
 * file's new-side lines. Any later reply (delegate_review, delegate_result) validates the
 * reviewer's findings against it; the reviewer never writes it.
 */
import { open, readFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { JOB_FILES } from "../jobs/job_folder.ts";
import { writeFileAtomic } from "../platform/atomic_write.ts";
import { readCapped } from "../platform/bytes.ts";
import { flattenLine, quotePath } from "../platform/plain_text.ts";
import type { Budgeted, ReviewDiff } from "./diff.ts";
import { checkFindings, parseFindings } from "./findings.ts";
import { findingText } from "./finding_text.ts";

const reviewSchema = z.object({
  format: z.literal(1),
  root: z.string(),
  label: z.string(),
  focus: z.string().optional(),
  /** Sent file -> new-side line ranges inside its hunks. */
  lines: z.record(z.string(), z.array(z.tuple([z.number(), z.number()]))),
  /** `kind` is absent in records of versions before it was kept. */
  notSent: z.array(
    z.object({
      path: z.string(),
      reason: z.string(),
      kind: z.enum(["secret", "binary", "size", "budget"]).optional(),
    }),
  ),
  /** Untracked files past the limit of a review (diff.ts MAX_UNTRACKED): not read, not named. */
  untrackedLeftOut: z.number().optional(),
  tokens: z.number(),
  added: z.number(),
  removed: z.number(),
  /**
   * A panel's members, the same in every member's file: all read the same diff, each in its
   * own session, and the first one's folder holds the merged findings (panel.json).
   */
  panel: z.object({
    members: z.array(z.object({ id: z.string(), model: z.string(), agent: z.string() }))
      .min(2).max(5),
    minAgreement: z.number().int().min(1),
  }).optional(),
});
export type ReviewRecord = z.infer<typeof reviewSchema>;
export type PanelInfo = NonNullable<ReviewRecord["panel"]>;

export function reviewRecord(diff: ReviewDiff, fit: Budgeted, focus?: string): ReviewRecord {
  return {
    format: 1,
    root: diff.root,
    label: diff.label,
    ...(focus ? { focus } : {}),
    lines: Object.fromEntries(fit.sent.map((f) => [f.path, f.lines])),
    notSent: fit.notSent,
    ...(diff.untrackedLeftOut > 0 ? { untrackedLeftOut: diff.untrackedLeftOut } : {}),
    tokens: fit.tokens,
    added: fit.sent.reduce((n, f) => n + f.added, 0),
    removed: fit.sent.reduce((n, f) => n + f.removed, 0),
  };
}

export async function writeReview(dir: string, record: ReviewRecord): Promise<void> {
  await writeFileAtomic(join(dir, JOB_FILES.review), JSON.stringify(record));
}

/** The review record of a job folder; undefined when the job is not a review (or it is unreadable). */
export async function readReview(dir: string): Promise<ReviewRecord | undefined> {
  let text: string;
  try {
    text = await readFile(join(dir, JOB_FILES.review), "utf8");
  } catch {
    return undefined;
  }
  try {
    const parsed = reviewSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** The task the reviewer gets: the answer's shape, the focus, and the diff itself. */
export function reviewPrompt(diff: ReviewDiff, fit: Budgeted, focus?: string): string {
  const body = fit.sent.map((f) => f.text).join("");
  // A diff that itself contains the closing tag gets one it cannot contain.
  const close = body.includes("</diff>") ? `</diff-${crypto.randomUUID().slice(0, 8)}>` : "</diff>";
  const notSent = fit.notSent.length > 0
    ? `\nNot included (${fit.notSent.length}; you may Read them if you must): ${
      fit.notSent.map((n) => `${n.path} (${n.reason})`).join("; ")
    }\n`
    : "";
  const lines = [`Review these changes (${diff.label}) in the git repository at ${diff.root}.`];
  if (focus) lines.push(`Focus: ${focus}. Report only findings about that.`);
  lines.push(
    "You may read the repository's files for context; change nothing.",
    "",
    "Answer with JSON only, no other text, in exactly this shape:",
    '{"findings": [{"file": "src/a.ts", "line": 12, "severity": "high", "claim": "what is ' +
      'wrong", "evidence": "the code or fact that shows it"}]}',
    "- file: the path as the diff names it (after b/).",
    "- line: a line number of the new version of the file, inside a hunk of this diff; " +
      "findings elsewhere are discarded.",
    "- severity: critical, high, medium, low or info.",
    'No findings is a valid answer: {"findings": []}.',
    notSent,
    `<diff${close === "</diff>" ? "" : ` end="${close}"`}>`,
    body + close,
  );
  return lines.join("\n");
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/**
 * The review section of a reply about a finished review job: its findings in the diff,
 * sorted, or why the reviewer's reply could not be read.
 */
export function renderReview(
  record: ReviewRecord,
  reply: string,
  replyPath: string,
  maxChars: number,
): { text: string; isError: boolean } {
  const sent = Object.keys(record.lines).length;
  const head = [
    `reviewed:   ${plural(sent, "file")} (+${record.added} -${record.removed}) of ` +
    `${flattenLine(record.label)}${record.focus ? `, focus: ${flattenLine(record.focus)}` : ""}`,
  ];
  if (record.notSent.length > 0) {
    const shown = record.notSent.slice(0, 10).map((n) => `${quotePath(n.path)} (${n.reason})`);
    const more = record.notSent.length > 10 ? `; +${record.notSent.length - 10} more` : "";
    head.push(`not sent:   ${record.notSent.length}: ${shown.join("; ")}${more}`);
  }
  const parsed = parseFindings(reply);
  if (!parsed.ok) {
    head.push(
      `The reviewer's reply was not findings JSON (${parsed.reason}). Its raw reply: ` +
        `${replyPath}. Ask again with delegate_followup, or read the reply yourself.`,
    );
    return { text: head.join("\n"), isError: true };
  }
  const lines = new Map(Object.entries(record.lines));
  const { kept, dropped } = checkFindings(parsed.findings, lines, record.root);
  const counts = ["critical", "high", "medium", "low", "info"]
    .map((s) => [s, kept.filter((f) => f.severity === s).length] as const)
    .filter(([, n]) => n > 0).map(([s, n]) => `${n} ${s}`);
  head.push(`findings:   ${kept.length}${counts.length > 0 ? ` (${counts.join(", ")})` : ""}`);
  if (dropped.length > 0) {
    const shown = dropped.slice(0, 5).map((f) => `${shown80(f.file)}:${f.line}`).join(", ");
    head.push(
      `dropped:    ${plural(dropped.length, "finding")} outside the diff (${shown}` +
        `${dropped.length > 5 ? ", ..." : ""})`,
    );
  }
  if (parsed.malformed > 0) {
    head.push(
      `malformed:  ${
        plural(parsed.malformed, "entry", "entries")
      } not in the findings shape, dropped`,
    );
  }
  if (parsed.repaired) head.push(`repaired:   the reply was not plain JSON (${parsed.repaired})`);
  const text = [...head, "", ...kept.map((f, i) => findingText(f, i + 1))].join("\n").trimEnd();
  if (text.length <= maxChars) return { text, isError: false };
  const cut = text.lastIndexOf("\n", maxChars);
  return {
    text: `${text.slice(0, cut > 0 ? cut : maxChars)}\n[... ${
      text.length - (cut > 0 ? cut : maxChars)
    } more characters of findings: the reviewer's reply is ${replyPath}]`,
    isError: false,
  };
}

/** A file name the reviewer gave that matched no file of the diff, shortened for a list. */
function shown80(file: string): string {
  const line = quotePath(file);
  return line.length > 80 ? `${line.slice(0, 77)}...` : line;
}

/** The reviewer's reply is read up to this size; findings JSON is far smaller. */
const MAX_REPLY_BYTES = 1024 * 1024;

/**
 * The review section for a finished job, or undefined when the job is not a review. `replyPath`
 * is the job's final text (result.txt).
 */
export async function reviewSection(
  dir: string,
  replyPath: string,
  maxChars: number,
): Promise<{ text: string; isError: boolean } | undefined> {
  const record = await readReview(dir);
  if (!record) return undefined;
  return renderReview(record, await readReply(replyPath), replyPath, maxChars);
}

/** A reviewer's reply (its job's result.txt), up to MAX_REPLY_BYTES; "" when there is none. */
export async function readReply(replyPath: string): Promise<string> {
  try {
    const handle = await open(replyPath, "r");
    try {
      return new TextDecoder().decode(await readCapped(handle, MAX_REPLY_BYTES));
    } finally {
      await handle.close();
    }
  } catch {
    // No reply text: read as "not findings JSON", with the path.
    return "";
  }
}
