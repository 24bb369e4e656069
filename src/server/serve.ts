import { homedir } from "node:os";
import { dirname } from "node:path";
import process from "node:process";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { OllamaClient } from "../backends/ollama.ts";
import { createEngines, delegateFacts } from "../engines/registry.ts";
import type { EngineSetup } from "../engines/types.ts";
import type { WorkdirPolicy } from "../engines/workdirs.ts";
import { JobManager } from "../jobs/manager.ts";
import { ModelChoice } from "../jobs/model_choice.ts";
import { startBackgroundPrune } from "../jobs/retention.ts";
import { startBackgroundSweep } from "../jobs/sweep.ts";
import { JobStore } from "../jobs/store.ts";
import { ModelCatalog } from "../models/catalog.ts";
import { RetiredModels } from "../models/retired.ts";
import { currentEnv, isTty, isWindows, selfCommand } from "../platform/runtime.ts";
import { formatProblems, loadSettings } from "../settings/load.ts";
import { SERVER_NAME, VERSION } from "../version.ts";
import { JobTaskStore, TASKS_CAPABILITY } from "./run_tool.ts";
import { ModernEra } from "./modern_era.ts";
import { CappedStdioTransport } from "./stdio_transport.ts";
import { registerTools } from "./tools.ts";

/** The whole shutdown must finish within 5 s of the client leaving. */
const SHUTDOWN_LIMIT_MS = 4000;

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

  const store = new JobStore(s.stateDir);
  try {
    store.init();
  } catch (e) {
    log(
      `Cannot use state dir ${s.stateDir}: ${
        (e as Error).message
      }. Set stateDir or OLLAMA_MCP_STATE_DIR`,
    );
    log("server exiting with code 1: no usable state dir");
    return 1;
  }
  // In the background, after initialize: a big state dir must not delay the client.
  startBackgroundPrune(store, s.retainDays, log);
  const retired = new RetiredModels(s.stateDir);
  const workdirs: WorkdirPolicy = { home: homedir(), workspaceRoots: s.workspaceRoots };
  const setup: EngineSetup = {
    settings: s,
    env,
    serverCwd,
    userConfigDir: dirname(resolved.locations.userFile),
    workdirs,
  };
  const backendLimits: Record<string, number> = {};
  for (const [name, spec] of Object.entries(s.backends)) {
    if (spec.maxConcurrent !== undefined) backendLimits[name] = spec.maxConcurrent;
  }
  const manager = new JobManager(store, createEngines(setup), {
    jobTimeoutMs: s.jobTimeoutMs,
    maxConcurrent: s.maxConcurrent,
    backendLimits,
    log,
    onFinished: (record, outcome) => retired.noteEnd(record.model, outcome),
  });
  const catalog = new ModelCatalog(
    new OllamaClient(s.baseUrl),
    { allowedModels: s.allowedModels, defaultModel: s.defaultModel },
    retired,
  );
  const taskStore = new JobTaskStore();
  const server = new McpServer({ name: SERVER_NAME, version: VERSION }, {
    capabilities: { tasks: TASKS_CAPABILITY },
    taskStore,
  });
  const tools = registerTools(server, {
    taskStore,
    resolved,
    manager,
    catalog,
    models: new ModelChoice(s, catalog, env),
    serverCwd,
    workdirs,
    delegates: delegateFacts(setup),
  });

  // MCP 2026-07-28 (server/discover, delegate_run as a task) around the SDK's 2025 server.
  const transport = new ModernEra(
    new CappedStdioTransport(process.stdin, process.stdout, { log }),
    { tasks: taskStore, log },
  );
  let stopping: Promise<number> | undefined;
  const stop = (why: string, code = 0): Promise<number> => {
    stopping ??= (async () => {
      // Every exit says why on stderr: a server that vanishes silently cannot be debugged.
      log(`stopping: ${why}`);
      const running = manager.runningCount;
      if (running > 0) log(`${why}: stopping ${running} running delegate(s)`);
      await Promise.race([
        manager.shutdown(`the ${why}`),
        new Promise((r) => setTimeout(r, SHUTDOWN_LIMIT_MS)),
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
  // Jobs of servers that died: interrupted, their delegates stopped, without delaying initialize.
  void startBackgroundSweep(manager, log);
  // Without a configured default the default model depends on what Ollama serves: named in
  // delegate_start's description once known, without delaying initialize.
  if (!s.defaultModel) {
    void catalog.defaultModel().then((model) => {
      if (model) tools.describeDefault(model);
    }).catch(() => {});
  }
  const code = await done;
  log(`server exiting with code ${code}`);
  // Pending reads of stdin or timers of finished work must not keep the process up.
  process.exit(code);
}
