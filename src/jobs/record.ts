import { z } from "zod";
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
const usage = z.object({
  inputTokens: z.number(),
  outputTokens: z.number(),
  cacheReadTokens: z.number().default(0),
  cacheCreationTokens: z.number().default(0),
  numTurns: z.number(),
  durationMs: z.number(),
}).transform(wholeUsage);

/** One verification command as the server ran it (a round of `verify`). */
const checkRun = z.object({
  command: z.string(),
  exitCode: z.number().nullable(),
  signal: z.string().nullable().optional(),
  durationMs: z.number(),
  timedOut: z.boolean().optional(),
  refused: z.string().optional(),
  /** The end of its output, for the reply (the whole kept output is in `verify-<round>.log`). */
  tail: z.string().optional(),
});

/** What the server checks after a turn and how far it lets a job go. */
export const jobChecks = z.object({
  /** Shell commands the server runs itself once the delegate ends its turn. */
  verify: z.array(z.string()).optional(),
  /** Repair rounds after a failed verification (0-5). */
  verifyRounds: z.number().int().optional(),
  /** The job stops once it has used this many tokens (prompt and output). */
  budgetTokens: z.number().optional(),
  /** The job stops once it has cost this much, by the pricing table. */
  budgetUsd: z.number().optional(),
});
export type JobChecks = z.infer<typeof jobChecks>;

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
const owner = z.object({ pid: z.number().int(), startTime: z.string() });

/** `job.json`, the durable record of one turn. Additive changes only. */
export const jobRecordSchema = z.object({
  format: z.literal(1),
  id: z.string(),
  sessionId: z.string(),
  turn: z.number().int().min(1),
  /** One of the engine table's (engines/registry.ts): the product's, or one a test registered. */
  engine: z.string().refine(isEngine, { error: (i) => `"${String(i.input)}" is not an engine` }),
  /** Native engine: the backend name; absent = the Ollama at baseUrl. */
  backend: z.string().optional(),
  /**
   * The endpoint of its backend the turn was placed on (and ran on, after any move), how many
   * endpoints the backend's pool had then, and every move: from the session's previous
   * endpoint at the start, or off an endpoint that failed mid-turn.
   */
  endpoint: z.object({
    url: z.string(),
    poolSize: z.number().int().min(1),
    moves: z.array(z.object({ from: z.string(), to: z.string(), reason: z.string() }))
      .optional(),
  }).optional(),
  model: z.string(),
  cwd: z.string(),
  state: z.enum(JOB_STATES),
  createdAt: z.number(),
  startedAt: z.number().optional(),
  endedAt: z.number().optional(),
  parentJobId: z.string().optional(),
  /** The named agent whose preset and system prompt the job runs with. */
  agent: z.string().optional(),
  /**
   * What the job is: a delegate's task, or a review (whose folder holds review.json, read for
   * its reply). Absent from records written before the field (see mayHoldReview).
   */
  kind: z.enum(JOB_KINDS).optional(),
  /** The id of the repository the job works in (repo_id.ts), for the quality ledger. */
  repo: z.string().optional(),
  /**
   * The project of the Claude Code session that started it through a tool call (the server's
   * own directory): its result is unread there until it reaches the orchestrator (unread.ts).
   * Absent for jobs started from a terminal (reviews, the gate).
   */
  project: z.string().optional(),
  /** Why the model was chosen when the call asked for `auto` (auto_route.ts). */
  modelChoice: z.string().optional(),
  /** Models the job may still move to when its backend fails, in order (an agent's fallback). */
  fallback: z.array(z.string()).optional(),
  /**
   * Of the job's model and fallback models, those that run on Ollama's cloud as the server
   * judged them when the session started: by name, or because Ollama lists them as cloud models
   * (`remote_host`), which a name does not always say. The `where:` line reads it.
   */
  cloudModels: z.array(z.string()).optional(),
  /** The moves it made: from which model to which, and the failure that made it move. */
  fallbacks: z.array(z.object({ from: z.string(), to: z.string(), reason: z.string() })).optional(),
  promptPreview: z.string(),
  options: z.object({
    permissionMode: z.enum(PERMISSION_MODES),
    allowedTools: z.array(z.string()).optional(),
    disallowedTools: z.array(z.string()).optional(),
    appendSystemPrompt: z.string().optional(),
    maxTurns: z.number().int().optional(),
    addDirs: z.array(z.string()),
    /** Native one-shot: files read server-side into the prompt. */
    files: z.array(z.string()).optional(),
    effort: z.enum(EFFORTS).optional(),
  }),
  /** Whether the engine created its session, so a follow-up can resume it. */
  sessionCreated: z.boolean().default(false),
  owner: owner.optional(),
  child: owner.optional(),
  exitCode: z.number().nullable().optional(),
  signal: z.string().nullable().optional(),
  errorText: z.string().optional(),
  usage: usage.optional(),
  toolCalls: z.number().int().default(0),
  /** Of toolCalls, how many the model wrote as text and the engine recovered. */
  toolCallsRecovered: z.number().int().optional(),
  /** Times older conversation was shortened to fit the context (native engine). */
  contextElisions: z.number().int().optional(),
  /** What the orchestrator must not miss (a cut prompt...): `warning:` lines. */
  warnings: z.array(z.string()).optional(),
  /**
   * How far the last turn's commands were confined when not fully (`sandbox:` line): "off
   * (bubblewrap is missing: ...)", "partial (socat is missing: ...)". Absent when they were.
   */
  sandbox: z.string().optional(),
  permissionDenials: z.array(z.object({ tool: z.string(), detail: z.string() })).default([]),
  /**
   * Permission questions put to the person (permission_asks.ts): the tool, exactly what it
   * would do, the answer (allow once, allow for this job, deny) and how it came.
   */
  permissionAsks: z.array(z.object({
    tool: z.string(),
    detail: z.string(),
    answer: z.enum(["once", "job", "deny"]),
    by: z.string(),
  })).optional(),
  effectivePermissionMode: z.string().optional(),
  /** Every command Bash ran, with its real exit code (as the server or Claude Code saw it). */
  commands: z.array(z.object({
    command: z.string(),
    exitCode: z.number().nullable(),
    signal: z.string().nullable().optional(),
    durationMs: z.number(),
    refused: z.string().optional(),
    /** Commands in it that failed while a later one set its exit code. */
    masked: z.array(z.object({ command: z.string(), exitCode: z.number() })).optional(),
    /** Masked failures past those listed, counted only. */
    maskedMore: z.number().int().optional(),
  })).optional(),
  /** Files the job created or changed (the first MAX_CHANGED_KEPT of them). */
  changedFiles: z.array(z.string()).optional(),
  /** Changed files past those named. */
  changedFilesMore: z.number().int().optional(),
  /** Why the changed files may not be all the job changed, when they may not be. */
  changedFilesPartial: z.string().optional(),
  /**
   * The server looked for every file the job's turns could change (its own view of the
   * directories, or, when no command could run, the file tools that write): no changed files
   * then means none (`files: none`), not that nobody looked. Absent for a turn that could
   * change nothing or did not get as far as its end.
   */
  changesTracked: z.boolean().optional(),
  /**
   * isolation "worktree": the session's own git worktree and branch (jobs/worktree/). Where
   * it goes is set when the job starts; gitDir and base once its first turn made it; head,
   * diffStat and patch after each turn.
   */
  worktree: z.object({
    /** The top level of the user's checkout it was made from. */
    repo: z.string(),
    path: z.string(),
    branch: z.string(),
    includeUncommitted: z.boolean().optional(),
    gitDir: z.string().optional(),
    /** The commit the delegate's work starts from: HEAD, or the commit of carried changes. */
    base: z.string().optional(),
    /** Secret-looking file names the user allows (`allowSecretFiles`), at the session's start. */
    allowSecretFiles: z.array(z.string()).optional(),
    /** When `base` holds carried changes: the checkout's HEAD below it, and its diff stat. */
    carried: z.object({ from: z.string(), stat: z.string() }).optional(),
    head: z.string().optional(),
    diffStat: z.string().optional(),
    patch: z.string().optional(),
    /** What the turn's commit left in the worktree: repositories (`sub/`), host-run paths, secrets. */
    leftOut: z.array(z.string()).optional(),
  }).optional(),
  /** What the server checks after the turn (verify) and the job's budgets. */
  checks: jobChecks.optional(),
  /**
   * The verification's evidence: one entry per check the server ran (the first after the
   * delegate's turn, then one after each repair round), the verdict of the last, and why the
   * repair rounds ended when they ended before a pass.
   */
  verification: z.object({
    rounds: z.array(z.object({ passed: z.boolean(), runs: z.array(checkRun) })),
    verdict: z.enum(["passed", "failed", "not-run"]),
    /** Why no (further) check or repair ran: the cap, no progress, a repeated failure... */
    stopped: z.string().optional(),
    /** How the commands ran when not in the sandbox ("unconfined: ..."). */
    confinement: z.string().optional(),
    /**
     * Files the check runs (jobs/checks/check_inputs.ts) that the delegate changed, in this job or an
     * earlier turn of its session (`turn`); `part` of a manifest (`"scripts"` of package.json).
     */
    changedCheck: z.array(z.object({
      path: z.string(),
      part: z.string().optional(),
      turn: z.number().int().optional(),
    })).optional(),
    /** Such files past those named. */
    changedCheckMore: z.number().int().optional(),
    /** Why the delegate may have changed what the check runs unseen. */
    changedCheckUnknown: z.string().optional(),
  }).optional(),
  /** Claims of the final text the evidence contradicts (claims.ts). */
  claims: z.array(z.object({ kind: z.string(), claim: z.string(), reason: z.string() }))
    .optional(),
  /** The record was read from a folder's `result.json` alone: it has no `job.json`. */
  legacy: z.boolean().optional(),
});
export type JobRecord = z.infer<typeof jobRecordSchema>;

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

const resultSummarySchema = z.object({
  id: z.string(),
  sessionId: z.string(),
  turn: z.number().int().min(1).default(1),
  model: z.string().default(""),
  cwd: z.string().default(""),
  // Every state: a summary of ours reads back as well as one written with four states.
  state: z.enum(JOB_STATES),
  usage: z.object({
    inputTokens: z.number(),
    outputTokens: z.number(),
    numTurns: z.number(),
    durationMs: z.number(),
  }).nullable().optional(),
  exitCode: z.number().nullable().optional(),
  errorText: z.string().nullable().optional(),
  startedAt: z.number(),
  endedAt: z.number().nullable().optional(),
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
