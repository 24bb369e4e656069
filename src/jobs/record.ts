import * as is from "../platform/shape.ts";
import { isEngine } from "../engines/registry.ts";
import { EFFORTS, PERMISSION_MODES } from "../settings/types.ts";
import { wholeUsage } from "./spend/usage_bounds.ts";

export const JOB_STATES = [
  "queued",
  "running",
  "completed",
  "failed",
  "cancelled",
  "interrupted",
] as const;
export type JobState = typeof JOB_STATES[number];

/** States that end a job; nothing changes a record after it reaches one. */
export function isTerminal(state: JobState): boolean {
  return state !== "queued" && state !== "running";
}

/**
 * Failed and interrupted jobs are MCP errors everywhere: a failure returned as a successful
 * tool result reads to the orchestrator as work done.
 */
export function isErrorState(state: JobState): boolean {
  return state === "failed" || state === "interrupted";
}

/**
 * Read back whole and 0 or more: a record written before usage was counted (usage_bounds.ts)
 * may hold a backend's negative figures, which must not count as a credit.
 */
const usage = is.object({
  inputTokens: is.number(),
  outputTokens: is.number(),
  cacheReadTokens: is.number().default(0),
  cacheCreationTokens: is.number().default(0),
  numTurns: is.number(),
  durationMs: is.number(),
}).transform(wholeUsage);

/** One verification command as the server ran it (a round of `verify`). */
const checkRun = is.object({
  command: is.string(),
  exitCode: is.number().nullable(),
  signal: is.string().nullable().optional(),
  durationMs: is.number(),
  timedOut: is.boolean().optional(),
  refused: is.string().optional(),
  /** The end of its output, for the reply (the whole kept output is in `verify-<round>.log`). */
  tail: is.string().optional(),
});

/** What the server checks after a turn and how far it lets a job go. */
export const jobChecks = is.object({
  /** Shell commands the server runs itself once the delegate ends its turn. */
  verify: is.array(is.string()).optional(),
  /** Repair rounds after a failed verification (0-5). */
  verifyRounds: is.number().int().optional(),
  /** The job stops once it has used this many tokens (prompt and output). */
  budgetTokens: is.number().optional(),
  /** The job stops once it has cost this much, by the pricing table. */
  budgetUsd: is.number().optional(),
});
export type JobChecks = is.Infer<typeof jobChecks>;

/** A review's folder holds its review file (JOB_FILES.review); a task's holds none. */
export const JOB_KINDS = ["task", "review"] as const;
export type JobKind = (typeof JOB_KINDS)[number];

/**
 * Whether the job's folder may hold a review file, so that its reply must look for one. A
 * record that names its kind says; one written before `kind` was recorded says nothing, and
 * then only a job run as an agent may be a review (every reviewer runs as one).
 */
export function mayHoldReview(record: Pick<JobRecord, "kind" | "agent">): boolean {
  return record.kind === undefined ? record.agent !== undefined : record.kind === "review";
}

/** The process that owns a live job: its pid and a token that changes if the pid is reused. */
const owner = is.object({ pid: is.number().int(), startTime: is.string() });

/** `job.json`, the durable record of one turn. Additive changes only. */
export const jobRecordSchema = is.object({
  format: is.literal(1),
  id: is.string(),
  sessionId: is.string(),
  turn: is.number().int().min(1),
  /** One of the engine table's (engines/registry.ts): the product's, or one a test registered. */
  engine: is.string().refine(isEngine, (name) => `"${name}" is not an engine`),
  /** Native engine: the backend name; absent = the Ollama at baseUrl. */
  backend: is.string().optional(),
  /**
   * The endpoint of its backend the turn was placed on (and ran on, after any move), how many
   * endpoints the backend's pool had then, and every move: from the session's previous
   * endpoint at the start, or off an endpoint that failed mid-turn.
   */
  endpoint: is.object({
    url: is.string(),
    poolSize: is.number().int().min(1),
    moves: is.array(is.object({ from: is.string(), to: is.string(), reason: is.string() }))
      .optional(),
  }).optional(),
  model: is.string(),
  cwd: is.string(),
  state: is.enumOf(JOB_STATES),
  createdAt: is.number(),
  startedAt: is.number().optional(),
  endedAt: is.number().optional(),
  parentJobId: is.string().optional(),
  /** The named agent whose preset and system prompt the job runs with. */
  agent: is.string().optional(),
  /**
   * What the job is: a delegate's task, or a review (whose folder holds review.json, read for
   * its reply). Absent from records written before the field (see mayHoldReview).
   */
  kind: is.enumOf(JOB_KINDS).optional(),
  /** The id of the repository the job works in (repo_id.ts), for the quality ledger. */
  repo: is.string().optional(),
  /**
   * The project of the Claude Code session that started it through a tool call (the server's
   * own directory): its result is unread there until it reaches the orchestrator (unread.ts).
   * Absent for jobs started from a terminal (reviews, the gate).
   */
  project: is.string().optional(),
  /** Why the model was chosen when the call asked for `auto` (auto_route.ts). */
  modelChoice: is.string().optional(),
  /** Models the job may still move to when its backend fails, in order (an agent's fallback). */
  fallback: is.array(is.string()).optional(),
  /**
   * Of the job's model and fallback models, those that run on Ollama's cloud as the server
   * judged them when the session started: by name, or because Ollama lists them as cloud models
   * (`remote_host`), which a name does not always say. The `where:` line reads it.
   */
  cloudModels: is.array(is.string()).optional(),
  /** The moves it made: from which model to which, and the failure that made it move. */
  fallbacks: is.array(is.object({ from: is.string(), to: is.string(), reason: is.string() }))
    .optional(),
  promptPreview: is.string(),
  options: is.object({
    permissionMode: is.enumOf(PERMISSION_MODES),
    allowedTools: is.array(is.string()).optional(),
    disallowedTools: is.array(is.string()).optional(),
    appendSystemPrompt: is.string().optional(),
    maxTurns: is.number().int().optional(),
    addDirs: is.array(is.string()),
    /** Native one-shot: files read server-side into the prompt. */
    files: is.array(is.string()).optional(),
    effort: is.enumOf(EFFORTS).optional(),
  }),
  /** Whether the engine created its session, so a follow-up can resume it. */
  sessionCreated: is.boolean().default(false),
  owner: owner.optional(),
  child: owner.optional(),
  exitCode: is.number().nullable().optional(),
  signal: is.string().nullable().optional(),
  errorText: is.string().optional(),
  usage: usage.optional(),
  toolCalls: is.number().int().default(0),
  /** Of toolCalls, how many the model wrote as text and the engine recovered. */
  toolCallsRecovered: is.number().int().optional(),
  /** Times older conversation was shortened to fit the context (native engine). */
  contextElisions: is.number().int().optional(),
  /** What the orchestrator must not miss (a cut prompt...): `warning:` lines. */
  warnings: is.array(is.string()).optional(),
  /**
   * How far the last turn's commands were confined when not fully (`sandbox:` line): "off
   * (bubblewrap is missing: ...)", "partial (socat is missing: ...)". Absent when they were.
   */
  sandbox: is.string().optional(),
  /**
   * The credential stores and secret files the last turn's sandbox hid in the job's
   * directories (the first MAX_HIDDEN_KEPT, jobs/turn_sink.ts): `hidden:` line.
   */
  hidden: is.array(is.string()).optional(),
  /** Hidden paths past those named. */
  hiddenMore: is.number().int().optional(),
  permissionDenials: is.array(is.object({ tool: is.string(), detail: is.string() })).default([]),
  /**
   * Permission questions put to the person (permission_asks.ts): the tool, exactly what it
   * would do, the answer (allow once, allow for this job, deny) and how it came.
   */
  permissionAsks: is.array(is.object({
    tool: is.string(),
    detail: is.string(),
    answer: is.enumOf(["once", "job", "deny"]),
    by: is.string(),
  })).optional(),
  effectivePermissionMode: is.string().optional(),
  /** Every command Bash ran, with its real exit code (as the server or Claude Code saw it). */
  commands: is.array(is.object({
    command: is.string(),
    exitCode: is.number().nullable(),
    signal: is.string().nullable().optional(),
    durationMs: is.number(),
    refused: is.string().optional(),
    /** Commands in it that failed while a later one set its exit code. */
    masked: is.array(is.object({ command: is.string(), exitCode: is.number() })).optional(),
    /** Masked failures past those listed, counted only. */
    maskedMore: is.number().int().optional(),
  })).optional(),
  /** Files the job created or changed (the first MAX_CHANGED_KEPT of them). */
  changedFiles: is.array(is.string()).optional(),
  /** Changed files past those named. */
  changedFilesMore: is.number().int().optional(),
  /** Why the changed files may not be all the job changed, when they may not be. */
  changedFilesPartial: is.string().optional(),
  /**
   * The server looked for every file the job's turns could change (its own view of the
   * directories, or, when no command could run, the file tools that write): no changed files
   * then means none (`files: none`), not that nobody looked. Absent for a turn that could
   * change nothing or did not get as far as its end.
   */
  changesTracked: is.boolean().optional(),
  /**
   * isolation "worktree": the session's own git worktree and branch (jobs/worktree/). Where
   * it goes is set when the job starts; gitDir and base once its first turn made it; head,
   * diffStat and patch after each turn.
   */
  worktree: is.object({
    /** The top level of the user's checkout it was made from. */
    repo: is.string(),
    path: is.string(),
    branch: is.string(),
    includeUncommitted: is.boolean().optional(),
    gitDir: is.string().optional(),
    /** The commit the delegate's work starts from: HEAD, or the commit of carried changes. */
    base: is.string().optional(),
    /** Secret-looking file names the user allows (`allowSecretFiles`), at the session's start. */
    allowSecretFiles: is.array(is.string()).optional(),
    /** When `base` holds carried changes: the checkout's HEAD below it, and its diff stat. */
    carried: is.object({ from: is.string(), stat: is.string() }).optional(),
    head: is.string().optional(),
    diffStat: is.string().optional(),
    patch: is.string().optional(),
    /** What the turn's commit left in the worktree: repositories (`sub/`), host-run paths, secrets. */
    leftOut: is.array(is.string()).optional(),
  }).optional(),
  /** What the server checks after the turn (verify) and the job's budgets. */
  checks: jobChecks.optional(),
  /**
   * The verification's evidence: one entry per check the server ran (the first after the
   * delegate's turn, then one after each repair round), the verdict of the last, and why the
   * repair rounds ended when they ended before a pass.
   */
  verification: is.object({
    rounds: is.array(is.object({ passed: is.boolean(), runs: is.array(checkRun) })),
    verdict: is.enumOf(["passed", "failed", "not-run"]),
    /** Why no (further) check or repair ran: the cap, no progress, a repeated failure... */
    stopped: is.string().optional(),
    /** How the commands ran when not in the sandbox ("unconfined: ..."). */
    confinement: is.string().optional(),
    /**
     * Files the check runs (jobs/checks/check_inputs.ts) that the delegate changed, in this job or an
     * earlier turn of its session (`turn`); `part` of a manifest (`"scripts"` of package.json).
     */
    changedCheck: is.array(is.object({
      path: is.string(),
      part: is.string().optional(),
      turn: is.number().int().optional(),
    })).optional(),
    /** Such files past those named. */
    changedCheckMore: is.number().int().optional(),
    /** Why the delegate may have changed what the check runs unseen. */
    changedCheckUnknown: is.string().optional(),
  }).optional(),
  /** Claims of the final text the evidence contradicts (claims.ts). */
  claims: is.array(is.object({ kind: is.string(), claim: is.string(), reason: is.string() }))
    .optional(),
  /** The record was read from a folder's `result.json` alone: it has no `job.json`. */
  legacy: is.boolean().optional(),
});
export type JobRecord = is.Infer<typeof jobRecordSchema>;

/**
 * A finished job's `result.json`: its outcome (state, usage, exit code, times) in a small
 * shape that stays the same while job.json's grows, for scripts that read a job's end. It is
 * also all a folder written by claude-ollama-delegate-mcp holds, and reads back as a record.
 */
export function resultSummary(job: JobRecord): Record<string, unknown> {
  return {
    id: job.id,
    sessionId: job.sessionId,
    turn: job.turn,
    model: job.model,
    cwd: job.cwd,
    state: job.state,
    isError: isErrorState(job.state) || job.state === "cancelled",
    usage: job.usage
      ? {
        inputTokens: job.usage.inputTokens,
        outputTokens: job.usage.outputTokens,
        numTurns: job.usage.numTurns,
        durationMs: job.usage.durationMs,
        cacheReadTokens: job.usage.cacheReadTokens,
        cacheCreationTokens: job.usage.cacheCreationTokens,
      }
      : null,
    exitCode: job.exitCode ?? null,
    errorText: job.errorText ?? null,
    startedAt: job.startedAt ?? job.createdAt,
    endedAt: job.endedAt ?? null,
  };
}

const resultSummarySchema = is.object({
  id: is.string(),
  sessionId: is.string(),
  turn: is.number().int().min(1).default(1),
  model: is.string().default(""),
  cwd: is.string().default(""),
  // Every state: a summary of ours reads back as well as one written with four states.
  state: is.enumOf(JOB_STATES),
  usage: is.object({
    inputTokens: is.number(),
    outputTokens: is.number(),
    numTurns: is.number(),
    durationMs: is.number(),
  }).nullable().optional(),
  exitCode: is.number().nullable().optional(),
  errorText: is.string().nullable().optional(),
  startedAt: is.number(),
  endedAt: is.number().nullable().optional(),
});

/**
 * The record of a folder that holds a `result.json` and no `job.json` (as
 * claude-ollama-delegate-mcp wrote them): a user who switches binaries keeps their history.
 */
export function recordFromResultSummary(raw: unknown, prompt: string): JobRecord | undefined {
  const parsed = resultSummarySchema.safeParse(raw);
  if (!parsed.success) return undefined;
  const r = parsed.data;
  return {
    format: 1,
    id: r.id,
    sessionId: r.sessionId,
    turn: r.turn,
    engine: "claude",
    model: r.model,
    cwd: r.cwd,
    // A summary-only job left "running" cannot still run: the server that wrote it kept its
    // jobs in memory only, and no record of ours names a live owner.
    state: r.state === "running" || r.state === "queued" ? "interrupted" : r.state,
    createdAt: r.startedAt,
    startedAt: r.startedAt,
    ...(r.endedAt ? { endedAt: r.endedAt } : {}),
    promptPreview: prompt.slice(0, 200),
    options: { permissionMode: "auto", addDirs: [] },
    sessionCreated: true,
    ...(r.exitCode !== undefined ? { exitCode: r.exitCode } : {}),
    ...(r.errorText ? { errorText: r.errorText } : {}),
    ...(r.usage
      ? { usage: wholeUsage({ ...r.usage, cacheReadTokens: 0, cacheCreationTokens: 0 }) }
      : {}),
    toolCalls: 0,
    permissionDenials: [],
    legacy: true,
  };
}
