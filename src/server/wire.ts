/**
 * The server's tools and job layer, wired onto a connected shell (shell.ts): settings read,
 * state dir prepared, tools registered. `serve` loads this module after connecting, so that
 * `initialize` is answered without it (issue 34, item 3); the in-process test scene
 * (tests/support/in_process_scene.ts) wires its server here too.
 */
import { dirname } from "node:path";
import type { WorkdirPolicy } from "../guard/workdirs.ts";
import { prepareStateDir } from "../jobs/job_folder.ts";
import { settleWithin } from "../platform/sleep.ts";
import { formatProblems, loadSettings } from "../settings/load.ts";
import { type Runtime, type RuntimeLoader, runtimeLoader } from "../jobs/runtime.ts";
import type { BackgroundPrune } from "../jobs/background_prune.ts";
import { registerTools } from "./tools.ts";
import { ElicitationAsker } from "./permission_prompt.ts";
import { userClaudeDir } from "../agents/claude_user_dir.ts";
import type { ServerShell } from "./shell.ts";

/** The whole shutdown must finish within 5 s of the client leaving. */
const SHUTDOWN_LIMIT_MS = 4000;
/** After `initialize`: when the job layer loads and recovers the jobs of dead servers. */
const BACKGROUND_DELAY_MS = 500;
/** Pruning starts this much later still, so that it never competes with start-up. */
const PRUNE_DELAY_MS = 1500;

/** Where a server runs: what `serve` takes from its process, given whole. */
export interface ServerPlace {
  env: Record<string, string>;
  /** The server's working directory: the cwd of delegates whose call names none. */
  cwd: string;
  home: string;
  /** One line for the operator (stderr under `serve`). */
  log: (line: string) => void;
  /** How often blocking calls report progress; tool_deps.ts PROGRESS_MS when absent. */
  progressMs?: number;
}

/** The MCP server's tools and job layer, registered on its shell. */
export interface WiredServer {
  runtime: RuntimeLoader;
  /**
   * A moment after `initialize`: the job layer loads, then, in the background, jobs of servers
   * that died are interrupted and their delegates stopped, each engine's start-up work done
   * (the native engine removes the sandbox placeholders they left), finished jobs older than
   * retainDays pruned, and without a configured
   * default model (it then depends on what Ollama serves) delegate_start's description names
   * the one in force.
   */
  startBackground(): void;
  /**
   * Stops every running delegate (recording each as interrupted) within the shutdown limit,
   * the background work, and the server. Once; later calls get the first one's promise.
   */
  stop(why: string): Promise<void>;
}

/**
 * Registers the tools `place`'s settings offer on `shell` and opens it (the requests that
 * waited for them are handled). Undefined (after saying why) when the state dir is unusable:
 * the shell then stays closed to everything but `initialize`.
 */
export function wireServer(shell: ServerShell, place: ServerPlace): WiredServer | undefined {
  const { env, cwd: serverCwd, home, log } = place;
  const resolved = loadSettings({ env, cwd: serverCwd, home });
  for (const line of formatProblems(resolved.problems)) log(line);
  const s = resolved.settings;

  try {
    prepareStateDir(s.stateDir);
  } catch (e) {
    log(
      `Cannot use state dir ${s.stateDir}: ${
        (e as Error).message
      }. Set stateDir or OLLAMA_MCP_STATE_DIR`,
    );
    return undefined;
  }
  const { server, taskStore } = shell;
  const workdirs: WorkdirPolicy = { home, workspaceRoots: s.workspaceRoots };
  // A delegate's call that its permissions withhold is put to the person, when one can answer.
  const asker = new ElicitationAsker(server.server, {
    seconds: s.permissionAskSeconds,
    env,
    elicits2026: shell.clientElicits2026,
    log,
  });
  const runtime = runtimeLoader(
    {
      settings: s,
      env,
      serverCwd,
      userConfigDir: dirname(resolved.locations.userFile),
      workdirs,
    },
    log,
    { asker },
  );
  const tools = registerTools(server, {
    taskStore,
    resolved,
    serverCwd,
    claudeUserDir: userClaudeDir(env, home),
    workdirs,
    runtime: runtime.get,
    ...(place.progressMs !== undefined ? { progressMs: place.progressMs } : {}),
  });
  shell.open();

  let later: ReturnType<typeof setTimeout> | undefined;
  let background: Promise<BackgroundPrune | undefined> | undefined;
  let stopping: Promise<void> | undefined;
  return {
    runtime,
    startBackground() {
      later ??= setTimeout(() => {
        background = backgroundWork(runtime.get(), s.retainDays, (model) => {
          if (!stopping) tools.describeDefault(model);
        }, log).catch((e) => {
          log(`cannot load the job layer: ${(e as Error).message}`);
          return undefined;
        });
      }, BACKGROUND_DELAY_MS);
      (later as { unref?: () => void }).unref?.();
    },
    stop(why) {
      stopping ??= (async () => {
        clearTimeout(later);
        await settleWithin(shutdownJobs(runtime.started(), why, log), SHUTDOWN_LIMIT_MS, undefined);
        (await background)?.stop();
        await server.close().catch(() => {});
      })();
      return stopping;
    },
  };
}

/** Stops every delegate of a job layer that was loaded, recording each as interrupted. */
async function shutdownJobs(
  runtime: Promise<Runtime> | undefined,
  why: string,
  log: (line: string) => void,
): Promise<void> {
  if (!runtime) return;
  const { manager } = await runtime;
  const running = manager.runningCount;
  if (running > 0) log(`${why}: stopping ${running} running delegate(s)`);
  await manager.shutdown(`the ${why}`);
}

/**
 * Recovers the jobs of dead servers, starts the engines' start-up work, schedules pruning, and
 * hands `describe` the default model in force when none is configured (and Ollama can say).
 * Resolves once all but the scheduled pruning is done, with that pruning.
 */
async function backgroundWork(
  loading: Promise<Runtime>,
  retainDays: number,
  describe: (model: string) => void,
  log: (line: string) => void,
): Promise<BackgroundPrune> {
  const [rt, { startBackgroundSweep }, { startBackgroundPrune }, { startEngineWork }] =
    await Promise.all([
      loading,
      import("../jobs/orphan_recovery.ts"),
      import("../jobs/background_prune.ts"),
      import("../engines/registry.ts"),
    ]);
  const recovered = startBackgroundSweep(() => rt.manager.recoverOrphans(), log, 0);
  // After the recovery, which stops whatever a dead server's jobs still run.
  const engineWork = startEngineWork(rt.settings, log, recovered);
  const prune = startBackgroundPrune(rt.store, { ...rt.settings, retainDays }, log, PRUNE_DELAY_MS);
  if (!rt.settings.defaultModel) {
    const model = await rt.catalog.defaultModel().catch(() => undefined);
    if (model) describe(model);
  }
  await engineWork;
  return prune;
}
