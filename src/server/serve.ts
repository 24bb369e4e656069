/**
 * `ollama-delegate serve`: the MCP server on stdio. Before `initialize` is answered only the
 * MCP SDK, the transports and the task store load (shell.ts); the settings, the state dir and
 * the tools follow (wire.ts), while requests that need them wait (issue 34, item 3: start-up
 * within 1.25 times a bare SDK server).
 */
import { homedir } from "node:os";
import process from "node:process";
import { currentEnv, isTty, isWindows } from "../platform/runtime.ts";
import { serverShell } from "./shell.ts";
import { CappedStdioTransport } from "./transport/stdio.ts";
import type { EarlyDiscover } from "./transport/early_discover.ts";
import type { WiredServer } from "./wire.ts";

const log = (line: string) => process.stderr.write(`ollama-delegate: ${line}\n`);

/**
 * Runs the MCP server on stdio until the client goes away or a signal arrives. `early` has read
 * stdin while this module loaded (and answered a first server/discover); its bytes come first.
 */
export async function serve(early?: EarlyDiscover): Promise<number> {
  if (isTty("stdin")) log((await import("./terminal_hint.ts")).terminalHint());
  const shell = serverShell(log);
  const input = early?.handOver();
  const transport = new CappedStdioTransport(process.stdin, process.stdout, {
    log,
    ...(input ? { pending: input.pending } : {}),
  });
  let wiring: Promise<WiredServer | undefined> | undefined;
  let stopping: Promise<number> | undefined;
  const stop = (why: string, code = 0): Promise<number> => {
    stopping ??= (async () => {
      // Every exit says why on stderr: a server that vanishes silently cannot be debugged.
      log(`stopping: ${why}`);
      // Requests sent before the client closed its end are answered all the same.
      if (shell.waiting()) void loadTools().catch(() => {});
      const wired = await wiring?.catch(() => undefined);
      if (wired) await wired.stop(why);
      else await shell.server.close().catch(() => {});
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
  /** Loads and registers the tools (once); they answer what waited for them. */
  const loadTools = () =>
    wiring ??= import("./wire.ts").then(({ wireServer }) =>
      wireServer(shell, { env: currentEnv(), cwd: process.cwd(), home: homedir(), log })
    );
  await shell.connect(transport, () => finish("MCP transport closed"));
  // Claude Code's discover probe closes stdin once answered while loading: its process needs
  // no tools. Input that ended with requests for them (a script piping its requests) gets them.
  const ended = input?.ended === true;
  if (!ended || shell.waiting()) {
    // One turn of the event loop first: Deno writes stdout asynchronously, and the answer to an
    // `initialize` already read would wait behind the synchronous part of loading the tools
    // (about as long as the rest of start-up; measured with bench/startup_bench.ts).
    await new Promise((resolve) => setTimeout(resolve, 0));
    if (!stopping) {
      try {
        const wired = await loadTools();
        if (!wired) finish("no usable state dir", 1);
        else if (!ended) wired.startBackground();
      } catch (e) {
        finish(
          `cannot load the tools: ${e instanceof Error ? e.stack ?? e.message : String(e)}`,
          1,
        );
      }
    }
  }
  if (ended) finish("client closed stdin");
  const code = await done;
  log(`server exiting with code ${code}`);
  // Pending reads of stdin or timers of finished work must not keep the process up.
  process.exit(code);
}
