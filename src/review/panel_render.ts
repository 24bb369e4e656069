/**
 * A panel's outcome in words, as both front ends print it: what was reviewed, how each
 * reviewer fared, and the merged findings by agreement, then severity, each saying who found
 * it. Everything a reviewer or a backend wrote is flattened onto its line and escaped, so that
 * no reviewer can add a line of its own (a forged `findings: 0`).
 */
import { formatElapsed } from "../platform/duration.ts";
import { elapsedMs } from "../jobs/job_figures.ts";
import { flattenLine, quotePath } from "../platform/plain_text.ts";
import { SEVERITIES } from "./findings.ts";
import { findingText } from "./finding_text.ts";
import { MAX_UNTRACKED, type NotSentKind } from "./diff.ts";
import type { ReviewOutcome } from "./outcome.ts";
import type { ReviewRecord } from "./review_file.ts";
import type { MergedFinding, Reviewer } from "./panel.ts";

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** How a reviewer is named in a reply: its model, and its agent when not the reviewer. */
export function reviewerLabel(r: Reviewer): string {
  return flattenLine(r.agent === "reviewer" ? r.model : `${r.agent}/${r.model}`);
}

/** "3 (1 critical, 2 low)". */
export function severityCounts(findings: readonly { severity: string }[]): string {
  const counts = SEVERITIES.map((s) =>
    [s, findings.filter((f) => f.severity === s).length] as const
  )
    .filter(([, n]) => n > 0).map(([s, n]) => `${n} ${s}`);
  return `${findings.length}${counts.length > 0 ? ` (${counts.join(", ")})` : ""}`;
}

/**
 * `1. [high] src/a.ts:42 (2 of 3: qwen3-coder:30b, gpt-oss:20b high)  "claim"`, and its
 * evidence (finding_text.ts).
 */
export function mergedFindingText(m: MergedFinding, n: number): string {
  const differ = m.opinions.some((o) => o.severity !== m.severity);
  const who = m.opinions.map((o) => `${reviewerLabel(o.reviewer)}${differ ? ` ${o.severity}` : ""}`)
    .join(", ");
  return findingText(m, n, `${m.agreed} of ${m.of}: ${who}`);
}

/** The head lines every review reply starts with: what was diffed, and what was not sent. */
export function reviewedLines(o: Pick<ReviewOutcome, "record">): string[] {
  const r = o.record;
  const head = [
    `reviewed:   ${plural(Object.keys(r.lines).length, "file")} (+${r.added} -${r.removed}) of ` +
    `${flattenLine(r.label)}${r.focus ? `, focus: ${flattenLine(r.focus)}` : ""}`,
  ];
  if (r.notSent.length > 0) {
    const shown = r.notSent.slice(0, 10).map((n) => `${quotePath(n.path)} (${n.reason})`);
    const more = r.notSent.length > 10 ? `; +${r.notSent.length - 10} more` : "";
    head.push(`not sent:   ${r.notSent.length}: ${shown.join("; ")}${more}`);
  }
  return head;
}

const NOT_SENT_WORDS: Record<NotSentKind | "other", string> = {
  secret: "secret-looking",
  binary: "binary",
  size: "too large to read",
  budget: "over the reviewers' context",
  other: "for another reason",
};

/**
 * What a review did not cover, with counts, on one line: untracked files past the limit
 * (neither read nor named) and changed files whose diff was not sent, by why, with the first
 * names; undefined when the review covered every change. The review gate says it whenever it
 * lets a stop through or blocks one, so that "found nothing" is never read as "all reviewed".
 */
export function notReviewedText(r: ReviewRecord): string | undefined {
  const parts: string[] = [];
  if (r.untrackedLeftOut) {
    parts.push(
      `${plural(r.untrackedLeftOut, "untracked file")} past the first ${MAX_UNTRACKED} ` +
        "(neither read nor named)",
    );
  }
  if (r.notSent.length > 0) {
    const counts = new Map<string, number>();
    for (const n of r.notSent) {
      const words = NOT_SENT_WORDS[n.kind ?? "other"];
      counts.set(words, (counts.get(words) ?? 0) + 1);
    }
    const names = r.notSent.slice(0, 3).map((n) => quotePath(n.path)).join(", ") +
      (r.notSent.length > 3 ? ", ..." : "");
    parts.push(
      `${plural(r.notSent.length, "changed file")} not sent (` +
        `${[...counts].map(([words, n]) => `${n} ${words}`).join(", ")}: ${names})`,
    );
  }
  return parts.length > 0 ? parts.join("; ") : undefined;
}

/** One reviewer's row: its job, how long, its tokens, and what it answered or why not. */
function reviewerRow(o: ReviewOutcome, i: number): string {
  const a = o.answers[i]!;
  const job = o.views[i]!.record;
  const tokens = job.usage ? `, in ${job.usage.inputTokens} / out ${job.usage.outputTokens}` : "";
  const head = `  ${i + 1}. ${reviewerLabel(a.reviewer)}  job ${job.id}  ` +
    `${formatElapsed(elapsedMs(job))}${tokens}: `;
  if (!a.ok) return head + flattenLine(a.reason);
  const extra = [
    ...(a.dropped > 0 ? [`${a.dropped} outside the diff dropped`] : []),
    ...(a.malformed > 0 ? [`${plural(a.malformed, "entry", "entries")} out of shape`] : []),
    ...(a.repaired ? [`reply repaired (${a.repaired})`] : []),
  ];
  return head + plural(a.findings.length, "finding") +
    (extra.length > 0 ? ` (${extra.join("; ")})` : "");
}

/** The panel's reply section; an error when no reviewer answered. */
export function renderPanel(
  o: ReviewOutcome,
  maxChars: number,
): { text: string; isError: boolean } {
  const total = o.answers.length;
  const head = [
    ...reviewedLines(o),
    `reviewers:  ${o.answered} of ${total} answered` +
    (o.answered < total ? "; the panel went on with the rest" : ""),
    ...o.answers.map((_, i) => reviewerRow(o, i)),
  ];
  if (o.answered === 0) {
    head.push(
      "No reviewer answered with findings, so there is nothing to merge. See each one's " +
        "reason above; ask again, or read a reviewer's reply with delegate_result.",
    );
    return { text: head.join("\n"), isError: true };
  }
  head.push(`findings:   ${severityCounts(o.findings)}, by agreement, then severity`);
  if (o.below.length > 0) {
    head.push(
      `left out:   ${plural(o.below.length, "finding")} found by fewer than ` +
        `${o.minAgreement} reviewers (min_agreement)`,
    );
  }
  if (o.wordings) {
    head.push(
      "path" in o.wordings
        ? `wordings:   every reviewer's own words: ${quotePath(o.wordings.path)}`
        : `wordings:   ${flattenLine(o.wordings.error)}`,
    );
  }
  const text = [...head, "", ...o.findings.map((m, i) => mergedFindingText(m, i + 1))].join("\n")
    .trimEnd();
  if (text.length <= maxChars) return { text, isError: false };
  const cut = text.lastIndexOf("\n", maxChars);
  const at = cut > 0 ? cut : maxChars;
  const where = o.wordings && "path" in o.wordings ? `: ${quotePath(o.wordings.path)}` : "";
  return {
    text: `${text.slice(0, at)}\n[... ${text.length - at} more characters of findings${where}]`,
    isError: false,
  };
}
