/**
 * delegate_run from an interactive Claude Code session: the real CLI on a pseudo-terminal
 * (util-linux `script`), our real server as its MCP server, the Ollama emulator as the model of
 * both the session and the delegate (native engine, real bubblewrap). Over MCP 2026-07-28 with
 * the tasks extension the call goes to the background at once, the user's next message is
 * answered while the delegate works, and the result comes back by itself as a task
 * notification that starts a new turn.
 *
 * The delegate waits for a file the test creates, so each step is ordered by cause rather than
 * by timing, however loaded the machine: the job cannot end before the test lets it.
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import {
  type MessagesRequestView,
  type Reply,
  startOllamaEmulator,
} from "../support/emulator/emulator.ts";
import { CLAUDE_BIN, realDenoDir, serverCommand, tempDir, until } from "../support/harness.ts";

const TOOL = "mcp__ollama__delegate_run";
const MODEL = "qwen3:8b";
/** Generous: the CLI, our server and the delegate's sandbox all start on a loaded machine. */
const STEP_MS = 90_000;

/** A terminal's text without its control sequences (CSI, OSC/DCS strings, other escapes). */
function plain(output: string): string {
  // deno-lint-ignore no-control-regex -- matching ESC and BEL is the point
  const sequences = /\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[\]P^_][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b./g;
  return output.replace(sequences, "");
}

const rawText = (message: unknown) => JSON.stringify((message as { content?: unknown })?.content);

/** Whether the conversation's last message carries a tool result. */
const endsWithToolResult = (view: MessagesRequestView) =>
  /"type":"tool_result"/.test(rawText(view.messages.at(-1)));

interface Session {
  type(text: string): Promise<void>;
  output(): string;
  close(): Promise<void>;
}

/** The real CLI, interactive, on a pseudo-terminal of 160 x 50. */
function startInteractive(args: string[], env: Record<string, string>, cwd: string): Session {
  const quote = (x: string) => `'${x.replaceAll("'", "'\\''")}'`;
  const command = `stty cols 160 rows 50; exec ${[CLAUDE_BIN, ...args].map(quote).join(" ")}`;
  const child = new Deno.Command("script", {
    args: ["-qfec", command, "/dev/null"],
    cwd,
    env: { ...env, TERM: "xterm-256color", SHELL: "/bin/sh" },
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  let output = "";
  const reading = (async () => {
    for await (const chunk of child.stdout) {
      output = (output + new TextDecoder().decode(chunk)).slice(-200_000);
    }
  })();
  const stdin = child.stdin.getWriter();
  const keys = (text: string) => stdin.write(new TextEncoder().encode(text));
  const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
  return {
    async type(text) {
      const before = output.length;
      await keys(text);
      // Keys that arrive together read as a paste, where Enter is a newline: Enter goes only
      // once the CLI has drawn something after the text (it read the keys; a busy machine can
      // leave it seconds behind its input), and the screen was quiet for a moment.
      const limit = Date.now() + 20_000;
      while (output.length === before && Date.now() < limit) await pause(100);
      for (let seen = -1; seen !== output.length && Date.now() < limit;) {
        seen = output.length;
        await pause(400);
      }
      await keys("\r");
    },
    output: () => plain(output),
    async close() {
      // Ctrl-C twice quits Claude Code, which then stops its MCP servers.
      await keys("\x03").catch(() => {});
      await pause(300);
      await keys("\x03").catch(() => {});
      const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
      await child.status;
      clearTimeout(timer);
      await stdin.close().catch(() => {});
      await reading.catch(() => {});
    },
  };
}

/** The delegate's prompt: its model runs a command that waits for the test's file, then answers. */
const gated = (answer: string) =>
  "@bash i=0; while [ ! -e release ]; do i=$((i+1)); [ $i -gt 1500 ] && exit 1; sleep 0.2; " +
  `done; echo released\n@reply ${answer}\nwait for the release file`;

interface Scene {
  session: Session;
  /** The delegates' working directory: `release` here lets a gated delegate finish. */
  work: string;
  jobs(): string[];
  jobState(id: string): string;
  debug(): string;
  /** Waits for `check`; a timeout shows the screen and the CLI's MCP log lines. */
  step<T>(what: string, check: () => T | undefined): Promise<T>;
  close(): Promise<void>;
}

/**
 * The emulator (answering the session's model with `script` once delegate_run is among its
 * tools), our server as the CLI's only MCP server, and the interactive CLI, connected.
 */
/**
 * An interactive session whose connection speaks 2026-07-28. Claude Code probes with
 * server/discover under a short bound and falls back to 2025-11-25 for that connection when
 * the answer comes late; on a loaded machine our server's start alone can pass it. Such a
 * session is closed and opened again, twice at most (the CLI does not remember a late answer as
 * legacy), so that the tests check the tasks path rather than the machine's load.
 */
async function openScene(
  script: (view: MessagesRequestView, work: string) => Reply | undefined,
): Promise<Scene> {
  for (let attempt = 1;; attempt++) {
    const scene = await openSceneOnce(script);
    if (!scene.debug().includes('"protocolEra":"legacy"') || attempt === 3) return scene;
    console.log("  the discover probe was answered late (a loaded machine); opening a new session");
    await scene.close();
  }
}

async function openSceneOnce(
  script: (view: MessagesRequestView, work: string) => Reply | undefined,
): Promise<Scene> {
  const home = tempDir("od-cc-home-");
  const work = tempDir("od-cc-work-");
  const stateDir = join(home, "state");
  const debugLog = join(home, "claude-debug.log");
  /** What each of the model's requests offered and said last, for a failed step's message. */
  const requests: string[] = [];
  const emu = await startOllamaEmulator({
    script: (view) => {
      const offered = view.tools.some((tool) => (tool as { name?: string }).name === TOOL);
      requests.push(
        `${new Date().toISOString()} ${view.tools.length} tools${offered ? "" : ` (no ${TOOL})`}` +
          `: ${JSON.stringify(view.lastUserText.slice(0, 60))}`,
      );
      return offered ? script(view, work) : undefined;
    },
  });
  // No first-run screens: onboarding done, the working directory trusted.
  writeFileSync(
    join(home, ".claude.json"),
    JSON.stringify({
      hasCompletedOnboarding: true,
      theme: "dark",
      numStartups: 5,
      projects: { [work]: { hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true } },
    }),
  );
  const server = serverCommand();
  writeFileSync(
    join(home, "mcp.json"),
    JSON.stringify({
      mcpServers: {
        ollama: {
          type: "stdio",
          command: server.command,
          args: server.args,
          env: {
            DENO_DIR: realDenoDir(),
            NO_COLOR: "1",
            OLLAMA_MCP_STATE_DIR: stateDir,
            OLLAMA_MCP_BASE_URL: emu.url,
          },
        },
      },
    }),
  );
  const session = startInteractive(
    [
      "--model",
      MODEL,
      "--mcp-config",
      join(home, "mcp.json"),
      "--strict-mcp-config",
      "--allowedTools",
      TOOL,
      "--debug-file",
      debugLog,
    ],
    {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: home,
      ANTHROPIC_BASE_URL: emu.url,
      ANTHROPIC_AUTH_TOKEN: "ollama",
      ANTHROPIC_API_KEY: "",
      // Our server may start slowly on a loaded machine (default 30 s).
      MCP_TIMEOUT: "120000",
      // MCP tools in the first request, not behind tool search.
      ENABLE_TOOL_SEARCH: "false",
      DISABLE_AUTOUPDATER: "1",
      DISABLE_ERROR_REPORTING: "1",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    },
    work,
  );
  const debug = () => existsSync(debugLog) ? readFileSync(debugLog, "utf8") : "";
  const jobs = () =>
    existsSync(stateDir)
      ? readdirSync(stateDir).filter((d) => existsSync(join(stateDir, d, "job.json")))
      : [];
  const scene: Scene = {
    session,
    work,
    jobs,
    jobState: (id) =>
      (JSON.parse(readFileSync(join(stateDir, id, "job.json"), "utf8")) as { state: string })
        .state,
    debug,
    async step(what, check) {
      try {
        return await until(check, STEP_MS, what);
      } catch (e) {
        throw new Error(
          `${(e as Error).message}\n--- screen (end) ---\n${session.output().slice(-3000)}\n` +
            `--- MCP lines of the CLI's debug log ---\n` +
            debug().split("\n").filter((l) => l.includes('"ollama"')).slice(-30).join("\n") +
            `\n--- the model's requests ---\n${requests.slice(-10).join("\n")}`,
        );
      }
    },
    async close() {
      await session.close();
      await emu.close();
    },
  };
  try {
    // Connected is not enough. Our server answers `initialize` before its tools load, and the
    // CLI sends a turn started before it has listed a server's tools without them (2.1.332,
    // seen with a server slow to answer tools/list). On a loaded machine the first turn here
    // once went to the model without delegate_run, the server's tools/list_changed arriving
    // during it. With no default model set, the server sends tools/list_changed once it has
    // asked Ollama, after answering every tools/list before it: the first turn waits for that.
    await scene.step(
      "the CLI to connect to the server and list its tools",
      () =>
        debug().includes('MCP server "ollama": Received tools/list_changed notification') &&
        session.output().includes("❯"),
    );
  } catch (e) {
    await scene.close();
    throw e;
  }
  return scene;
}

/** The delegate_run call the session's model makes. */
const callRun = (work: string, answer: string): Reply => ({
  kind: "tool_use",
  name: TOOL,
  input: { prompt: gated(answer), engine: "native", model: MODEL, cwd: work },
});

const backgrounded = (view: MessagesRequestView) =>
  endsWithToolResult(view) && view.lastToolResult?.includes("moved to the background");

// util-linux's `script` gives the CLI its terminal; the delegate's command needs bubblewrap.
const linuxOnly = Deno.build.os !== "linux";

Deno.test({
  name: "interactive Claude Code runs delegate_run in the background and gets its result by itself",
  ignore: linuxOnly,
}, async () => {
  const token = crypto.randomUUID().slice(0, 8);
  const t: Record<string, number> = {};
  let notification = "";
  const scene = await openScene((view, work) => {
    const last = rawText(view.messages.at(-1));
    if (backgrounded(view)) t.backgrounded ??= Date.now();
    if (last.includes("<task-notification>")) {
      t.notified ??= Date.now();
      notification = last;
      return { kind: "text", text: "RESULT-SEEN" };
    }
    // Also when Claude Code hands a message typed mid-turn over with a tool result.
    if (last.includes("two plus two")) {
      t.answered ??= Date.now();
      return { kind: "text", text: "FOUR-WHILE-RUNNING" };
    }
    if (endsWithToolResult(view)) return { kind: "text", text: "BACKGROUNDED-OK" };
    if (view.lastUserText.includes("delegate the slow job") && t.called === undefined) {
      t.called = Date.now();
      return callRun(work, `delegate-finished-${token}`);
    }
    return undefined;
  });
  const { session, step, jobs, jobState, debug, work } = scene;
  try {
    assert.match(debug(), /"protocolEra":"modern"/, "the connection speaks 2026-07-28");

    await session.type("delegate the slow job");
    await step("the model to get control back after calling delegate_run", () => t.backgrounded);
    const [jobId] = await step("the job to exist", () => jobs().length === 1 ? jobs() : undefined);
    // Queued for a moment before it runs; either way it has not ended.
    assert.match(jobState(jobId!), /^(queued|running)$/, "the job runs while the session goes on");
    assert.match(debug(), /Tool 'delegate_run' returned task \S+ \(working\); backgrounded as/);

    // The turn that got the placeholder is over once its reply is on screen.
    await step("the turn to end", () => session.output().includes("BACKGROUNDED-OK"));
    await session.type("what is two plus two");
    await step("the next message to be answered", () => t.answered);
    await step("the answer on screen", () => session.output().includes("FOUR-WHILE-RUNNING"));
    assert.match(jobState(jobId!), /^(queued|running)$/, "answered while the job was not over");
    assert.equal(t.notified, undefined, "no result before the delegate ended");

    const released = Date.now();
    writeFileSync(join(work, "release"), "");
    await step("the result to come back by itself", () => t.notified);
    assert.equal(jobState(jobId!), "completed");
    assert.match(notification, new RegExp(`delegate-finished-${token}`));
    assert.match(notification, /<status>completed<\/status>/);
    assert.match(notification, new RegExp(`job_id:\\s+${jobId}`), "the reply names the job");
    assert.deepEqual(jobs(), [jobId], "one call, one job");
    console.log(
      `  call -> model has control back: ${t.backgrounded! - t.called!} ms; ` +
        `user message answered ${t.answered! - t.called!} ms after the call; ` +
        `job end allowed -> result in a new turn: ${t.notified! - released} ms`,
    );
  } finally {
    await scene.close();
  }
});

Deno.test({
  name: "TaskStop in interactive Claude Code stops the delegate's job (tasks/cancel)",
  ignore: linuxOnly,
}, async () => {
  let placeholder = "";
  let stopped = "";
  const scene = await openScene((view, work) => {
    if (backgrounded(view)) {
      placeholder ||= view.lastToolResult ?? "";
      return { kind: "text", text: "BACKGROUNDED-OK" };
    }
    if (endsWithToolResult(view)) {
      stopped = view.lastToolResult ?? "";
      return { kind: "text", text: "STOPPED-OK" };
    }
    if (view.lastUserText.includes("please stop it")) {
      const id = /task_id "([^"]+)"/.exec(placeholder)?.[1];
      if (id) return { kind: "tool_use", name: "TaskStop", input: { task_id: id } };
    }
    if (view.lastUserText.includes("delegate the slow job") && !placeholder) {
      return callRun(work, "never-released");
    }
    return undefined;
  });
  const { session, step, jobs, jobState } = scene;
  try {
    await session.type("delegate the slow job");
    await step("the call to go to the background", () => placeholder || undefined);
    const [jobId] = await step("the job to exist", () => jobs().length === 1 ? jobs() : undefined);
    await step("the turn to end", () => session.output().includes("BACKGROUNDED-OK"));
    await session.type("please stop it");
    await step("TaskStop to answer", () => stopped || undefined);
    assert.match(stopped, /is stopped/);
    // The release file never appears: only the cancel can end this job.
    await step("the job to be cancelled", () => jobState(jobId!) === "cancelled" || undefined);
  } finally {
    await scene.close();
  }
});
