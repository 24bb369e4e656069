/** What the native engine is configured with (run.ts's createEngine builds it from settings). */
import type { ChatClientOptions } from "../../backends/chat_stream.ts";
import type { WorkdirPolicy } from "../../guard/workdirs.ts";
import type { SandboxLimits } from "../sandbox_limits.ts";
import type { SandboxMode } from "./sandbox/shell_runner.ts";

export interface NativeEngineConfig {
  sandbox: SandboxMode;
  /** What one sandboxed command may use; the defaults when absent. */
  sandboxLimits?: SandboxLimits;
  /** Where sandboxes of every server sharing this state dir coordinate (engines/mount_placeholders.ts). */
  sandboxRunDir?: string;
  /** Credential stores remembered by identity (guard/known_stores.ts). */
  storesDir?: string;
  /**
   * The server's environment: where the user's toolchains are found (verify.ts). A turn's
   * backend comes resolved, its key looked up by the job layer (TurnSpec.backend).
   */
  parentEnv: Record<string, string | undefined>;
  /**
   * The server's own settings and records (user config dir, stateDir, claudeConfigDir):
   * hidden from commands and refused to file tools even inside a writable dir.
   */
  protect?: readonly string[];
  /** Secret-looking file names the file tools may read anyway (`allowSecretFiles`). */
  allowSecretFiles?: readonly string[];
  /** Where jobs may work (guard/workdirs.ts); this process's home and no roots when absent. */
  workdirs?: WorkdirPolicy;
  /** Retry backoff, for tests and benchmarks. */
  backoffMs?: ChatClientOptions["backoffMs"];
  /**
   * The largest context (tokens) a job may use; 0 or absent = the model's own, believed up to
   * MAX_CLAIMED_CONTEXT_TOKENS.
   */
  maxContext?: number;
  /** Ollama's `keep_alive` for the model (e.g. "30m"); Ollama's default when empty. */
  keepAlive?: string;
  /** `<stateDir>/.worktrees`: a turn's cwd may be the worktree the server made there. */
  worktreesDir?: string;
  /** Where views of git stores without secret objects are kept (src/guard/git_secrets.ts). */
  gitCacheDir?: string;
  /** Folders commands may read besides the toolchains on PATH (`toolchainPaths`). */
  toolchainPaths?: readonly string[];
}
