/**
 * Drives the real server over stdio with the MCP SDK's own Client, as Claude Code would,
 * in a private HOME and state dir. The server command is `deno run src/main.ts serve` unless
 * OLLAMA_DELEGATE_TEST_SERVER names another (e.g. the Node bundle): a JSON array of argv, or
 * a string split on spaces.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { ChildProcess } from "node:child_process";
import { linkSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { realDenoDir } from "./deno_dir.ts";
import { KEEP_TEMP, removeAtEnd, tempDir } from "./temp_dir.ts";

export const REPO = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const CLAUDE_BIN = join(
  REPO,
  ".tools",
  "node_modules",
  "@anthropic-ai",
  "claude-code",
  "bin",
  "claude.exe",
);

export { realDenoDir } from "./deno_dir.ts";

const SERVER_VAR = "OLLAMA_DELEGATE_TEST_SERVER";

/** The command line that starts our server. */
export function serverCommand(): { command: string; args: string[] } {
  const custom = process.env[SERVER_VAR];
  if (custom) {
    // A JSON array keeps paths with spaces intact (scripts/test.ts writes one); a plain
    // string is split on spaces, for quick use by hand.
    const argv: unknown = custom.trimStart().startsWith("[")
      ? JSON.parse(custom)
      : custom.split(" ");
    if (!Array.isArray(argv) || argv.length === 0 || !argv.every((a) => typeof a === "string")) {
      throw new TypeError(
        `Cannot start the test server: ${SERVER_VAR} is not an argv ("${custom}")`,
      );
    }
    const [command, ...args] = argv as string[];
    return { command: command!, args };
  }
  return {
    command: "deno",
    args: [
      "run",
      "-A",
      "--v8-flags=--enable-experimental-regexp-engine-on-excessive-backtracks",
      "--config",
      join(REPO, "deno.json"),
      join(REPO, "src", "main.ts"),
      "serve",
    ],
  };
}

export { KEEP_TEMP, tempDir };

/**
 * Runs `fn` on a file holding `content`, in a folder of its own removed afterwards, whatever
 * `fn` does.
 */
export async function withFile(
  content: string | Uint8Array,
  fn: (path: string) => Promise<void> | void,
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "od-file-"));
  try {
    const path = join(dir, "f.jsonl");
    writeFileSync(path, content);
    await fn(path);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface ServerOptions {
  /** Extra environment for the server (poison, OLLAMA_MCP_*). */
  env?: Record<string, string>;
  home?: string;
  stateDir?: string;
  /**
   * The server's working directory, and so the cwd of delegates whose call names none.
   * Default: `<home>/project`, created: the home directory itself is refused as a cwd.
   */
  cwd?: string;
  /** Written to the user config file ($HOME/.ollama-mcp/config.json). */
  userConfig?: Record<string, unknown>;
  baseUrl?: string;
  claudeBin?: string;
}

/** A server a test talks to through an MCP client, in a process of its own or in this one. */
export interface SceneServer extends AsyncDisposable {
  client: Client;
  home: string;
  stateDir: string;
  /** The server's working directory. */
  cwd: string;
  /** What the server logged so far (its stderr). */
  stderr: () => string;
  call(name: string, args?: Record<string, unknown>, opts?: CallOptions): Promise<ToolReply>;
  close(): Promise<void>;
}

/** The real server in a process of its own, over stdio. */
export interface TestServer extends SceneServer {
  /**
   * Its requests (callTool, listTools, request...) fail, once the server has died, with an
   * error that says how it died and ends with its last stderr lines.
   */
  client: Client;
  transport: StdioClientTransport;
  pid: number;
  /** How the server process ended (`code 1`, `signal SIGKILL`), or undefined while it runs. */
  exit: () => string | undefined;
}

export interface CallOptions {
  onprogress?: (p: { progress: number; total?: number; message?: string }) => void;
  timeoutMs?: number;
  /** The request's `_meta` (a W3C traceparent, as MCP clients send one). */
  meta?: Record<string, unknown>;
}

export interface ToolReply {
  text: string;
  isError: boolean;
  raw: CallToolResult;
}

/** Where a server of a test runs and with what: its HOME, state dir, cwd and environment. */
export interface ServerPlace {
  home: string;
  stateDir: string;
  cwd: string;
  env: Record<string, string>;
}

/**
 * Prepares what a server of `options` needs on disk (its cwd, its user config) and the
 * environment it starts with. Unless a test names another, the state dir is the one the server
 * picks by itself under HOME (the layout users have): OLLAMA_MCP_STATE_DIR is then not set.
 */
export function prepareServer(options: ServerOptions = {}): ServerPlace {
  const home = options.home ?? tempDir("od-home-");
  const stateDir = options.stateDir ?? join(home, ".ollama-mcp", "jobs");
  const cwd = options.cwd ?? join(home, "project");
  if (options.cwd === undefined) mkdirSync(cwd, { recursive: true });
  if (options.userConfig) {
    mkdirSync(join(home, ".ollama-mcp"), { recursive: true });
    writeFileSync(join(home, ".ollama-mcp", "config.json"), JSON.stringify(options.userConfig));
  }
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    DENO_DIR: realDenoDir(),
    NO_COLOR: "1",
    ...(options.stateDir !== undefined ? { OLLAMA_MCP_STATE_DIR: options.stateDir } : {}),
    OLLAMA_MCP_CLAUDE_BIN: options.claudeBin ?? CLAUDE_BIN,
    ...(options.baseUrl ? { OLLAMA_MCP_BASE_URL: options.baseUrl } : {}),
    ...options.env,
  };
  return { home, stateDir, cwd, env };
}

/** A tool call's reply as tests read it. */
export async function callTool(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
  opts: CallOptions = {},
): Promise<ToolReply> {
  const raw = await client.callTool(
    {
      name,
      arguments: args,
      ...(opts.meta ? { _meta: opts.meta } : {}),
    },
    undefined,
    {
      timeout: opts.timeoutMs ?? 120_000,
      ...(opts.onprogress ? { onprogress: opts.onprogress, resetTimeoutOnProgress: true } : {}),
    },
  ) as CallToolResult;
  const first = raw.content[0];
  return { text: first?.type === "text" ? first.text : "", isError: raw.isError === true, raw };
}

/** Starts the server and connects an SDK client to it. */
export async function startServer(options: ServerOptions = {}): Promise<TestServer> {
  const { home, stateDir, cwd, env } = prepareServer(options);
  const { command, args } = serverCommand();
  const transport = new StdioClientTransport({
    command,
    args,
    env,
    cwd,
    stderr: "pipe",
  });
  let stderr = "";
  const decoder = new TextDecoder();
  transport.stderr?.on("data", (chunk: Uint8Array) => {
    stderr += decoder.decode(chunk, { stream: true });
  });
  const client = new Client({ name: "od-test", version: "1.0.0" });
  await client.connect(transport);
  const pid = transport.pid;
  if (pid === null) throw new Error("server has no pid");
  const death = watchExit(transport);
  explainDeath(client, death, () => stderr);
  return {
    client,
    transport,
    pid,
    home,
    stateDir,
    cwd,
    stderr: () => stderr,
    exit: () => death.how,
    call: (name, args, opts) => callTool(client, name, args, opts),
    async close() {
      await client.close().catch(() => {});
    },
    async [Symbol.asyncDispose]() {
      await client.close().catch(() => {});
    },
  };
}

/** How many of the server's last stderr lines a death report quotes. */
const DEATH_STDERR_LINES = 20;

interface Death {
  /** `code N` or `signal SIGX`, once the process has exited. */
  how?: string;
  /** Settles when the process exits. */
  exited: Promise<void>;
}

/**
 * Follows the server process's exit. The SDK transport keeps its child private and forgets it
 * once it closes, so the handle is taken now, while the server is known to run.
 */
function watchExit(transport: StdioClientTransport): Death {
  const child = (transport as unknown as { _process?: ChildProcess })._process;
  const death: Death = { exited: Promise.resolve() };
  if (!child) return death;
  const describe = (code: number | null, signal: string | null) =>
    signal ? `signal ${signal}` : `code ${code}`;
  if (child.exitCode !== null || child.signalCode !== null) {
    death.how = describe(child.exitCode, child.signalCode);
    return death;
  }
  death.exited = new Promise((resolve) => {
    child.once("exit", (code, signal) => {
      death.how = describe(code, signal);
      resolve();
    });
  });
  return death;
}

/**
 * Makes every request of `client` that fails because the server died say how it died. Without
 * this a test only sees the SDK's "MCP error -32000: Connection closed" (or "Not connected"),
 * and the server's own last words are lost.
 */
function explainDeath(client: Client, death: Death, stderr: () => string): void {
  const request = client.request.bind(client);
  const wrapped = (async (...args: Parameters<Client["request"]>) => {
    try {
      return await request(...args);
    } catch (e) {
      throw await withDeath(e, death, stderr);
    }
  }) as Client["request"];
  client.request = wrapped;
}

async function withDeath(e: unknown, death: Death, stderr: () => string): Promise<unknown> {
  if (death.how === undefined && isConnectionLoss(e)) {
    // The client hears of the loss when the pipes close; the exit status can come just after.
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([death.exited, new Promise((r) => timer = setTimeout(r, 2000))]);
    clearTimeout(timer);
  }
  if (death.how === undefined) return e;
  // Let stderr's last chunks, already read by the pipe, reach the collector.
  await new Promise((r) => setTimeout(r, 50));
  const lines = stderr().trimEnd().split("\n");
  const tail = lines.slice(-DEATH_STDERR_LINES).map((l) => `  | ${l}`).join("\n");
  const how = death.how.startsWith("signal")
    ? `was killed by ${death.how}`
    : `exited with ${death.how}`;
  const message = e instanceof Error ? e.message : String(e);
  return new Error(
    `${message}: the server ${how}; ` +
      (stderr().trim() === ""
        ? "it wrote nothing on stderr"
        : `its last ${Math.min(lines.length, DEATH_STDERR_LINES)} stderr lines:\n${tail}`),
    { cause: e },
  );
}

/** The errors the SDK client gives when its transport is gone. */
function isConnectionLoss(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  const code = (e as { code?: unknown }).code;
  return (code === -32000 && /Connection closed/.test(e.message)) || e.message === "Not connected";
}

/** The value of a `label:` line of a reply's summary block. */
export function field(text: string, label: string): string | undefined {
  const match = new RegExp(`^${label}:\\s+(.*)$`, "m").exec(text);
  return match?.[1]?.trim();
}

/** Polls `check` until it returns a value or `timeoutMs` passes. */
export async function until<T>(
  check: () => T | undefined | Promise<T | undefined>,
  timeoutMs: number,
  what: string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
}

/** Whether a pid exists (and is not a zombie). */
export function alive(pid: number): boolean {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    return !/^\d+ \(.*\) Z /.test(stat);
  } catch {
    return false;
  }
}

/**
 * A stand-in `claudeBin`: a shell script that runs `prelude`, then becomes the real CLI (exec
 * keeps the pid). On Linux a delegate runs in a jail that holds only the folder of its CLI's
 * real file, so the script lives in a folder of its own under `.tools/wrappers/` with a hard
 * link to the real CLI beside it (same file system, no copy). The folder goes when the test
 * module ends; a suite run left about 200 of them behind before.
 */
export function claudeWrapper(prelude: string): string {
  const parent = join(REPO, ".tools", "wrappers");
  mkdirSync(parent, { recursive: true });
  const dir = mkdtempSync(join(parent, "w-"));
  removeAtEnd(dir);
  linkSync(CLAUDE_BIN, join(dir, "claude-real"));
  const script = join(dir, "claude");
  writeFileSync(
    script,
    `#!/bin/sh\n${prelude}\nexec "$(dirname "$0")/claude-real" "$@"\n`,
    { mode: 0o755 },
  );
  return script;
}

/** A stand-in `claudeBin` that runs the real CLI with IS_SANDBOX=1 (bypassPermissions as root). */
export function sandboxClaude(): string {
  return claudeWrapper("export IS_SANDBOX=1");
}

/**
 * A stand-in `claudeBin` that records the environment the server gave the delegate, then
 * becomes the real CLI, so tests can see exactly what crossed. The record goes to
 * `$CLAUDE_CONFIG_DIR/<name>`, the one folder of the server's that a jailed delegate has; read
 * it with `readFileSync(join(<claudeConfigDir>, name))`.
 */
export function envRecordingClaude(name = "delegate-env.txt"): string {
  return claudeWrapper(`/usr/bin/env > "$CLAUDE_CONFIG_DIR/${name}"`);
}

/** Parses `env` output into a map (values may not contain newlines here). */
export function parseEnvDump(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split("\n")) {
    const eq = line.indexOf("=");
    if (eq > 0) out.set(line.slice(0, eq), line.slice(eq + 1));
  }
  return out;
}
