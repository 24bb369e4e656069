import { failureLine, type FailureWord, type TurnFailure } from "./backend_failures.ts";
import type { Effort, PermissionMode, Settings } from "../settings/types.ts";
import type { WorkdirPolicy } from "../guard/workdirs.ts";
import type { TurnWorktree } from "../guard/worktree_scope.ts";
import type { ResolvedBackend } from "../settings/backends.ts";

/** One line of what a delegate did, kept small: the server renders it. */
export type Activity =
  | { kind: "tool"; name: string; detail: string }
  | { kind: "text"; text: string }
  | { kind: "error"; text: string };

/**
 * One entry of a job's transcript, engine-independent, for paging through what a delegate
 * did (`delegate_transcript`). The native engine writes these as `transcript.jsonl`.
 */
export type TranscriptEntry =
  | { kind: "text"; text: string }
  | {
    kind: "tool_call";
    id: string;
    name: string;
    input: unknown;
    /**
     * The format the model wrote this call in as text ("hermes", "qwen3-coder"...), when the
     * engine recovered it from the reply's text rather than getting a structured call.
     */
    recovered?: string;
    /**
     * Parameters of the call that Claude Code's tool of this name takes and ours does not
     * (`description` on Bash): the call ran without them (native/tools/claude_params.ts).
     */
    ignored?: string[];
    /**
     * Names of a call written as text that were read as the tool's own: `"cmd -> command"`,
     * `"bash -> Bash"` (native/text_calls/aliases.ts).
     */
    mapped?: string[];
  }
  | { kind: "tool_result"; id: string; name?: string; text: string; isError: boolean };

/**
 * A command an engine ran for the delegate, as the server measured it (native Bash) or Claude
 * Code reported it (claude engine), not as the model claims.
 */
export interface CommandRun {
  command: string;
  /** null when a signal or the tool's timeout ended it. */
  exitCode: number | null;
  signal?: string | null;
  durationMs: number;
  /** Set when the command never ran (sandbox refused, spawn failed). */
  refused?: string;
  /**
   * Commands in it that failed while a later one set the exit code (`npm test; echo done`,
   * `npm test | tee log`), as the shell's traps saw them; absent when none did.
   */
  masked?: Array<{ command: string; exitCode: number }>;
  /** Masked failures past those listed, counted only. */
  maskedMore?: number;
}

/** A tool call the delegate was not allowed to make. */
export interface PermissionDenial {
  tool: string;
  detail: string;
}

/** Token and turn counts as the engine reported them. */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheCreationTokens: number;
  numTurns: number;
  durationMs: number;
}

/** Restrictions of a turn; a follow-up inherits every one unless the call overrides it. */
export interface TurnOptions {
  permissionMode: PermissionMode;
  allowedTools?: string[];
  disallowedTools?: string[];
  appendSystemPrompt?: string;
  maxTurns?: number;
  addDirs: string[];
  /** Native one-shot: files read server-side into the prompt. */
  files?: string[];
  /** How hard the model may think; the backend's default when absent. */
  effort?: Effort;
}

/** What an engine needs to run one turn. */
export interface TurnSpec {
  jobId: string;
  sessionId: string;
  turn: number;
  /** Continue an existing engine session rather than create one. */
  resume: boolean;
  model: string;
  cwd: string;
  /**
   * Set when cwd lies in the git worktree the server made for this job under its state dir:
   * the engine accepts it as a working directory and lets git read the repository's `.git`.
   */
  worktree?: TurnWorktree;
  options: TurnOptions;
  /** The job folder; the engine writes its transcript here. */
  dir: string;
  promptPath: string;
  /**
   * The backend the turn runs on, resolved once by the job layer (its key looked up by name in
   * the server's environment, for this backend's endpoints alone): the engine keeps no table of
   * its own. Absent only where the job layer was given no backends (tests of the job layer with
   * engines that reach none).
   */
  backend?: TurnBackend;
  /**
   * The endpoint of the backend the job layer placed the turn on (its pool's choice, with a
   * slot held there); absent = the backend's own URL.
   */
  endpoint?: TurnEndpoint;
  /** The folder of the turn this one continues, when there is one. */
  previousDir?: string;
}

/**
 * A turn's backend as the job layer found it: resolved, or a name the settings no longer have
 * (they changed since the job started), with the names they do have, for the engine's refusal.
 */
export type TurnBackend = ResolvedBackend | { unknown: string; configured: string[] };

/**
 * The endpoint a turn runs on, and how the engine tells the job layer what it met there. The
 * job layer keeps the endpoint's health and slot; the engine only reports and asks.
 */
export interface TurnEndpoint {
  /** Where the turn's requests go now. */
  readonly url: string;
  /** Whether the backend has more than one endpoint, so that the turn can move. */
  readonly pooled: boolean;
  /** Whether the server found `url` down since (a probe failed): the next request moves. */
  isDown(): boolean;
  /**
   * `url` failed (`reason`: no connection, a 5xx): it is marked down, its slot goes back, and
   * the turn waits for a slot on another endpoint of the pool that is up. Gives its URL, or
   * the job's error when none is left (of kind `backend_unreachable` when every endpoint is
   * down).
   */
  move(reason: string): Promise<{ url: string } | { errorText: string; failure?: FailureWord }>;
  /** `url` answered 429 asking to wait `retryAfterMs`: new sessions go elsewhere meanwhile. */
  throttled(retryAfterMs: number): void;
  /** `url` stopped answering while the turn ran (the claude engine's watch): mark it down. */
  down(reason: string): void;
}

/**
 * A permission a delegate was not given, for the person at the orchestrating client to decide
 * (issue 31, item 3). Only for what a permission mode or an allow rule withholds: what stays
 * refused whatever the mode (host-run paths, secret files, credential stores, paths outside the
 * job's directories) is refused by the engine without asking.
 */
export interface PermissionQuestion {
  /** The tool: Bash, Edit, Write... */
  tool: string;
  /** Exactly what it would do: the command, or the path. */
  detail: string;
  /** Why it needs a yes: "permission mode manual", "not among allowed_tools Bash(npm test)". */
  reason: string;
}

/** The person's answer: allow this call, allow the tool for the rest of the job, or deny. */
export interface PermissionDecision {
  allow: boolean;
  /** What the delegate is told when it is denied (no answer in time, denied by the person). */
  message: string;
}

/** Callbacks through which an engine reports progress into the job record. */
export interface TurnSink {
  activity(activity: Activity): void;
  /** A tool call; `recovered` when the model wrote it as text and the engine recovered it. */
  toolCall(info?: { recovered?: boolean }): void;
  /**
   * Something the orchestrator must not miss about this turn, shown as a `warning:` line (for
   * example: the backend cut the prompt).
   */
  warning?(text: string): void;
  /** Older conversation was shortened to fit the model's context (native engine). */
  contextElided?(count: number): void;
  /**
   * The turn's commands are not fully confined, and why (`off (...)`, `partial (...)`); not
   * called when they are. Shown on every reply of the job as a `sandbox:` line.
   */
  sandbox?(text: string): void;
  /**
   * The credential stores and secret files the turn's sandbox hides in the job's directories
   * (guard/hidden_list.ts), as the turn starts; an empty list when none. A `hidden:` line. An
   * engine that hides more as the turn goes on calls it again at the end; the last list counts.
   */
  hidden?(paths: readonly string[]): void;
  sessionStarted(info: { permissionMode?: string; model?: string }): void;
  /**
   * Present when a person can be asked for a permission the delegate was not given (an
   * orchestrating client that can ask, not print mode): asks, and resolves with the answer,
   * which the job's evidence records. Absent: such calls are denied, as always.
   */
  ask?(question: PermissionQuestion, signal?: AbortSignal): Promise<PermissionDecision>;
  childStarted(pid: number): void;
  /** A command the delegate ran (Bash), with its real exit code. */
  commandRun?(run: CommandRun): void;
  /** A file the engine's tools created or changed. */
  fileChanged?(path: string): void;
  /**
   * One model response's tokens, as soon as they are known and before the tools it asks for run:
   * what a job's budget is checked against while the turn runs. Called again with the same `id`
   * when more of that response is known (it replaces the earlier report). The job layer bounds
   * what the backend reported by the server's own estimates (jobs/spend/usage_bounds.ts), and the
   * turn's outcome usage by what its responses allow.
   */
  response?(tokens: ResponseTokens): void;
  /** Why the files reported by fileChanged may not be all the turn changed. */
  changesPartial?(why: string): void;
  /**
   * The server looked for every file the turn could change, and fileChanged named what it
   * found: none reported then means none changed. Not called for a turn in which nothing
   * could change (no Bash, no tool that writes) or that ended before the look.
   */
  changesTracked?(): void;
}

/** A turn's token counts so far. */
export interface RunningUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheCreationTokens: number;
}

/** One model response of a turn: what its backend reported, and the server's own estimates. */
export interface ResponseTokens {
  /** Tells the turn's responses apart (a message id, a request number). */
  id: string;
  /** As the backend reported them, unchecked: negative, fractional or absurd numbers included. */
  reported: RunningUsage;
  /**
   * The tokens of the request as the server estimates them (models/tokens.ts, characters / 4):
   * of what it sent (native), or of what it saw the turn send (claude: Claude Code's prompt
   * as measured, the task and the conversation so far in its stream).
   */
  requestTokens: number;
  /**
   * The request also carried what the server did not see, so `requestTokens` says nothing of
   * its upper end: the earlier turns of a resumed Claude Code session, a subagent's prompt.
   */
  requestUnseen?: boolean;
  /** The same estimate of the reply read so far: its text, thinking and tool calls. */
  replyTokens: number;
}

/** How a turn ended, as the engine saw it. The job layer decides cancelled/timed out. */
export interface TurnOutcome {
  ok: boolean;
  resultText: string;
  errorText?: string;
  usage?: Usage;
  exitCode: number | null;
  signal: string | null;
  permissionDenials: PermissionDenial[];
  /** HTTP status of an API error the engine reported (410 = model retired). */
  apiErrorStatus?: number;
  /**
   * The kind of a failure the backend or the model's context caused, as data: the job layer
   * decides on it (jobs/turn_attempts.ts), and `errorText` starts with its word for readers.
   */
  failure?: FailureWord;
}

/**
 * The outcome of a turn that failed before or without a model's answer: a failure of a known
 * kind (worded by failureLine) or a job error of no kind.
 */
export function failedTurn(error: string | TurnFailure, apiErrorStatus?: number): TurnOutcome {
  return {
    ok: false,
    resultText: "",
    ...(typeof error === "string"
      ? { errorText: error }
      : { errorText: failureLine(error), failure: error.kind }),
    exitCode: null,
    signal: null,
    permissionDenials: [],
    ...(apiErrorStatus !== undefined ? { apiErrorStatus } : {}),
  };
}

/** What an engine needs to run a job's verification commands (`verify`) after a turn. */
export interface VerifySpec {
  jobId: string;
  /** The turn's working directory (the job's worktree when isolated), as the turn had it. */
  cwd: string;
  worktree?: TurnWorktree;
  /** The turn's add_dirs: writable to the commands exactly as to the delegate's Bash. */
  addDirs: string[];
  /** Shell commands, run one after another; the first that fails ends the check. */
  commands: readonly string[];
  /** The time limit of each command. */
  timeoutMs: number;
  /** Aborted when the job is cancelled or times out: the running command is stopped. */
  signal: AbortSignal;
  /** The job folder: the engine notes the check in its transcript there. */
  dir: string;
  /** Which check of the job this is (1 for the first), for the transcript. */
  round: number;
  onSpawn?: (pid: number) => void;
}

/** One verification command as the server ran it. */
export interface CheckRun {
  command: string;
  /** null when a signal, the time limit or a refusal ended or prevented it. */
  exitCode: number | null;
  signal: string | null;
  durationMs: number;
  timedOut: boolean;
  /** Set when the command never ran (no sandbox here, the job's files could not be guarded). */
  refused?: string;
  /** The last characters of its output (stdout and stderr as they came), at most keepChars. */
  output: string;
  /** Characters of output dropped from the front. */
  droppedChars: number;
}

/** A verification: every command run (up to the first failure) and how they were confined. */
export interface CheckResult {
  passed: boolean;
  runs: CheckRun[];
  /**
   * How the commands ran, when not as confined as a sandboxed delegate's Bash ("unconfined:
   * the sandbox setting is off"); undefined when they ran in the sandbox.
   */
  confinement?: string;
}

/** A turn in flight. */
export interface RunningTurn {
  done: Promise<TurnOutcome>;
  /** Stops the whole process tree: SIGTERM, then SIGKILL after `graceMs`. */
  stop(graceMs: number): Promise<void>;
}

/** Facts a turn's folder holds about a turn that ended without its server watching. */
export interface TurnFacts {
  toolCalls: number;
  sessionCreated: boolean;
  permissionMode?: string;
}

/** What `jobs tail` shows of one line of an engine's activity file, before it is worded. */
export type LiveEvent =
  | { kind: "init"; model?: string; permissionMode?: string }
  | { kind: "tool"; name: string; detail: string }
  | { kind: "text"; text: string }
  | { kind: "error"; text: string }
  /** What a tool gave back (when the engine records it). */
  | { kind: "result"; text: string }
  /**
   * Output of a command still running, as it came: whole lines (when the engine can show it:
   * the native engine runs its commands itself; Claude Code shows a command's output only in
   * its result).
   */
  | { kind: "output"; text: string }
  /** The delegate's run ended here (the engine's own end event). */
  | { kind: "end" };

/**
 * How an engine's files in a job folder are read back. Each engine owns the files it writes
 * there and is the only code that parses them: the job layer, the server and the terminal
 * ask through this. Loading it must stay cheap (no loop, no tools).
 */
export interface JobFolderReader {
  /** The file, in the job folder, of JSON lines that record what the delegate did. */
  readonly activityFile: string;
  /**
   * Whether that file carries a running command's output as it comes (`output` LiveEvents),
   * so that `jobs tail` need not say a quiet command shows its output only when it ends.
   */
  readonly runningOutput?: boolean;
  /** The newest `limit` activities recorded in a job folder. */
  recentActivity(dir: string, limit: number): Promise<Activity[]>;
  /** What a job folder says about a turn whose server died. */
  turnFacts(dir: string): Promise<TurnFacts>;
  /**
   * A reader of the activity file's lines as transcript entries: undefined for a line that
   * is not a record (skipped), an empty list for one that holds no entry. Fresh per pass
   * over a file: it may keep state from line to line.
   */
  transcriptReader(): (line: string) => TranscriptEntry[] | undefined;
  /** A reader of the activity file's lines as `jobs tail` follows them. */
  liveReader(): (line: string) => LiveEvent[];
}

export interface Engine {
  readonly name: string;
  start(spec: TurnSpec, sink: TurnSink): Promise<RunningTurn>;
  /** The newest `limit` activities recorded in a job folder. */
  recentActivity(dir: string, limit: number): Promise<Activity[]>;
  /** What a job folder says about a turn whose server died. */
  turnFacts(dir: string): Promise<TurnFacts>;
  /**
   * Runs a job's verification commands itself, under exactly the confinement the delegate's
   * Bash has on this engine (sandbox, no network, environment allowlist, limits), never as the
   * host; notes them in the job's transcript. Never throws for a command's own failure.
   */
  verify(spec: VerifySpec): Promise<CheckResult>;
}

/** What the server hands every engine it creates: its settings and where it runs. */
export interface EngineSetup {
  settings: Settings;
  /** The server's environment: the source of a delegate's allowlisted variables and keys. */
  env: Record<string, string | undefined>;
  /** The server's working directory: where a configured binary path is resolved. */
  serverCwd: string;
  /** The folder of the user's settings file: delegates may not read or write it. */
  userConfigDir: string;
  /** Where delegates may work (workdirs.ts). */
  workdirs: WorkdirPolicy;
}
