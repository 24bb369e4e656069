import { cutTo } from "../../platform/text_cut.ts";
import { homedir } from "node:os";
import process from "node:process";
import type { JobManager } from "../../jobs/manager.ts";
import type { RecoveryDeps } from "../../jobs/orphan_recovery.ts";
import type { JobProblem } from "../../jobs/errors.ts";
import { dailyBudgetText } from "../../jobs/spend/daily_budget_text.ts";
import { notLocalText } from "../../jobs/residency.ts";
import type { JobState } from "../../jobs/record.ts";
import { JobStore } from "../../jobs/store.ts";
import { candidateText, MIN_PREFIX, resolveJobRef } from "../../jobs/job_ref.ts";
import { type ColourFormat, colourWanted, paint } from "../../platform/colour.ts";
import { DURATION_EXAMPLES, formatElapsed, parseDuration } from "../../platform/duration.ts";
import { escapeLine } from "../../platform/plain_text.ts";
import { flattenLine } from "../../platform/plain_text.ts";
import { currentEnv, isTty } from "../../platform/runtime.ts";
import type { Settings } from "../../settings/types.ts";
import { formatProblems, loadSettings } from "../../settings/load.ts";

/** A `jobs` failure the user caused or can fix: printed as one line. */
export class JobsUsageError extends Error {
  override name = "JobsUsageError";
  constructor(message: string, readonly exitCode = 2) {
    super(message);
  }
}

/**
 * Where a terminal command's output goes, how it may look, and the environment it reads:
 * `jobs`, `stats` and `doctor` take it injected; tests pass their own.
 */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  /** Writes without a newline (live status lines). */
  write(text: string): void;
  /** Colour: by the one rule of platform/colour.ts (FORCE_COLOR, NO_COLOR, a terminal). */
  colour: boolean;
  /**
   * Live status lines redrawn in place: only on a terminal. NO_COLOR does not turn them off
   * (it is about colour only); `--no-status` does.
   */
  live: boolean;
  /** Terminal width; undefined when not a terminal, where lines keep a fixed layout. */
  columns: number | undefined;
  /** The environment, working directory and home the settings are read from. */
  env: Record<string, string>;
  cwd: string;
  home: string;
}

export function processIo(): CliIo {
  const env = process.env;
  const tty = isTty("stdout");
  // A dumb terminal shows escape sequences as text, so it gets neither.
  const capable = tty && env.TERM !== "dumb";
  return {
    out: (text) => void process.stdout.write(`${text}\n`),
    err: (text) => void process.stderr.write(`${text}\n`),
    write: (text) => void process.stdout.write(text),
    colour: colourWanted(env, tty),
    live: capable,
    columns: tty ? process.stdout.columns || 100 : undefined,
    env: currentEnv(),
    cwd: process.cwd(),
    home: homedir(),
  };
}

/** ANSI styling that is a no-op when colour is off. */
export interface Style {
  bold(s: string): string;
  dim(s: string): string;
  state(state: JobState, text?: string): string;
}

export function styleFor(io: CliIo): Style {
  const wrap = (format: ColourFormat) => (s: string) => paint(format, s, io.colour);
  const colours: Record<JobState, (s: string) => string> = {
    queued: wrap("cyan"),
    running: wrap("yellow"),
    completed: wrap("green"),
    failed: wrap("red"),
    cancelled: wrap("magenta"),
    interrupted: wrap("red"),
  };
  return {
    bold: wrap("bold"),
    dim: wrap("dim"),
    state: (state, text = state) => colours[state](text),
  };
}

/**
 * The settings, the store, what reads records with recovery of dead owners, and a manager.
 * A `jobs` process holds no job, so its reads are the manager's (manager.ts `list`, `page`)
 * without it: the listing loads none of the modules that run jobs (issue 34, item 4: the
 * `jobs` table at 10,000 jobs within 200 ms, start-up included).
 */
export interface JobsContext {
  settings: Settings;
  store: JobStore;
  /** No engines, no job held here: records are read, reconciled and listed. */
  recovery: RecoveryDeps;
  /** The manager (no engines), loaded on first use: it only reads, reconciles and lists. */
  manager(): Promise<JobManager>;
}

export function openContext(io: CliIo): JobsContext {
  const resolved = loadSettings({ env: io.env, cwd: io.cwd, home: io.home });
  for (const line of formatProblems(resolved.problems)) io.err(`ollama-delegate: ${line}`);
  const settings = resolved.settings;
  const store = new JobStore(settings.stateDir);
  let manager: Promise<JobManager> | undefined;
  return {
    settings,
    store,
    recovery: { store, engines: {}, liveRecord: () => undefined },
    manager: () =>
      manager ??= import("../../jobs/manager.ts").then(({ JobManager }) =>
        new JobManager(store, {}, {
          jobTimeoutMs: settings.jobTimeoutMs,
          maxConcurrent: settings.maxConcurrent,
        })
      ),
  };
}

/** What every "which job?" error ends with. */
const ID_HINT = "ollama-delegate jobs --all lists the ids";

/** The exit code of a job-layer error: 2 when the command line was wrong, else 1. */
export function jobProblemExitCode(p: JobProblem): number {
  return p.kind === "bad-job-ref" || p.kind === "ambiguous-job-prefix" ? 2 : 1;
}

/** The job layer's errors as a person at the terminal reads them. */
export function jobProblemText(p: JobProblem): string {
  switch (p.kind) {
    case "unknown-job":
      return `No job "${p.id.slice(0, 80)}" here. ${ID_HINT}`;
    case "unknown-session":
      return `No session "${p.id.slice(0, 80)}" here. ${ID_HINT}`;
    case "bad-job-ref": {
      const ref = escapeLine(p.ref.slice(0, 80));
      if (p.why === "empty") return `Missing job id. ${ID_HINT}`;
      return p.why === "too-short"
        ? `"${ref}" is too short: a job id prefix needs at least ${MIN_PREFIX} characters ` +
          `(the ID column shows 8). ${ID_HINT}`
        : `"${ref}" is not a job id: an id is a UUID (hex digits and dashes), and a prefix ` +
          `of one needs at least ${MIN_PREFIX} characters and must match a single job. ${ID_HINT}`;
    }
    case "unmatched-job-prefix": {
      const head = `No job id starts with "${escapeLine(p.prefix.slice(0, 80))}" in ${p.stateDir}`;
      if (p.jobs === 0) return `${head}: it holds no jobs`;
      return `${head}. The newest of its ${p.jobs} jobs: ` +
        `${p.newest.map(candidateText).join("; ")}. ${ID_HINT}`;
    }
    case "ambiguous-job-prefix":
      return `"${escapeLine(p.prefix)}" matches ${p.count} jobs (` +
        (p.count > p.matches.length ? `the newest ${p.matches.length}: ` : "") +
        `${p.matches.map(candidateText).join("; ")}); give more of the id`;
    case "cancel-pending":
      return `Asked server pid ${p.ownerPid ?? "?"} to cancel job ${p.id}, but it is still ` +
        `${p.state} after ${formatElapsed(p.waitedMs)}. The request stays in place; ` +
        `check again with ollama-delegate jobs show ${p.id.slice(0, 8)}`;
    case "needs-native":
      return p.what === "files"
        ? "Only the native engine reads files into the prompt: use --engine native"
        : `This engine cannot use ${p.what}: it always uses the Ollama at ${p.baseUrl}`;
    case "backend-api":
      return `The ${p.engine} engine needs a backend of kind ${p.kinds.join(" or ")} ` +
        `(Anthropic's Messages API); backend "${p.backend}" is of kind ${p.backendKind}. ` +
        "Use --engine native for it";
    case "unknown-backend":
      return `No backend "${p.name}" (configured: ${p.configured.join(", ")}). Add one with ` +
        "ollama-delegate config --backend <name>=<url>";
    case "no-model-for-backend":
      return `No model named for backend "${p.backend}", and no default model. Set one with ` +
        "ollama-delegate config --default-model <model>";
    case "model-not-allowed":
      return `Model "${p.model}" is not in the allowed list (${p.allowed.join(", ")}). ` +
        "Allow it with ollama-delegate config --allow <models>";
    case "daily-budget":
      return `${dailyBudgetText(p)}. Raise it in the user settings (dailyBudgetUsd, ` +
        "dailyBudgetTokens)";
    case "not-local": {
      const fix = p.role === "default"
        ? "Set a local default model (ollama-delegate config --default-model <a local model>)"
        : p.place === "cloud"
        ? "Name a local model (ollama-delegate models lists them)"
        : "Use a backend on this machine or a private network";
      const text = escapeLine(notLocalText(p));
      const head = text.charAt(0).toUpperCase() + text.slice(1);
      return `${head}. ${fix}, or let work leave this machine with ` +
        "ollama-delegate config --residency any";
    }
  }
}

/**
 * A job named in full or by a unique prefix of at least 4 characters, as git does for
 * commits (jobs/job_ref.ts: the same resolver as the tools'). `usage` is the command line
 * shown when the id is missing, e.g. "jobs show <id>". Other failures are JobErrors, worded
 * by jobProblemText.
 */
export async function resolveJobId(
  store: JobStore,
  ref: string | undefined,
  usage = "jobs <command> <id>",
): Promise<string> {
  if (ref === undefined || ref.trim() === "") {
    throw new JobsUsageError(`Missing job id: ollama-delegate ${usage}. ${ID_HINT}`);
  }
  return await resolveJobRef(store, ref);
}

/** Refuses arguments after the one a command takes, rather than ignoring them. */
export function noMoreArguments(command: string, extra: readonly string[]): void {
  if (extra.length > 0) {
    throw new JobsUsageError(
      `${command} takes one job id; unexpected "${extra[0]}". Run ollama-delegate jobs --help`,
    );
  }
}

/** "12.3s", "4m05s", "2h03m", "3d04h": short and stable. */
export function humanDuration(ms: number): string {
  const s = Math.max(0, ms) / 1000;
  if (s < 60) return formatElapsed(ms);
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(Math.floor(s % 60)).padStart(2, "0")}s`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h${String(m % 60).padStart(2, "0")}m`;
  return `${Math.floor(h / 24)}d${String(h % 24).padStart(2, "0")}h`;
}

/**
 * An age as a person writes it: "30d", "12h", "1d 6h", "90m", "2h 30m", "45s". Whole units
 * only; a remainder under a minute is dropped once the age is a minute or more.
 */
export function humanAge(ms: number): string {
  const totalS = Math.round(Math.max(0, ms) / 1000);
  if (totalS < 60) return `${totalS}s`;
  const totalM = Math.round(totalS / 60);
  // "90m" reads better than "1h 30m"; from two hours on, hours and minutes.
  if (totalM < 120 && totalM % 60 !== 0) return `${totalM}m`;
  const d = Math.floor(totalM / 1440);
  const h = Math.floor((totalM % 1440) / 60);
  const m = totalM % 60;
  return [d && `${d}d`, h && `${h}h`, m && `${m}m`].filter(Boolean).join(" ");
}

/** 950, 12.3k, 4.5M. */
export function compactCount(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/** An age for --older-than in milliseconds: a number with a unit, never a bare number. */
export function parseAge(text: string): number {
  const ms = parseDuration(text);
  if (ms === undefined) {
    throw new JobsUsageError(
      `Cannot use age "${text}": write a number with a unit, like ${DURATION_EXAMPLES}`,
    );
  }
  return ms;
}

/** A positive whole number from a flag. */
export function parseCount(flag: string, text: string | undefined, min = 1): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text.trim()) || Number(text) < min) {
    throw new JobsUsageError(`Cannot use --${flag} "${text}": write a whole number ≥ ${min}`);
  }
  return Number(text);
}

/** Text cut to `max` characters on one line. */
export function oneLine(text: string, max: number): string {
  const first = text.split("\n").find((l) => l.trim() !== "") ?? "";
  const flat = flattenLine(first);
  return cutTo(flat, Math.max(2, max));
}
