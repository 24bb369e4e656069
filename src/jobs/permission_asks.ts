/**
 * Permission questions a delegate's calls raise, passed up to the person (issue 31, item 3).
 * An engine that meets a call its permission mode or allow rules withhold asks through its
 * sink (engines/types.ts `TurnSink.ask`); this module answers for the job: what an earlier
 * "allow for this job" covers, a cap on questions per job, and the record's evidence of every
 * answer. The person is asked through the server's `PermissionAsker` (MCP elicitation,
 * server/permission_prompt.ts), which jobs/ only calls.
 */
import type { PermissionDecision, PermissionQuestion } from "../engines/types.ts";
import { escapeLine } from "../platform/plain_text.ts";
import type { JobRecord } from "./record.ts";

/** Allow this call, allow the tool for the rest of the job, or deny. */
export type PersonAnswer = "once" | "job" | "deny";

/** How the answer came: the person's choice, or why nobody chose. */
export type AnswerSource =
  | "person"
  | "declined"
  | "cancelled"
  | "timeout"
  | "unavailable"
  /** An earlier "allow for this job" covered it. */
  | "earlier"
  /** The job asked MAX_ASKS_PER_JOB times already. */
  | "limit"
  /** The job stopped (cancelled, timed out, its Claude Code gone) before an answer came. */
  | "stopped";

export interface AskOutcome {
  answer: PersonAnswer;
  by: AnswerSource;
}

/** What the person is shown besides the question: which job asks, and where it works. */
export interface AskContext extends PermissionQuestion {
  jobId: string;
  model: string;
  cwd: string;
  agent?: string;
}

/** The server's means of asking the person; absent or unable, nothing is asked. */
export interface PermissionAsker {
  /** Whether a person can be asked now (a client that can, not print mode, not turned off). */
  canAsk(): boolean;
  /**
   * Asks, and resolves with the answer; never rejects (a failure is an answer: deny). When
   * `signal` aborts first the question is withdrawn from the person and the answer is a deny.
   */
  ask(question: AskContext, signal?: AbortSignal): Promise<AskOutcome>;
  /** How long the person has to answer, for messages. */
  readonly seconds: number;
}

/**
 * Questions one job may put to the person; past them its calls are denied without asking, so a
 * delegate cannot bury the person in questions.
 */
export const MAX_ASKS_PER_JOB = 20;
/** The most of a command or path the record keeps per question. */
const DETAIL_KEPT = 500;

/** The record's evidence of one question: what was asked, the answer and how it came. */
export type AskRecord = NonNullable<JobRecord["permissionAsks"]>[number];

/**
 * The job's `ask`: answers from an earlier "allow for this job" of the same tool, else asks the
 * person (at most MAX_ASKS_PER_JOB times a job), and records every answer in `record`.
 * `waiting` is told while the person is asked, for the job's activity.
 */
export function jobAsk(
  record: JobRecord,
  asker: PermissionAsker,
  waiting: (text: string) => void,
): (question: PermissionQuestion, signal?: AbortSignal) => Promise<PermissionDecision> {
  return async (q, signal) => {
    const asks = (record.permissionAsks ??= []);
    const keep = (outcome: AskOutcome) => {
      asks.push({
        tool: q.tool,
        detail: q.detail.slice(0, DETAIL_KEPT),
        answer: outcome.answer,
        by: outcome.by,
      });
      return decision(outcome, q, asker.seconds);
    };
    if (asks.some((a) => a.tool === q.tool && a.answer === "job" && a.by !== "earlier")) {
      return keep({ answer: "job", by: "earlier" });
    }
    const asked = asks.filter((a) => a.by !== "earlier" && a.by !== "limit").length;
    if (asked >= MAX_ASKS_PER_JOB) return keep({ answer: "deny", by: "limit" });
    waiting(`waiting for the person to allow ${q.tool}: ${q.detail}`);
    const outcome = await asker.ask({
      ...q,
      jobId: record.id,
      model: record.model,
      cwd: record.cwd,
      ...(record.agent !== undefined ? { agent: record.agent } : {}),
    }, signal);
    return keep(outcome);
  };
}

/** The engine's answer, and what the delegate is told when it is denied. */
function decision(o: AskOutcome, q: PermissionQuestion, seconds: number): PermissionDecision {
  if (o.answer !== "deny") return { allow: true, message: "" };
  const why: Record<AnswerSource, string> = {
    person: "the person denied it",
    declined: "the person declined to allow it",
    cancelled: "the person dismissed the question",
    timeout: `nobody answered within ${seconds} s`,
    unavailable: "nobody could be asked",
    earlier: "",
    limit: `this job already asked ${MAX_ASKS_PER_JOB} times`,
    stopped: "the job stopped before an answer came",
  };
  return {
    allow: false,
    message: `Permission to use ${q.tool} was denied: ${why[o.by]} (${q.reason}). Do the ` +
      "task without it, or say in your answer what you needed and why",
  };
}

const ANSWER_WORDS: Record<PersonAnswer, string> = {
  once: "allowed once",
  job: "allowed for this job",
  deny: "denied",
};

const SOURCE_WORDS: Record<AnswerSource, string> = {
  person: "",
  declined: " (declined)",
  cancelled: " (dismissed)",
  timeout: " (no answer in time)",
  unavailable: " (nobody to ask)",
  earlier: " (by an earlier answer)",
  limit: " (too many questions)",
  stopped: " (the job stopped first)",
};

/** The `asked:` line's value: every question and its answer; undefined for none. */
export function askedText(r: Pick<JobRecord, "permissionAsks">): string | undefined {
  const asks = r.permissionAsks ?? [];
  if (asks.length === 0) return undefined;
  const shown = asks.slice(0, 5).map((a) => {
    const detail = escapeLine(a.detail.trim());
    const cut = detail.length > 80 ? `${detail.slice(0, 79)}…` : detail;
    return `${a.tool}(${cut}) ${ANSWER_WORDS[a.answer]}${SOURCE_WORDS[a.by as AnswerSource] ?? ""}`;
  });
  const more = asks.length > 5 ? `, +${asks.length - 5} more` : "";
  return `${asks.length}: ${shown.join(", ")}${more}`;
}
