/**
 * A review panel's findings merged: several reviewers read the same diff without seeing each
 * other's answers, and findings that are the same finding (same file, lines a few apart, a
 * similar claim) count once, with how many reviewers found it. Agreement between reviewers
 * who could not see each other is the signal; one reviewer's two findings never agree with
 * each other.
 */
import { type Finding, SEVERITIES, type Severity } from "./findings.ts";

/** One reviewer of a panel: its job and what it ran as. */
export interface Reviewer {
  id: string;
  model: string;
  agent: string;
}

/** What one reviewer's job came to. */
export type Answer =
  | {
    reviewer: Reviewer;
    ok: true;
    /** Its findings inside the diff (checkFindings' `kept`). */
    findings: Finding[];
    /** Findings outside the diff, entries out of shape, how a reply was repaired. */
    dropped: number;
    malformed: number;
    repaired?: string;
  }
  | { reviewer: Reviewer; ok: false; reason: string };

/** One reviewer's words about a merged finding. */
export interface Opinion extends Finding {
  reviewer: Reviewer;
}

export interface MergedFinding {
  file: string;
  line: number;
  /** The panel's rating: the middle one of its reviewers' (the higher middle of two). */
  severity: Severity;
  claim: string;
  evidence: string;
  /** How many reviewers found it, of how many answered. */
  agreed: number;
  of: number;
  /** Every reviewer's own finding, in the order of the panel. */
  opinions: Opinion[];
}

/** Lines of two findings at most this far apart can be the same finding. */
export const LINE_SLACK = 3;
/** Share of the shorter claim's words the other must have for the two to be the same finding. */
export const CLAIM_OVERLAP = 0.5;

/** Words that say nothing about which defect a claim is about. */
const FILLER = new Set(
  ("the a an is are be been of to in on for and or it its this that these those with as at by " +
    "not no can may might could would should will when which from here there has have was were " +
    "if but so into than then also any all line lines code file function value variable " +
    "does do used use uses using without").split(" "),
);

/** A claim's content words, folded to a crude stem so "checks" meets "checking" and "check". */
export function claimWords(claim: string): Set<string> {
  const out = new Set<string>();
  for (const raw of claim.toLowerCase().split(/[^\p{L}\p{N}_]+/u)) {
    if (raw.length < 2 || FILLER.has(raw)) continue;
    out.add(raw.length > 5 ? raw.replace(/(ing|ed|es|s)$/, "") : raw.replace(/s$/, ""));
  }
  return out;
}

/** How much of the shorter claim the other one shares, 0 to 1. */
export function claimOverlap(a: string, b: string): number {
  const wa = claimWords(a);
  const wb = claimWords(b);
  if (wa.size === 0 || wb.size === 0) {
    return a.trim().toLowerCase() === b.trim().toLowerCase() ? 1 : 0;
  }
  let shared = 0;
  for (const w of wa) if (wb.has(w)) shared++;
  return shared / Math.min(wa.size, wb.size);
}

const rank = (s: Severity) => SEVERITIES.indexOf(s);

/** The middle rating of a finding's reviewers: the higher middle when they are two. */
function middleSeverity(opinions: readonly Opinion[]): Severity {
  const sorted = opinions.map((o) => o.severity).sort((a, b) => rank(a) - rank(b));
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}

/** How well `f` matches a group: the best claim overlap with one of its opinions close by. */
function matchScore(group: readonly Opinion[], f: Finding, reviewer: Reviewer): number {
  if (group[0]!.file !== f.file || group.some((o) => o.reviewer.id === reviewer.id)) return 0;
  let best = 0;
  for (const o of group) {
    if (Math.abs(o.line - f.line) > LINE_SLACK) continue;
    best = Math.max(best, claimOverlap(o.claim, f.claim));
  }
  return best >= CLAIM_OVERLAP ? best : 0;
}

/**
 * Merges the answers of a panel. Each finding joins the group it matches best (same file,
 * a line within LINE_SLACK of one of the group's, claims overlapping by CLAIM_OVERLAP, no
 * finding of the same reviewer in it yet), or starts its own. Sorted by agreement, then
 * severity, then file and line; groups found by fewer than `minAgreement` reviewers are
 * returned apart as `below`.
 */
export function mergeAnswers(
  answers: readonly Answer[],
  minAgreement = 1,
): { findings: MergedFinding[]; below: MergedFinding[]; answered: number } {
  const groups: Opinion[][] = [];
  const answered = answers.filter((a) => a.ok);
  for (const answer of answered) {
    // The reviewer's most severe findings claim their group first.
    const own = [...answer.findings].sort((a, b) => rank(a.severity) - rank(b.severity));
    for (const f of own) {
      let best: Opinion[] | undefined;
      let bestScore = 0;
      for (const g of groups) {
        const score = matchScore(g, f, answer.reviewer);
        if (score > bestScore) [best, bestScore] = [g, score];
      }
      const opinion = { ...f, reviewer: answer.reviewer };
      if (best) best.push(opinion);
      else groups.push([opinion]);
    }
  }
  const order = new Map(answers.map((a, i) => [a.reviewer.id, i]));
  const merged = groups.map((g): MergedFinding => {
    const opinions = [...g].sort((a, b) =>
      (order.get(a.reviewer.id) ?? 0) - (order.get(b.reviewer.id) ?? 0)
    );
    const severity = middleSeverity(opinions);
    const voice = opinions.find((o) => o.severity === severity) ?? opinions[0]!;
    return {
      file: voice.file,
      line: Math.min(...opinions.map((o) => o.line)),
      severity,
      claim: voice.claim,
      evidence: voice.evidence,
      agreed: opinions.length,
      of: answered.length,
      opinions,
    };
  });
  merged.sort((a, b) =>
    b.agreed - a.agreed || rank(a.severity) - rank(b.severity) || a.file.localeCompare(b.file) ||
    a.line - b.line
  );
  return {
    findings: merged.filter((m) => m.agreed >= minAgreement),
    below: merged.filter((m) => m.agreed < minAgreement),
    answered: answered.length,
  };
}

/** How many of a merged finding's reviewers rated it `severity` or worse. */
export function agreedAtLeast(finding: MergedFinding, severity: Severity): number {
  return finding.opinions.filter((o) => rank(o.severity) <= rank(severity)).length;
}
