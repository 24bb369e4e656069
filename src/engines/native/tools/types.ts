/**
 * The contract between the native loop and its tools. Tool names and inputs follow Claude
 * Code's, so `allowed_tools`, `disallowed_tools` and permission modes mean the same for
 * both engines.
 */
import type { GuardIdentities } from "../../../guard/identities.ts";
import type { CommandRun } from "../../types.ts";

export type { CommandRun };

/** JSON Schema of a tool's input, kept compact: every byte is sent on every turn. */
export interface JsonSchema {
  type: "object";
  properties: Record<string, Record<string, unknown>>;
  required?: string[];
  additionalProperties?: boolean;
}

export interface ToolContext {
  /** The job's working directory, as a real path (symlinks resolved). */
  cwd: string;
  /** Real paths the file tools may touch: cwd first, then add_dirs. */
  roots: readonly string[];
  /**
   * Paths inside the roots that stay off limits (the server's settings and records), each as
   * written and as it resolves, also when it does not exist yet.
   */
  protect?: readonly string[];
  /** Secret-looking file names the user lets the file tools read (`allowSecretFiles`). */
  allowSecretFiles?: readonly string[];
  /** The turn's protected files by identity (src/guard/identities.ts); see ConfineScope. */
  guard?: GuardIdentities;
  /**
   * The user's path rules applied to a path as the file tools resolved it (symlinks followed):
   * why `tool` may not reach `real`, or undefined. `final` is false for directories on the way.
   */
  pathRefusal?(tool: string, real: string, final: boolean): string | undefined;
  /** Time one Grep may take before it stops and says so (default GREP_BUDGET_MS). */
  searchBudgetMs?: number;
  /** Aborted when the job is cancelled or times out. */
  signal: AbortSignal;
  /** Reports a file the tool created or changed (absolute real path). */
  fileChanged(path: string): void;
  /** Reports a command the Bash tool ran. */
  commandRun(run: CommandRun): void;
  /** Something the orchestrator must not miss (a `warning:` line of the reply). */
  warning?(text: string): void;
  /** Reports the pid of a command being started, so a server restart can stop it. */
  processStarted?(pid: number): void;
  /**
   * A running command's output as it comes (live_output.ts), for the job's activity file that
   * `jobs tail` follows; set per tool call.
   */
  output?(text: string): void;
  /**
   * What the model last saw of each file it read or wrote in this job, by real path
   * (read_state.ts); created on first use.
   */
  reads?: Map<string, { hash: string; size: number; mtimeMs: number }>;
}

export interface ToolResult {
  /** What the model sees. Every cut says so in the text. */
  text: string;
  isError?: boolean;
}

export type ToolName = "Read" | "Write" | "Edit" | "Glob" | "Grep" | "Bash";

export interface NativeTool {
  name: ToolName;
  /** Read-only tools are the only ones in plan, manual/default and dontAsk modes. */
  readOnly: boolean;
  /** One or two short sentences; small local models read this on every turn. */
  description: string;
  parameters: JsonSchema;
  /** Never throws for bad input or a refused path: returns an isError result instead. */
  run(input: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult>;
}

/**
 * Files above this are refused by every file tool: each is held whole in memory, and no model
 * context could take one anyway.
 */
export const MAX_FILE_BYTES = 8 * 1024 * 1024;
/** Read returns at most this many characters, with a hint for continuing. */
export const READ_MAX_CHARS = 50_000;
/** Bash keeps the last this many characters of output. */
export const BASH_KEEP_CHARS = 20_000;
