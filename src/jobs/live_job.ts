/** A job this process holds in memory, and the shapes the job manager hands out. */
import type { Telemetry, TraceParent } from "../telemetry/telemetry.ts";
import type { JobTrace } from "./job_trace.ts";
import type { Activity, RunningTurn, TurnOptions, TurnOutcome } from "../engines/types.ts";
import type { Price } from "../settings/types.ts";
import type { ProcessIdentity } from "../platform/process_identity.ts";
import type { EndpointHealth } from "../backends/endpoint_health.ts";
import type { PoolTable } from "./endpoints/endpoint_pool.ts";
import type { QueueDetail } from "./queue/endpoint_queues.ts";
import type { DailyBudgets } from "./spend/daily_budget.ts";
import {
  isTerminal,
  type JobChecks,
  type JobKind,
  type JobRecord,
  type JobState,
} from "./record.ts";
import type { CancelSource } from "./store.ts";
import type { PermissionAsker } from "./permission_asks.ts";

/** Activities kept in memory per live job; status shows at most 100. */
export const ACTIVITY_KEEP = 100;
/** The most of one activity's text (or a tool's detail) kept; status shows at most 400. */
export const ACTIVITY_TEXT_KEEP = 1000;
/**
 * SIGTERM-to-SIGKILL grace for cancel and timeout: time for a delegate to end on its own and
 * write out what it holds, short enough that a cancel is answered while the caller waits.
 */
export const KILL_GRACE_MS = 3000;

export interface ManagerConfig {
  jobTimeoutMs: number;
  maxConcurrent: number;
  /**
   * The backends and their endpoints (pools), with each endpoint's limit; absent = jobs run
   * on their backend's own URL with this process's maxConcurrent only.
   */
  pools?: PoolTable;
  /** What the pools' endpoints are believed to be (up, down); one of its own when absent. */
  health?: EndpointHealth;
  /**
   * Where each endpoint's limit is shared with the user's other servers (`<stateDir>/.slots`).
   * Unset: limits of this process only.
   */
  slotsDir?: string;
  /** Daily budgets per backend: a new job past one is refused (daily_budget.ts). */
  dailyBudgets?: DailyBudgets;
  /** The user's pricing table: what a job's `budget_usd` is checked against. */
  pricing?: Readonly<Record<string, Price>>;
  /** How a person is asked for a permission a delegate was not given (server/); none: denied. */
  asker?: PermissionAsker;
  /** Called when a turn ends, for side effects such as remembering retired models. */
  onFinished?: (record: JobRecord, outcome: TurnOutcome) => Promise<void> | void;
  /** OpenTelemetry, when configured (telemetry/telemetry.ts); off when absent. */
  telemetry?: Telemetry;
  log?: (line: string) => void;
}

export interface NewTurn {
  prompt: string;
  engine: string;
  /** Native engine backend name; undefined = the Ollama at baseUrl. */
  backend?: string;
  model: string;
  cwd: string;
  options: TurnOptions;
  /** isolation "worktree" at a session's start: the checkout its worktree is made from. */
  isolation?: { repo: string; includeUncommitted: boolean; allowSecretFiles?: readonly string[] };
  /** The session's worktree (planned at start, carried by follow-ups). */
  worktree?: JobRecord["worktree"];
  /** The named agent the turn runs as. */
  agent?: string;
  /** A review (review/start.ts); a task when absent. */
  kind?: JobKind;
  /** What the orchestrator must know from the start (what of a project's agent was not used). */
  warnings?: string[];
  /** What the server checks after the turn (verify) and the job's budgets. */
  checks?: JobChecks;
  /** The repository's id (repo_id.ts), for the quality ledger. */
  repo?: string;
  /** The Claude Code session's project that started it by a tool call (unread.ts). */
  project?: string;
  /** Why `auto` chose the model. */
  modelChoice?: string;
  /** Models to move to when the backend fails, in order. */
  fallback?: string[];
  /** Of its model and fallback models, those that run on Ollama's cloud (record.ts). */
  cloudModels?: string[];
}

/** A job as the server renders it. */
export interface JobView {
  record: JobRecord;
  activities: Activity[];
  /** 1-based place in the queue, 0 when not queued here. */
  queuePosition: number;
  /** While it waits for its backend's shared slots: its place and who holds them. */
  queue?: QueueDetail;
}

/** Why this process stopped a job before its engine ended the turn. */
export type StopReason = "cancel" | "timeout" | "shutdown" | "slot-lost" | "budget";

/** A job this process queued or runs. Its record is the one truth, written through. */
export interface LiveJob {
  record: JobRecord;
  /** The trace context of the MCP request that started it (OpenTelemetry), when it sent one. */
  traceParent?: TraceParent;
  /** Its spans, while it runs with telemetry on (job_trace.ts). */
  trace?: JobTrace;
  activities: Activity[];
  turn?: RunningTurn;
  stopReason?: StopReason;
  /** Who cancelled it, when not this server's own client. */
  cancelledFrom?: CancelSource;
  /** How its backend's shared slot went to another job (stopReason "slot-lost"). */
  slotLost?: string;
  /** Which budget it passed, as its error says it (stopReason "budget"). */
  budgetExhausted?: string;
  /** Set while the job waits for an earlier turn of its session to end. */
  sessionWait?: AbortController;
  /** Called once the job knows where it stands: waiting (for a turn or a slot) or running. */
  placed: () => void;
  /** Resolves once `placed` was called. */
  isPlaced: Promise<void>;
  /**
   * The state readers see while the job's end is being recorded. The record in memory takes
   * its end state first; a reader that took it from there would read a result file not yet
   * written (an empty answer). Unset once result and record are on disk.
   */
  stateUntilRecorded?: JobState;
  /** Resolves once the job's end is recorded. */
  finished: Promise<void>;
  resolveFinished: () => void;
  /** Stops watching for cancel requests from other processes. */
  stopWatch?: () => void;
}

/**
 * An activity as a live job keeps it: its text cut to ACTIVITY_TEXT_KEEP. Finished jobs stay
 * in memory (FINISHED_KEEP of them) and a model's reply can be 4 million characters, so the
 * cut is a string of its own: V8 makes a slice share its source's characters, and a slice
 * of a reply would keep the whole reply alive.
 */
export function keptActivity(a: Activity): Activity {
  const cut = (s: string) =>
    s.length > ACTIVITY_TEXT_KEEP ? JSON.parse(JSON.stringify(s.slice(0, ACTIVITY_TEXT_KEEP))) : s;
  return a.kind === "tool" ? { ...a, detail: cut(a.detail) } : { ...a, text: cut(a.text) };
}

/** The record as readers may see it: not ended until its end is on disk. */
export function shownRecord(live: LiveJob): JobRecord {
  const state = live.stateUntilRecorded;
  return state === undefined ? live.record : { ...live.record, state };
}

/** Whether the job's end is recorded (the record and its result are on disk). */
export function hasEnded(live: LiveJob): boolean {
  return live.stateUntilRecorded === undefined && isTerminal(live.record.state);
}

export function liveJob(record: JobRecord): LiveJob {
  let resolveFinished!: () => void;
  const finished = new Promise<void>((r) => (resolveFinished = r));
  let placed!: () => void;
  const isPlaced = new Promise<void>((r) => (placed = r));
  return { record, activities: [], finished, resolveFinished, placed, isPlaced };
}

/** The record of a new turn, queued, owned by `owner`. */
export function newRecord(
  turn: NewTurn,
  session: { sessionId: string; turn: number; parentJobId?: string },
  id: string,
  owner: ProcessIdentity,
): JobRecord {
  return {
    format: 1,
    id,
    sessionId: session.sessionId,
    turn: session.turn,
    engine: turn.engine,
    ...(turn.backend !== undefined ? { backend: turn.backend } : {}),
    model: turn.model,
    cwd: turn.cwd,
    state: "queued",
    createdAt: Date.now(),
    ...(session.parentJobId ? { parentJobId: session.parentJobId } : {}),
    ...(turn.agent !== undefined ? { agent: turn.agent } : {}),
    kind: turn.kind ?? "task",
    ...(turn.repo !== undefined ? { repo: turn.repo } : {}),
    ...(turn.project !== undefined ? { project: turn.project } : {}),
    ...(turn.modelChoice !== undefined ? { modelChoice: turn.modelChoice } : {}),
    ...(turn.fallback?.length ? { fallback: [...turn.fallback] } : {}),
    ...(turn.cloudModels?.length ? { cloudModels: [...turn.cloudModels] } : {}),
    ...(turn.warnings?.length ? { warnings: [...turn.warnings] } : {}),
    promptPreview: turn.prompt.slice(0, 200),
    options: turn.options,
    ...(turn.checks && Object.keys(turn.checks).length > 0 ? { checks: turn.checks } : {}),
    ...(turn.worktree ? { worktree: turn.worktree } : {}),
    sessionCreated: false,
    owner,
    toolCalls: 0,
    permissionDenials: [],
  };
}
