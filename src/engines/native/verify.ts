/**
 * A job's verification on the native engine: each `verify` command runs through the very
 * runner the delegate's Bash uses (sandbox/run_shell.ts), with the same directories, protections,
 * limits and environment, so the check can do nothing the delegate could not. The commands
 * are noted in the job's transcript as the server's, apart from the model's words.
 */
import { failureText } from "../../errors.ts";
import { join } from "node:path";
import { collectGuardIdentities } from "../../guard/identities.ts";
import { noteOf, refusedRun, VERIFY_KEEP_CHARS } from "../check_runs.ts";
import type { CheckResult, CheckRun, VerifySpec } from "../types.ts";
import { TRANSCRIPT_FILE } from "./folder.ts";
import { JsonlWriter } from "./jsonl_writer.ts";
import type { SandboxLimits } from "../sandbox_limits.ts";
import { type SandboxMode, type ShellRunner, shellRunner } from "./sandbox/shell_runner.ts";
import { beginTurnChanges } from "../tree/turn_changes.ts";
import { runShell } from "./sandbox/run_shell.ts";
import { watchShell } from "./sandbox/shell_watch.ts";
import { turnScope, type TurnScopeConfig } from "./turn_scope.ts";
import type { SandboxToolchains } from "./sandbox/bwrap_args.ts";
import { JOB_CACHE_DIR, toolchainView } from "../../guard/toolchains.ts";

export interface NativeVerifyConfig extends TurnScopeConfig {
  sandbox: SandboxMode;
  sandboxLimits?: SandboxLimits;
  sandboxRunDir?: string;
  /** Credential stores remembered by identity (guard/known_stores.ts). */
  storesDir?: string;
  allowSecretFiles?: readonly string[];
  gitCacheDir?: string;
  /** The server's environment: the user's PATH, HOME and toolchain locations. */
  parentEnv?: Record<string, string | undefined>;
  toolchainPaths?: readonly string[];
}

/**
 * The user's toolchains as a turn's or check's commands see them (src/guard/toolchains.ts),
 * with the job's cache folder: the same for the delegate's Bash and for `verify`, so that a
 * check's build reuses what the delegate's built.
 */
export async function toolchainsFor(
  config: Pick<NativeVerifyConfig, "parentEnv" | "toolchainPaths" | "protect">,
  roots: readonly string[],
  jobDir: string,
): Promise<SandboxToolchains> {
  const view = await toolchainView({
    env: config.parentEnv ?? {},
    extra: config.toolchainPaths ?? [],
    serverDirs: config.protect ?? [],
    roots,
  });
  return { view, cacheDir: join(jobDir, JOB_CACHE_DIR) };
}

/** Runs `spec.commands` in the delegate's sandbox, stopping at the first that fails. */
export async function verifyNative(
  spec: VerifySpec,
  config: NativeVerifyConfig,
): Promise<CheckResult> {
  const first = spec.commands[0] ?? "";
  const scope = await turnScope(
    { cwd: spec.cwd, options: { addDirs: spec.addDirs }, worktree: spec.worktree },
    config,
  );
  const transcript = new JsonlWriter(join(spec.dir, TRANSCRIPT_FILE));
  const done = async (result: CheckResult) => {
    for (const run of result.runs) transcript.push({ kind: "text", text: noteOf(spec, run) });
    await transcript.flush().catch(() => {});
    return result;
  };
  if ("refused" in scope) {
    return await done({ passed: false, runs: [refusedRun(first, scope.refused)] });
  }
  const { cwd, roots, protect } = scope;
  const guard = await collectGuardIdentities(roots, {
    allowSecretFiles: config.allowSecretFiles ?? [],
    gitObjects: { cacheDir: config.gitCacheDir },
  });
  const runner = shellRunner(config.sandbox, undefined, {
    ...(config.sandboxLimits ? { limits: config.sandboxLimits } : {}),
    ...(config.sandboxRunDir ? { runDir: config.sandboxRunDir } : {}),
  });
  if (runner.kind === "refused") {
    return await done({ passed: false, runs: [refusedRun(first, failureText(runner.problem))] });
  }
  if (runner.kind === "bwrap") {
    runner.toolchains = await toolchainsFor(config, roots, spec.dir);
    if (config.storesDir) runner.storesDir = config.storesDir;
  }
  // The same preparation as a turn that may run Bash: nested repositories, credential stores
  // and protected files under other names are found and mounted as for the delegate.
  const changes = await beginTurnChanges(roots, { walk: true });
  try {
    watchShell(runner, changes, spec.worktree, roots, guard);
    return await done(await runChecks(spec, runner, cwd, roots, protect));
  } finally {
    changes.release();
  }
}

async function runChecks(
  spec: VerifySpec,
  runner: Exclude<ShellRunner, { kind: "refused" }>,
  cwd: string,
  roots: string[],
  protect: string[],
): Promise<CheckResult> {
  const runs: CheckRun[] = [];
  for (const command of spec.commands) {
    const result = await runShell(runner, {
      command,
      cwd,
      writable: roots,
      timeoutMs: spec.timeoutMs,
      signal: spec.signal,
      keepChars: VERIFY_KEEP_CHARS,
      hide: protect,
      ...(spec.onSpawn ? { onSpawn: spec.onSpawn } : {}),
    });
    const run: CheckRun = result.refused ? refusedRun(command, result.refused) : {
      command,
      exitCode: result.exitCode,
      signal: result.signal,
      durationMs: result.durationMs,
      timedOut: result.timedOut,
      output: result.output,
      droppedChars: result.droppedChars,
    };
    runs.push(run);
    if (run.exitCode !== 0 || spec.signal.aborted) break;
  }
  return {
    passed: runs.length === spec.commands.length && runs.every((r) => r.exitCode === 0),
    runs,
    ...(runner.kind === "unconfined" ? { confinement: `unconfined: ${runner.reason}` } : {}),
  };
}
