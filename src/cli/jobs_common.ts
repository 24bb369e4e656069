import process from "node:process";
import { JobManager } from "../jobs/manager.ts";
import type { JobState } from "../jobs/record.ts";
import { JobStore } from "../jobs/store.ts";
import { isValidId } from "../jobs/ids.ts";
import { currentEnv } from "../platform/runtime.ts";
import type { Settings } from "../settings/fields.ts";
import { formatProblems, loadSettings } from "../settings/load.ts";

/** A `jobs` failure the user caused or can fix: printed as one line. */
export class JobsUsageError extends Error {
  override name = "JobsUsageError";
  constructor(message: string, readonly exitCode = 2) {
    super(message);
  }
}

/** Where output goes and how it may look; tests pass their own. */
export interface JobsIo {
  out(text: string): void;
  err(text: string): void;
  /** Writes without a newline (live status lines). */
  write(text: string): void;
  /** Colour and live progress: only on a terminal and never with NO_COLOR. */
  fancy: boolean;
  /** Terminal width; undefined when not a terminal, where lines keep a fixed layout. */
  columns: number | undefined;
}

export function processIo(): JobsIo {
  const env = process.env;
  const tty = process.stdout.isTTY === true;
  return {
    out: (text) => void process.stdout.write(`${text}\n`),
    err: (text) => void process.stderr.write(`${text}\n`),
    write: (text) => void process.stdout.write(text),
    // https://no-color.org: any non-empty NO_COLOR turns colour off.
    fancy: tty && !env.NO_COLOR && env.TERM !== "dumb",
    columns: tty ? process.stdout.columns || 100 : undefined,
  };
}

/** ANSI styling that is a no-op when colour is off. */
export interface Style {
  bold(s: string): string;
  dim(s: string): string;
  state(state: JobState, text?: string): string;
}

export function styleFor(io: JobsIo): Style {
  const wrap = (code: string) => (s: string) => io.fancy ? `\x1b[${code}m${s}\x1b[0m` : s;
  const colours: Record<JobState, (s: string) => string> = {
    queued: wrap("36"),
    running: wrap("33"),
    completed: wrap("32"),
    failed: wrap("31"),
    cancelled: wrap("35"),
    interrupted: wrap("31"),
  };
  return {
    bold: wrap("1"),
    dim: wrap("2"),
    state: (state, text = state) => colours[state](text),
  };
}

/** The settings, store and a manager for reading records with recovery of dead owners. */
export interface JobsContext {
  settings: Settings;
  store: JobStore;
  /** No engines: it only reads, reconciles and lists. */
  manager: JobManager;
}

export function openContext(io: JobsIo): JobsContext {
  const resolved = loadSettings({ env: currentEnv(), cwd: process.cwd() });
  for (const line of formatProblems(resolved.problems)) io.err(`ollama-delegate: ${line}`);
  const settings = resolved.settings;
  const store = new JobStore(settings.stateDir);
  const manager = new JobManager(store, {}, {
    jobTimeoutMs: settings.jobTimeoutMs,
    maxConcurrent: settings.maxConcurrent,
  });
  return { settings, store, manager };
}

/**
 * A job named in full or by a unique prefix of at least 4 characters, as git does for
 * commits; ids are checked before any path is built from them.
 */
export async function resolveJobId(store: JobStore, ref: string | undefined): Promise<string> {
  if (ref === undefined || ref.trim() === "") throw new JobsUsageError("Missing job id");
  const wanted = ref.trim().toLowerCase();
  if (isValidId(wanted)) return wanted;
  if (!/^[0-9a-f-]{4,36}$/.test(wanted)) {
    throw new JobsUsageError(`"${ref}" is not a job id or the start of one`);
  }
  const matches = (await store.ids()).filter((id) => id.toLowerCase().startsWith(wanted));
  if (matches.length === 1) return matches[0]!.toLowerCase();
  if (matches.length === 0) {
    throw new JobsUsageError(`No job id starts with "${ref}" in ${store.stateDir}`, 1);
  }
  throw new JobsUsageError(
    `"${ref}" matches ${matches.length} jobs (${matches.slice(0, 3).join(", ")}…); ` +
      "give more of the id",
  );
}

/** "12.3s", "4m05s", "2h03m", "3d04h": short and stable. */
export function humanDuration(ms: number): string {
  const s = Math.max(0, ms) / 1000;
  if (s < 60) return `${s.toFixed(1)}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(Math.floor(s % 60)).padStart(2, "0")}s`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h${String(m % 60).padStart(2, "0")}m`;
  return `${Math.floor(h / 24)}d${String(h % 24).padStart(2, "0")}h`;
}

/** 950, 12.3k, 4.5M. */
export function compactCount(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/** Parses "90m", "12h", "7d", "2w" into milliseconds. */
export function parseAge(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(m|min|h|d|w)\s*$/i.exec(text);
  if (!m) {
    throw new JobsUsageError(
      `Cannot use age "${text}": write a number with m, h, d or w, like 12h, 7d or 30d`,
    );
  }
  const unit = m[2]!.toLowerCase();
  const factor = unit === "w"
    ? 604_800_000
    : unit === "d"
    ? 86_400_000
    : unit === "h"
    ? 3_600_000
    : 60_000;
  return Math.round(Number(m[1]) * factor);
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
  const flat = first.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, Math.max(1, max - 1))}…` : flat;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
