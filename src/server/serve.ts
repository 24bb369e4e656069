import { homedir } from "node:os";
import { dirname } from "node:path";
import process from "node:process";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { WorkdirPolicy } from "../guard/workdirs.ts";
import { prepareStateDir } from "../jobs/job_folder.ts";
import { currentEnv, isTty, isWindows, selfCommand } from "../platform/runtime.ts";
import { settleWithin } from "../platform/sleep.ts";
import { formatProblems, loadSettings } from "../settings/load.ts";
import { SERVER_NAME, VERSION } from "../version.ts";
import { JobTaskStore, TASKS_CAPABILITY } from "./run_tool.ts";
import { type Runtime, type RuntimeLoader, runtimeLoader } from "../jobs/runtime.ts";
import { Revision2026Transport } from "./transport/revision_2026.ts";
import { CappedStdioTransport } from "./transport/stdio.ts";
import type { EarlyDiscover } from "./transport/early_discover.ts";
import type { BackgroundPrune } from "../jobs/background_prune.ts";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { registerTools } from "./tools.ts";
import { ElicitationAsker } from "./permission_prompt.ts";
import { userClaudeDir } from "../agents/claude_user_dir.ts";

/** The whole shutdown must finish within 5 s of the client leaving. */
const SHUTDOWN_LIMIT_MS = 4000;
/** After `initialize`: when the job layer loads and recovers the jobs of dead servers. */
const BACKGROUND_DELAY_MS = 500;
/** Pruning starts this much later still, so that it never competes with start-up. */
const PRUNE_DELAY_MS = 1500;

const log = (line: string) => process.stderr.write(`ollama-delegate: ${line}\n`);

/**
 * One line for a person who started the server by hand: otherwise it waits in silence for
 * JSON-RPC on stdin. Goes to stderr, since stdout is the MCP stream.
 */
export function terminalHint(command: string[] = selfCommand()): string {
  const safe = isWindows ? /^[\w@%+=:,./\\-]+$/ : /^[\w@%+=:,./-]+$/;
  const quote = (arg: string) =>
    safe.test(arg) ? arg : isWindows ? `"${arg}"` : `'${arg.replaceAll("'", `'\\''`)}'`;
  const quit = isWindows ? "Ctrl-Z then Enter, or Ctrl-C" : "Ctrl-D or Ctrl-C";
  return "this is an MCP server for Claude Code, waiting for JSON-RPC on stdin/stdout; " +
    `register it with: claude mcp add ollama --scope user -- ${command.map(quote).join(" ")} ` +
    `(Claude Code then starts it). Quit with ${quit}; ollama-delegate --help lists the ` +
    "terminal commands.";
}

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

/** The MCP server with its tools and job layer, not yet connected to any transport. */
export interface WiredServer {
  server: McpServer;
  runtime: RuntimeLoader;
  /**
   * Connects the server over `transport`, wrapped so that it also speaks MCP 2026-07-28
   * (server/discover, delegate_run as a task) around the SDK's 2025 server. `onclose` hears
   * the transport close (the SDK chains it before its own handler).
   */
  connect(transport: Transport, onclose?: () => void): Promise<void>;
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
 * Builds the server `serve` runs, for any transport: settings from `place`, the state dir
 * prepared, the tools registered. Undefined (after saying why) when the state dir is unusable.
 * The in-process test scene (tests/support/in_process_scene.ts) builds its server here too.
 */
export function wireServer(place: ServerPlace): WiredServer | undefined {
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
  const workdirs: WorkdirPolicy = { home, workspaceRoots: s.workspaceRoots };
  const taskStore = new JobTaskStore();
  const server = new McpServer({ name: SERVER_NAME, version: VERSION }, {
    capabilities: { tasks: TASKS_CAPABILITY },
    taskStore,
  });
  let wrapped: Revision2026Transport | undefined;
  // A delegate's call that its permissions withhold is put to the person, when one can answer.
  const asker = new ElicitationAsker(server.server, {
    seconds: s.permissionAskSeconds,
    env,
    elicits2026: () => wrapped?.clientElicits() ?? false,
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

  let later: ReturnType<typeof setTimeout> | undefined;
  let background: Promise<BackgroundPrune | undefined> | undefined;
  let stopping: Promise<void> | undefined;
  return {
    server,
    runtime,
    async connect(transport, onclose) {
      wrapped = new Revision2026Transport(transport, { tasks: taskStore, log });
      if (onclose) wrapped.onclose = onclose;
      await server.connect(wrapped);
    },
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

/**
 * Runs the MCP server on stdio until the client goes away or a signal arrives. `early` has read
 * stdin while this module loaded (and answered a first server/discover); its bytes come first.
 */
export async function serve(early?: EarlyDiscover): Promise<number> {
  if (isTty("stdin")) log(terminalHint());
  const wired = wireServer({ env: currentEnv(), cwd: process.cwd(), home: homedir(), log });
  if (!wired) {
    log("server exiting with code 1: no usable state dir");
    return 1;
  }
  const input = early?.handOver();
  const transport = new CappedStdioTransport(process.stdin, process.stdout, {
    log,
    ...(input ? { pending: input.pending } : {}),
  });
  let stopping: Promise<number> | undefined;
  const stop = (why: string, code = 0): Promise<number> => {
    stopping ??= (async () => {
      // Every exit says why on stderr: a server that vanishes silently cannot be debugged.
      log(`stopping: ${why}`);
      await wired.stop(why);
      return code;
    })();
    return stopping;
  };
  let finish!: (why: string, code?: number) => void;
  const done = new Promise<number>((resolve) => {
    finish = (why, code = 0) => void stop(why, code).then(resolve);
    const stack = (e: unknown) => e instanceof Error ? e.stack ?? e.message : String(e);
    // A stray rejection concerns one promise; the server and its running delegates go on.
    process.on("unhandledRejection", (e) => log(`unhandled promise rejection: ${stack(e)}`));
    process.on("uncaughtException", (e) => finish(`uncaught error: ${stack(e)}`, 1));
    process.stdin.once("end", () => finish("client closed stdin"));
    process.stdin.once("close", () => finish("client closed stdin"));
    // EPIPE and the like: the client is gone and nothing more can be answered.
    process.stdout.once("error", (e) => finish(`stdout failed (${(e as Error).message})`));
    const signals: NodeJS.Signals[] = isWindows ? ["SIGINT"] : ["SIGINT", "SIGTERM", "SIGHUP"];
    for (const signal of signals) process.once(signal, () => finish(`server received ${signal}`));
  });
  await wired.connect(transport, () => finish("MCP transport closed"));
  // Claude Code's discover probe: answered while loading, then the probe closes stdin.
  if (input?.ended) finish("client closed stdin");
  else wired.startBackground();
  const code = await done;
  log(`server exiting with code ${code}`);
  // Pending reads of stdin or timers of finished work must not keep the process up.
  process.exit(code);
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
