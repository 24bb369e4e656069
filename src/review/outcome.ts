/**
 * What a finished review came to, for both front ends: each reviewer's answer read from its
 * job folder and checked against the diff it was shown, the panel's findings merged, and for a
 * panel every reviewer's own words kept in the first reviewer's folder (panel.json).
 */
import { join } from "node:path";
import { JOB_FILES } from "../jobs/job_folder.ts";
import type { JobView } from "../jobs/manager.ts";
import { isTerminal } from "../jobs/record.ts";
import type { JobStore } from "../jobs/store.ts";
import { writeFileAtomic } from "../platform/atomic_write.ts";
import { checkFindings, parseFindings } from "./findings.ts";
import { type Answer, mergeAnswers, type MergedFinding, type Reviewer } from "./panel.ts";
import { readReply, readReview, type ReviewRecord } from "./review_file.ts";

export interface ReviewOutcome {
  record: ReviewRecord;
  /** The reviewers' jobs, in the panel's order. */
  views: JobView[];
  answers: Answer[];
  findings: MergedFinding[];
  /** Found by fewer reviewers than minAgreement. */
  below: MergedFinding[];
  answered: number;
  minAgreement: number;
  /** Where every reviewer's words were saved (a panel), or why they could not be. */
  wordings?: { path: string } | { error: string };
}

/** What reading a job's review needs of the job layer. */
export interface ReviewJobs {
  get(id: string): Promise<JobView>;
  store: JobStore;
}

/** The review a job belongs to (a panel's members, or itself alone); undefined for other jobs. */
export async function reviewOf(
  jobs: ReviewJobs,
  id: string,
): Promise<{ record: ReviewRecord; ids: string[] } | undefined> {
  const record = await readReview(jobs.store.dirOf(id));
  if (!record) return undefined;
  return { record, ids: record.panel ? record.panel.members.map((m) => m.id) : [id] };
}

function reviewerOf(view: JobView): Reviewer {
  return { id: view.record.id, model: view.record.model, agent: view.record.agent ?? "reviewer" };
}

/** One reviewer's answer: its findings inside the diff, or why it gave none. */
async function answerOf(view: JobView, record: ReviewRecord, store: JobStore): Promise<Answer> {
  const reviewer = reviewerOf(view);
  const r = view.record;
  if (r.state !== "completed") {
    const why = r.errorText ? `: ${r.errorText.slice(0, 300)}` : "";
    return { reviewer, ok: false, reason: `${r.state}${why}` };
  }
  const path = store.resultPath(r.id);
  const parsed = parseFindings(await readReply(path));
  if (!parsed.ok) {
    return {
      reviewer,
      ok: false,
      reason: `its reply was not findings JSON (${parsed.reason}): ${path}`,
    };
  }
  const { kept, dropped } = checkFindings(
    parsed.findings,
    new Map(Object.entries(record.lines)),
    record.root,
  );
  return {
    reviewer,
    ok: true,
    findings: kept,
    dropped: dropped.length,
    malformed: parsed.malformed,
    ...(parsed.repaired ? { repaired: parsed.repaired } : {}),
  };
}

/**
 * The outcome of a review whose jobs have all ended (`views`, in the panel's order). For a
 * panel, panel.json in the first job's folder is written (again) with every reviewer's words.
 */
export async function reviewOutcome(
  jobs: ReviewJobs,
  record: ReviewRecord,
  views: readonly JobView[],
  minAgreement = record.panel?.minAgreement ?? 1,
): Promise<ReviewOutcome> {
  if (views.some((v) => !isTerminal(v.record.state))) {
    throw new TypeError("reviewOutcome needs every reviewer's job to have ended");
  }
  const answers = await Promise.all(views.map((v) => answerOf(v, record, jobs.store)));
  const merged = mergeAnswers(answers, minAgreement);
  const outcome: ReviewOutcome = { record, views: [...views], answers, ...merged, minAgreement };
  if (views.length > 1) {
    const path = join(jobs.store.dirOf(views[0]!.record.id), JOB_FILES.panel);
    try {
      await writeFileAtomic(path, JSON.stringify(outcomeJson(outcome), null, 1));
      outcome.wordings = { path };
    } catch (e) {
      outcome.wordings = { error: `could not save ${path} (${(e as Error).message})` };
    }
  }
  return outcome;
}

function findingJson(m: MergedFinding) {
  return {
    file: m.file,
    line: m.line,
    severity: m.severity,
    agreed: m.agreed,
    of: m.of,
    claim: m.claim,
    evidence: m.evidence,
    reviewers: m.opinions.map((o) => ({
      job_id: o.reviewer.id,
      model: o.reviewer.model,
      agent: o.reviewer.agent,
      severity: o.severity,
      line: o.line,
      claim: o.claim,
      evidence: o.evidence,
    })),
  };
}

/** The outcome as data: panel.json, and `ollama-delegate review --json`. */
export function outcomeJson(o: ReviewOutcome) {
  const r = o.record;
  return {
    format: 1,
    reviewed: {
      root: r.root,
      label: r.label,
      ...(r.focus ? { focus: r.focus } : {}),
      files: Object.keys(r.lines),
      added: r.added,
      removed: r.removed,
      notSent: r.notSent,
      ...(r.untrackedLeftOut ? { untrackedLeftOut: r.untrackedLeftOut } : {}),
    },
    minAgreement: o.minAgreement,
    answered: o.answered,
    reviewers: o.answers.map((a, i) => {
      const job = o.views[i]!.record;
      return {
        job_id: a.reviewer.id,
        model: a.reviewer.model,
        agent: a.reviewer.agent,
        state: job.state,
        answered: a.ok,
        ...(a.ok
          ? {
            findings: a.findings.length,
            dropped: a.dropped,
            malformed: a.malformed,
            ...(a.repaired ? { repaired: a.repaired } : {}),
          }
          : { reason: a.reason }),
        ...(job.usage
          ? { tokens: { input: job.usage.inputTokens, output: job.usage.outputTokens } }
          : {}),
        ...(job.startedAt !== undefined && job.endedAt !== undefined
          ? { seconds: (job.endedAt - job.startedAt) / 1000 }
          : {}),
      };
    }),
    findings: o.findings.map(findingJson),
    belowAgreement: o.below.map(findingJson),
  };
}
