/**
 * Makes the README's pictures of the jobs console from a real run: docs/images/jobs.svg
 * (`ollama-delegate jobs`) and docs/images/jobs_tail.svg (`ollama-delegate jobs tail <id>`).
 *
 * It starts the Ollama emulator and the real server in a throwaway HOME, gives the server a
 * few small jobs on a small git project (a two-turn native conversation on a cloud model, a
 * native job on its own branch, a claude-engine job, one that fails, one still running), then
 * runs the real CLI on a pseudo-terminal 110 columns wide, so colour and layout are what a
 * person sees, and draws the terminal as SVG (scripts/ansi_svg.ts). The emulated model's
 * answers are scripted step by step (capture_jobs_script.ts); the running job waits for the
 * pictures' moments (the table taken, the tail started) before it goes on, so the same run
 * gives the same pictures apart from times and ids. The throwaway HOME is shown as `~`.
 *
 * Run: deno task capture [--out <dir>]   (default docs/images). It needs what the end-to-end
 * tests need: bubblewrap and socat, python3 (for the pseudo-terminal) and the pinned Claude
 * Code in .tools/ (`deno task test` installs it).
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { parseArgs } from "node:util";
import {
  field,
  realDenoDir,
  REPO,
  startServer,
  tempDir,
  type TestServer,
  until,
} from "../tests/support/harness.ts";
import { type OllamaEmulator, startOllamaEmulator } from "../tests/support/emulator/emulator.ts";
import { cliArgv } from "../tests/cli/jobs_support.ts";
import { startOnPty } from "../tests/cli/pty_support.ts";
import { ansiToSvg } from "./ansi_svg.ts";
import {
  claudeScript,
  Gate,
  modelScript,
  PROJECT_FILES,
  type Task,
  TASKS,
} from "./capture_jobs_script.ts";

/** The width of the terminal the CLI runs on, and of the pictures. */
export const COLUMNS = 110;

export interface Captured {
  /** What the terminal showed, with the throwaway HOME written as `~`. */
  jobs: string;
  tail: string;
  /** The SVG files written. */
  files: string[];
}

/** `promise`, or an error naming `what` once `ms` passed. */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

function git(cwd: string, home: string, ...args: string[]): void {
  execFileSync("git", ["-c", "user.name=You", "-c", "user.email=you@example.com", ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, GIT_CONFIG_NOSYSTEM: "1" },
    stdio: "ignore",
  });
}

/** A small git project for the delegates to work on. */
function makeProject(dir: string, home: string): void {
  for (const [path, text] of Object.entries(PROJECT_FILES)) {
    mkdirSync(join(dir, path, ".."), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  git(dir, home, "init", "-q", "-b", "main");
  git(dir, home, "add", "-A");
  git(dir, home, "commit", "-q", "-m", "first version");
}

/**
 * Runs `ollama-delegate <args>` on a pseudo-terminal; `ready` is called with the output so
 * far until it says the run may go on (the tail waits for its job).
 */
async function onTerminal(
  args: string[],
  env: Record<string, string>,
  cwd: string,
  whenShown?: { text: string; then: () => void },
): Promise<string> {
  const { command, args: argv } = cliArgv(args);
  const run = startOnPty([command, ...argv], {
    tty: ["stdout", "stderr"],
    env,
    cwd,
    columns: COLUMNS,
  });
  try {
    if (whenShown) {
      await until(() => run.output().includes(whenShown.text), 60_000, `"${whenShown.text}"`);
      whenShown.then();
    }
    const end = await run.done;
    if (end.code !== 0) {
      throw new Error(
        `ollama-delegate ${args.join(" ")} exited with ${end.code}:\n${end.output}${end.stderr}`,
      );
    }
    return end.output;
  } finally {
    run.child.kill();
    await run.done.catch(() => {});
  }
}

/** The run, captured; pictures written to `outDir`. */
export async function capture(outDir: string): Promise<Captured> {
  const home = tempDir("od-capture-");
  const project = join(home, "project");
  const stateDir = join(home, ".ollama-mcp", "jobs");
  makeProject(project, home);
  const gates = { reachedGate: new Gate(), tableTaken: new Gate(), tailStarted: new Gate() };
  let emulator: OllamaEmulator | undefined;
  let server: TestServer | undefined;
  try {
    emulator = await startOllamaEmulator({
      models: [{ name: "qwen3-coder:30b", contextLength: 262_144 }, {
        name: "qwen3.5:397b-cloud",
      }],
      chatScript: modelScript(gates),
      script: claudeScript,
    });
    server = await startServer({
      home,
      stateDir,
      cwd: project,
      baseUrl: emulator.url,
      userConfig: {
        defaultEngine: "native",
        defaultModel: "qwen3-coder:30b",
        pricing: { "qwen3.5:397b-cloud": { inputPerMillion: 0.6, outputPerMillion: 2.4 } },
      },
    });
    const s = server;
    /** Runs a task to its end and checks that it went as scripted. */
    const finished = async (task: Task, args: Record<string, unknown>, tool = "delegate_start") => {
      const reply = await s.call(tool, {
        prompt: task.prompt,
        cwd: project,
        wait_seconds: 120,
        ...args,
      });
      const want = task.error ? "failed" : "completed";
      const calls = task.steps.filter((step) => step.call).length;
      const state = field(reply.text, "state");
      const made = Number(field(reply.text, "tool calls")?.split(" ")[0] ?? 0);
      if (state !== want || made !== calls) {
        throw new Error(
          `Cannot capture: the job "${task.prompt}" ended ${state} with ${made} tool calls, ` +
            `not ${want} with ${calls} as scripted${
              task.claude ? " (the claude engine needs .tools/: deno task test installs it)" : ""
            }:\n${reply.text}`,
        );
      }
      return field(reply.text, "job_id")!;
    };
    const [summary, followup, branch, claude, failing, live] = TASKS as [
      Task,
      Task,
      Task,
      Task,
      Task,
      Task,
    ];
    const first = await finished(summary, { model: summary.model });
    await finished(followup, { job_id: first }, "delegate_followup");
    await finished(branch, { model: branch.model, isolation: "worktree" });
    await finished(claude, { model: claude.model, engine: "claude" });
    await finished(failing, { model: failing.model });
    const started = await s.call("delegate_start", {
      prompt: live.prompt,
      model: live.model,
      cwd: project,
    });
    const liveId = field(started.text, "job_id")!;
    await within(gates.reachedGate.opened, 60_000, "the running job's first tool call");

    const env = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: home,
      DENO_DIR: realDenoDir(),
      TERM: "xterm-256color",
      OLLAMA_MCP_STATE_DIR: stateDir,
    };
    const jobs = await onTerminal(["jobs"], env, project);
    gates.tableTaken.open();
    const short = liveId.slice(0, 8);
    const tail = await onTerminal(["jobs", "tail", short], env, project, {
      text: `--- job ${liveId}`,
      then: () => gates.tailStarted.open(),
    });

    const shown = (text: string) => text.split(home).join("~");
    const files = [
      write(outDir, "jobs.svg", "ollama-delegate jobs", shown(jobs)),
      write(outDir, "jobs_tail.svg", `ollama-delegate jobs tail ${short}`, shown(tail)),
    ];
    return { jobs: shown(jobs), tail: shown(tail), files };
  } finally {
    // Whatever failed, nothing is left running.
    gates.tableTaken.open();
    gates.tailStarted.open();
    await server?.close();
    await emulator?.close();
    rmSync(home, { recursive: true, force: true, maxRetries: 3 });
  }
}

/** The picture of a command line and what it printed. */
function write(outDir: string, name: string, command: string, output: string): string {
  mkdirSync(outDir, { recursive: true });
  const path = join(outDir, name);
  const typed = `\x1b[32m$\x1b[0m ${command}\r\n`;
  writeFileSync(path, ansiToSvg(typed + output, { columns: COLUMNS, title: command }));
  return path;
}

/**
 * A picture's words, line by line, with what changes from run to run (ids, times, token
 * counts and costs) replaced by placeholders and runs of spaces made one: two runs of the
 * same code give the same text (see samePicture), so a test can tell when a committed
 * picture is out of date.
 */
export function comparableText(svg: string): string[] {
  const lines = [...svg.matchAll(/<text xml:space="preserve"[^>]*>(.*?)<\/text>/g)].map((m) =>
    [...m[1]!.matchAll(/<tspan[^>]*>(.*?)<\/tspan>/g)].map((t) => t[1]!).join(" ")
  );
  return lines.map((line) =>
    line
      .replace(/&#(\d+);/g, (_, code) => String.fromCharCode(Number(code)))
      .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "<uuid>")
      .replace(/\b[0-9a-f]{8}\b/g, "<id>")
      .replace(/\b\d+(\.\d+)?(ms|s|m|h)\b/g, "<time>")
      .replace(/\b\d+(\.\d+)?k\b/g, "<tokens>")
      .replace(/\bin \d+ \/ out \d+/g, "in <tokens> / out <tokens>")
      .replace(/\$\d+\.\d+/g, "$<cost>")
      .replace(/\s+/g, " ")
      .trim()
  );
}

/**
 * Whether two pictures show the same words, whatever the widths of columns and where long
 * lines wrap: those follow the lengths of times and counts.
 */
export function samePicture(a: string, b: string): boolean {
  const squeezed = (svg: string) => comparableText(svg).join("").replace(/\s+/g, "");
  return squeezed(a) === squeezed(b);
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { out: { type: "string" } } });
  const out = values.out ?? join(REPO, "docs", "images");
  const { files } = await capture(out);
  for (const f of files) console.error(`capture: wrote ${f}`);
}
