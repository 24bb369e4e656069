import { homedir } from "node:os";
import { dirname } from "node:path";
import process from "node:process";
import { setTimeout as delay } from "node:timers/promises";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { WorkdirPolicy } from "../guard/workdirs.ts";
import { prepareStateDir } from "../jobs/job_folder.ts";
import { currentEnv, isTty, isWindows, selfCommand } from "../platform/runtime.ts";
import { formatProblems, loadSettings } from "../settings/load.ts";
import { SERVER_NAME, VERSION } from "../version.ts";
import { JobTaskStore, TASKS_CAPABILITY } from "./run_tool.ts";
import { type Runtime, runtimeLoader } from "../jobs/runtime.ts";
import { Revision2026Transport } from "./mcp_2026_07_28.ts";
import { CappedStdioTransport } from "./stdio_transport.ts";
import { registerTools } from "./tools.ts";

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

/** Runs the MCP server on stdio until the client goes away or a signal arrives. */
export async function serve(): Promise<number> {
  if (isTty("stdin")) log(terminalHint());
  const serverCwd = process.cwd();
  const env = currentEnv();
  const resolved = loadSettings({ env, cwd: serverCwd });
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
    log("server exiting with code 1: no usable state dir");
    return 1;
  }
  const workdirs: WorkdirPolicy = { home: homedir(), workspaceRoots: s.workspaceRoots };
  const runtime = runtimeLoader({
    settings: s,
    env,
    serverCwd,
    userConfigDir: dirname(resolved.locations.userFile),
    workdirs,
  }, log);
  const taskStore = new JobTaskStore();
  const server = new McpServer({ name: SERVER_NAME, version: VERSION }, {
    capabilities: { tasks: TASKS_CAPABILITY },
    taskStore,
  });
  const tools = registerTools(server, {
    taskStore,
    resolved,
    serverCwd,
    workdirs,
    runtime: runtime.get,
  });

  // MCP 2026-07-28 (server/discover, delegate_run as a task) around the SDK's 2025 server.
  const transport = new Revision2026Transport(
    new CappedStdioTransport(process.stdin, process.stdout, { log }),
    { tasks: taskStore, log },
  );
  let stopping: Promise<number> | undefined;
  const stop = (why: string, code = 0): Promise<number> => {
    stopping ??= (async () => {
      // Every exit says why on stderr: a server that vanishes silently cannot be debugged.
      log(`stopping: ${why}`);
      await Promise.race([
        shutdownJobs(runtime.started(), why),
        delay(SHUTDOWN_LIMIT_MS),
      ]);
      await server.close().catch(() => {});
      return code;
    })();
    return stopping;
  };
  const done = new Promise<number>((resolve) => {
    const finish = (why: string, code = 0) => void stop(why, code).then(resolve);
    const stack = (e: unknown) => e instanceof Error ? e.stack ?? e.message : String(e);
    // A stray rejection concerns one promise; the server and its running delegates go on.
    process.on("unhandledRejection", (e) => log(`unhandled promise rejection: ${stack(e)}`));
    process.on("uncaughtException", (e) => finish(`uncaught error: ${stack(e)}`, 1));
    process.stdin.once("end", () => finish("client closed stdin"));
    process.stdin.once("close", () => finish("client closed stdin"));
    transport.onclose = () => finish("MCP transport closed");
    // EPIPE and the like: the client is gone and nothing more can be answered.
    process.stdout.once("error", (e) => finish(`stdout failed (${(e as Error).message})`));
    const signals: NodeJS.Signals[] = isWindows ? ["SIGINT"] : ["SIGINT", "SIGTERM", "SIGHUP"];
    for (const signal of signals) process.once(signal, () => finish(`server received ${signal}`));
  });
  await server.connect(transport);
  // A moment after `initialize` is answered, the job layer loads. Then, in the background:
  // jobs of servers that died are interrupted and their delegates stopped, and the sandbox
  // placeholders they left in projects removed; finished jobs
  // older than retainDays are pruned; and without a configured default model (it then
  // depends on what Ollama serves), delegate_start's description names the one in force.
  const later = setTimeout(() => {
    backgroundWork(runtime.get(), s.retainDays).then((defaultModel) => {
      if (defaultModel) tools.describeDefault(defaultModel);
    }).catch((e) => log(`cannot load the job layer: ${(e as Error).message}`));
  }, BACKGROUND_DELAY_MS);
  (later as { unref?: () => void }).unref?.();
  const code = await done;
  log(`server exiting with code ${code}`);
  // Pending reads of stdin or timers of finished work must not keep the process up.
  process.exit(code);
}

/** Stops every delegate of a job layer that was loaded, recording each as interrupted. */
async function shutdownJobs(runtime: Promise<Runtime> | undefined, why: string): Promise<void> {
  if (!runtime) return;
  const { manager } = await runtime;
  const running = manager.runningCount;
  if (running > 0) log(`${why}: stopping ${running} running delegate(s)`);
  await manager.shutdown(`the ${why}`);
}

/**
 * Recovers the jobs of dead servers, schedules pruning, and resolves with the default
 * model in force when none is configured (undefined when one is, or Ollama cannot say).
 */
async function backgroundWork(
  loading: Promise<Runtime>,
  retainDays: number,
): Promise<string | undefined> {
  const [rt, { startBackgroundSweep }, { startBackgroundPrune }, { startEngineWork }] =
    await Promise.all([
      loading,
      import("../jobs/orphan_recovery.ts"),
      import("../jobs/retention.ts"),
      import("../engines/registry.ts"),
    ]);
  const recovered = startBackgroundSweep(() => rt.manager.recoverOrphans(), log, 0);
  // After the recovery, which stops whatever a dead server's jobs still run.
  void startEngineWork(rt.settings, log, recovered);
  startBackgroundPrune(rt.store, retainDays, log, PRUNE_DELAY_MS);
  if (rt.settings.defaultModel) return undefined;
  return await rt.catalog.defaultModel().catch(() => undefined);
}
