/**
 * Runs `ollama-delegate <command> ...` with an explicit environment and working directory.
 * `jobs`, `stats`, `doctor` and `models` run in this process (`jobsMain(argv, io)`,
 * `statsMain`, `doctorMain`, `modelsMain`, with an io that collects what they print, as through
 * a pipe: no terminal, so no colour and no live lines);
 * every other command, and `startCli` and `runCliProcess` always, in a subprocess: the same
 * program the end-to-end tests start as a server (`deno run src/main.ts`, or the installed
 * package when OLLAMA_DELEGATE_TEST_SERVER names it). tests/cli/cli_wiring_test.ts checks that
 * both ways print the same.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import type { CliIo } from "../../src/cli/jobs/common.ts";
import type { JobRecord } from "../../src/jobs/record.ts";
import { serverCommand, tempDir } from "../support/harness.ts";
import { writeFileAtomicSync } from "../../src/platform/atomic_write.ts";

/** The CLI's argv: the server command without its `serve`. */
export function cliArgv(args: string[]): { command: string; args: string[] } {
  const { command, args: base } = serverCommand();
  const trimmed = base.at(-1) === "serve" ? base.slice(0, -1) : base;
  return { command, args: [...trimmed, ...args] };
}

/** A private state dir and config, and the environment that points the CLI at them. */
export interface CliEnv {
  stateDir: string;
  env: Record<string, string>;
  cwd: string;
}

export function cliEnv(
  options: {
    stateDir?: string;
    userConfig?: Record<string, unknown>;
    env?: Record<string, string>;
  } = {},
): CliEnv {
  const root = tempDir("od-cli-");
  const stateDir = options.stateDir ?? join(root, "state");
  mkdirSync(stateDir, { recursive: true });
  const config = join(root, "config.json");
  writeFileSync(config, JSON.stringify(options.userConfig ?? {}));
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: process.env.HOME ?? root,
    OLLAMA_MCP_STATE_DIR: stateDir,
    OLLAMA_MCP_CONFIG: config,
    // `jobs prune` removes pruned conversations' files there: never from the real HOME's.
    OLLAMA_MCP_CLAUDE_CONFIG_DIR: join(root, "claude"),
    ...(process.env.DENO_DIR ? { DENO_DIR: process.env.DENO_DIR } : {}),
    ...options.env,
  };
  return { stateDir, env, cwd: root };
}

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Starts the CLI; `output()` gives what it printed so far, `done` its exit. */
export function startCli(ctx: CliEnv, args: string[]): {
  child: ChildProcess;
  output: () => string;
  done: Promise<CliRun>;
} {
  const { command, args: argv } = cliArgv(args);
  const child = spawn(command, argv, {
    env: ctx.env,
    cwd: ctx.cwd,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (c: Uint8Array) => (stdout += new TextDecoder().decode(c)));
  child.stderr!.on("data", (c: Uint8Array) => (stderr += new TextDecoder().decode(c)));
  const done = new Promise<CliRun>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
  return { child, output: () => stdout, done };
}

/** The subcommands whose main takes an injected io (src/cli/jobs/common.ts: CliIo). */
const IN_PROCESS: Record<string, () => Promise<(argv: string[], io: CliIo) => Promise<number>>> = {
  jobs: async () => (await import("../../src/cli/jobs/jobs.ts")).jobsMain,
  stats: async () => (await import("../../src/cli/stats.ts")).statsMain,
  doctor: async () => (await import("../../src/cli/doctor/doctor.ts")).doctorMain,
  models: async () => (await import("../../src/cli/models/models.ts")).modelsMain,
};

/**
 * Runs the CLI to its end: `jobs`, `stats`, `doctor` and `models` in this process, the rest
 * in a subprocess.
 */
export async function runCli(ctx: CliEnv, args: string[]): Promise<CliRun> {
  const [command, ...rest] = args;
  const load = command === undefined ? undefined : IN_PROCESS[command];
  if (!load) return await runCliProcess(ctx, args);
  let stdout = "";
  let stderr = "";
  const io: CliIo = {
    out: (text) => void (stdout += `${text}\n`),
    err: (text) => void (stderr += `${text}\n`),
    write: (text) => void (stdout += text),
    colour: false,
    live: false,
    columns: undefined,
    env: ctx.env,
    cwd: ctx.cwd,
    // A process's homedir() is its HOME when set, as here.
    home: ctx.env.HOME ?? ctx.cwd,
  };
  const code = await (await load())(rest, io);
  return { code, stdout, stderr };
}

/** Runs the CLI to its end in a subprocess, whatever the command. */
export function runCliProcess(ctx: CliEnv, args: string[]): Promise<CliRun> {
  return startCli(ctx, args).done;
}

/** A job record with sensible defaults, in format 1, written as `job.json` with its prompt. */
export function writeJob(
  stateDir: string,
  record: JobRecord,
  extra: { prompt?: string; result?: string } = {},
): string {
  const dir = join(stateDir, record.id);
  mkdirSync(dir, { recursive: true });
  // Atomically, as the server writes it: a test that rewrites the record while a running CLI
  // tails it (jobs_terminal_test) had the CLI read it half-written once ("not valid JSON").
  writeFileAtomicSync(join(dir, "job.json"), JSON.stringify(record, null, 2));
  writeFileSync(join(dir, "prompt.txt"), extra.prompt ?? record.promptPreview);
  if (extra.result !== undefined) writeFileSync(join(dir, "result.txt"), extra.result);
  return dir;
}

export function baseRecord(
  id: string,
  sessionId: string,
  over: Partial<JobRecord> = {},
): JobRecord {
  const t = Date.UTC(2024, 2, 10, 12);
  return {
    format: 1,
    id,
    sessionId,
    turn: 1,
    engine: "claude",
    model: "qwen3:8b",
    cwd: "/work",
    state: "completed",
    createdAt: t,
    startedAt: t,
    endedAt: t + 2500,
    promptPreview: "a prompt",
    options: { permissionMode: "auto", addDirs: [] },
    sessionCreated: true,
    toolCalls: 0,
    permissionDenials: [],
    ...over,
  };
}
