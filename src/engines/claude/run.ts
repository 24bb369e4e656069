import { open, readFile, realpath } from "node:fs/promises";
import { dirname, join } from "node:path";
import process from "node:process";
import { isWindows, osPlatform } from "../../platform/runtime.ts";
import { type SpawnedProcess, SpawnError, spawnProcess } from "../../platform/spawn.ts";
import { type JobScope, killTree, startTicks, sweepJob } from "../../platform/tree_kill.ts";
import { which } from "../../platform/which.ts";
import {
  type Activity,
  type Engine,
  type EngineSetup,
  failedTurn,
  type RunningTurn,
  type TurnFacts,
  type TurnOutcome,
  type TurnSink,
  type TurnSpec,
} from "../types.ts";
import { claudeFolder, STDERR_FILE, STREAM_FILE } from "./folder.ts";
import { OllamaClient } from "../../backends/ollama.ts";
import { DEFAULT_CLAUDE_TOOLS } from "../../settings/types.ts";
import { claudeArgs, delegateTools } from "./argv.ts";
import {
  estimatePromptTokens,
  judgeTurn,
  loadedContextOf,
  refusalText,
  skipsContextCheck,
} from "./context_check.ts";
import { claudeChildEnv, pinnedSettings } from "./env.ts";
import { protectedFileRules, worktreeFileRules } from "./file_rules.ts";
import { commonGitDir, isServerWorktree, protectAround, WORKTREES_DIR } from "../worktree_scope.ts";
import { findSandboxTools, planSandbox, sandboxSettings, withNestedHostRun } from "./sandbox.ts";
import { LineSplitter } from "../line_splitter.ts";
import { parseStreamLine, type ResultEvent } from "./stream.ts";

/** Longest stdout line we parse (bigger ones stay on disk unparsed). */
const MAX_PARSED_LINE = 32 * 1024 * 1024;
/**
 * How long Claude Code itself may take to exit once everything it started is gone. It
 * writes each message of its session file as it goes, so a follow-up still resumes; its
 * own shutdown (about 1.5 s after SIGTERM) is not worth holding a cancel for.
 */
const ROOT_GRACE_MS = 500;
/** stderr kept for the error text of a failed job. */
const STDERR_TAIL = 20_000;
/**
 * How long what a turn left running gets between SIGTERM and SIGKILL once Claude Code has
 * exited: nothing a delegate started may outlive its turn.
 */
const LEFTOVER_GRACE_MS = 1000;
/** How long asking Ollama which models are loaded may hold up a turn's start or end. */
const PS_TIMEOUT_MS = 3000;
/** The environment entry that marks every process of a turn (see platform/posix/job_sweep.ts). */
export const TURN_MARKER = "OLLAMA_DELEGATE_TURN";

/**
 * The marker of one turn. It is derived, not random, so that a server that starts after
 * another died can still find what that one's delegates left. Forging it gains a delegate
 * nothing: a process carrying another turn's marker is only ended with that turn.
 */
export function turnMarker(jobId: string, turn: number): { name: string; value: string } {
  return { name: TURN_MARKER, value: `${jobId}.${turn}` };
}

export interface ClaudeEngineConfig {
  claudeBin: string;
  claudeConfigDir: string;
  baseUrl: string;
  parentEnv: Record<string, string | undefined>;
  /** "on" (default): Claude Code's own sandbox confines delegates' Bash where bwrap exists. */
  sandbox?: "on" | "off";
  /** The server's own settings and records: delegates' commands may not read or write them. */
  protect?: readonly string[];
  /**
   * Where a `claudeBin` with a path separator is resolved: the server's directory, which
   * the user chose, never a job's working directory. Defaults to the current directory.
   */
  serverCwd?: string;
  /**
   * The built-in tools delegates get (`--tools`); a call's allowed_tools narrows them.
   * Defaults to DEFAULT_CLAUDE_TOOLS.
   */
  claudeTools?: readonly string[];
  /** The state dir: a turn's cwd may be the worktree the server made in it. */
  stateDir?: string;
}

/** The claude engine as the server's settings configure it. */
export function createEngine(setup: EngineSetup): ClaudeEngine {
  const s = setup.settings;
  return new ClaudeEngine({
    claudeBin: s.claudeBin,
    claudeConfigDir: s.claudeConfigDir,
    baseUrl: s.baseUrl,
    parentEnv: setup.env,
    sandbox: s.sandbox,
    protect: [setup.userConfigDir, s.stateDir],
    serverCwd: setup.serverCwd,
    claudeTools: s.claudeTools,
    stateDir: s.stateDir,
  });
}

/** Runs turns as `claude -p` children pointed at Ollama. */
export class ClaudeEngine implements Engine {
  readonly name = "claude" as const;

  private readonly serverCwd: string;

  constructor(private readonly config: ClaudeEngineConfig) {
    this.serverCwd = config.serverCwd ?? process.cwd();
  }

  recentActivity(dir: string, limit: number): Promise<Activity[]> {
    return claudeFolder.recentActivity(dir, limit);
  }

  facts(dir: string): Promise<TurnFacts> {
    return claudeFolder.facts(dir);
  }

  /** The environment a delegate of `model` gets (shown by `ollama_models`). */
  childEnv(model: string): Record<string, string> {
    return claudeChildEnv({
      parentEnv: this.config.parentEnv,
      baseUrl: this.config.baseUrl,
      model,
      claudeConfigDir: this.config.claudeConfigDir,
    });
  }

  /**
   * The context `/api/ps` shows `model` loaded with; undefined when it is not loaded, is a
   * cloud model, or Ollama does not say (older versions, another server at baseUrl).
   */
  async #loadedContext(model: string): Promise<number | undefined> {
    if (skipsContextCheck(model)) return undefined;
    try {
      const loaded = await new OllamaClient(this.config.baseUrl, PS_TIMEOUT_MS).ps();
      return loadedContextOf(loaded, model);
    } catch {
      // Not knowing is no reason to refuse: the turn runs and its usage is checked after.
      return undefined;
    }
  }

  /** Where `claudeBin` resolves for a child, or undefined when it cannot be found. */
  resolveBinary(cwd: string): string | undefined {
    return which(this.config.claudeBin, this.childEnv("x"), cwd);
  }

  /**
   * What the turn must not read or write: the server's own directories, with the job's own
   * worktree carved out of the state dir when the turn works in it.
   */
  async #protectScope(
    spec: TurnSpec,
  ): Promise<{
    protect: string[];
    extraRules: string[];
    readOnly: string[];
    hiddenExcept?: { dir: string; keep: string };
  }> {
    const listed = [...(this.config.protect ?? []), this.config.claudeConfigDir];
    const stateDir = this.config.stateDir;
    const worktreesDir = stateDir && join(stateDir, WORKTREES_DIR);
    const cwd = await realpath(spec.cwd).catch(() => spec.cwd);
    if (!stateDir || !spec.worktree || !isServerWorktree(cwd, spec.worktree, worktreesDir)) {
      return { protect: listed, extraRules: [], readOnly: [] };
    }
    const real = (p: string) => realpath(p).catch(() => p);
    const keep = await real(spec.worktree.path);
    const gitCommon = await real(commonGitDir(spec.worktree));
    return {
      // The worktree's own git dir lies below it: its HEAD and commondir steer the server's
      // commits, so they stay read-only like the rest.
      readOnly: [gitCommon, await real(spec.worktree.gitDir)],
      hiddenExcept: { dir: await real(stateDir), keep },
      protect: protectAround(await Promise.all(listed.map(real)), keep),
      extraRules: worktreeFileRules({
        stateDir: await real(stateDir),
        checkout: dirname(gitCommon),
        worktree: keep,
      }),
    };
  }

  async start(spec: TurnSpec, sink: TurnSink): Promise<RunningTurn> {
    const marker = turnMarker(spec.jobId, spec.turn);
    const env = claudeChildEnv({
      parentEnv: this.config.parentEnv,
      baseUrl: this.config.baseUrl,
      model: spec.model,
      claudeConfigDir: this.config.claudeConfigDir,
      marker,
    });
    // Resolved once, to an absolute path, and exactly that file is spawned: the OS must not
    // look the name up again in the job's working directory.
    const command = which(this.config.claudeBin, env, this.serverCwd);
    if (!command) {
      return finished(
        `Cannot start Claude Code: "${this.config.claudeBin}" was not found on the delegate's ` +
          `PATH (only its absolute entries are searched). Install Claude Code, or set its ` +
          `absolute path with ollama-delegate config --claude-bin <path> (or OLLAMA_MCP_CLAUDE_BIN)`,
      );
    }
    const plan = planSandbox(this.config.sandbox ?? "on", findSandboxTools(env), osPlatform);
    if (plan.kind === "refused") return finished(plan.reason);
    const roots = [spec.cwd, ...spec.options.addDirs];
    const guard = await withNestedHostRun(await this.#protectScope(spec), plan, roots);
    const sandbox = plan.kind === "on"
      ? sandboxSettings({
        cwd: spec.cwd,
        addDirs: spec.options.addDirs,
        ...(env.HOME ? { home: env.HOME } : {}),
        protect: guard.protect,
        readOnly: guard.readOnly,
        ...(guard.hiddenExcept ? { hiddenExcept: guard.hiddenExcept } : {}),
      })
      : undefined;
    const denyRules = [
      ...protectedFileRules({
        roots: [spec.cwd, ...spec.options.addDirs],
        ...(env.HOME ? { home: env.HOME } : {}),
        protect: guard.protect,
      }),
      ...guard.extraRules,
    ];
    const prompt = await readFile(spec.promptPath);
    const tools = delegateTools(
      this.config.claudeTools ?? DEFAULT_CLAUDE_TOOLS,
      spec.options.allowedTools,
      spec.options.disallowedTools,
    );
    const estimate = estimatePromptTokens({
      tools,
      permissionMode: spec.options.permissionMode,
      taskChars: new TextDecoder().decode(prompt).length,
      appendChars: spec.options.appendSystemPrompt?.length ?? 0,
      sandbox: sandbox !== undefined,
    });
    const refusal = refusalText({
      model: spec.model,
      loadedContext: await this.#loadedContext(spec.model),
      estimate,
    });
    if (refusal) return finished(refusal);
    const args = claudeArgs(
      spec,
      pinnedSettings(this.config.baseUrl, spec.model, sandbox, denyRules),
      tools,
    );
    let child: SpawnedProcess;
    try {
      child = await spawnProcess({
        command,
        args,
        cwd: spec.cwd,
        env,
        stdin: prompt,
        detached: true,
      });
    } catch (e) {
      const why = e instanceof SpawnError ? e.code : (e as Error).message;
      return finished(`Cannot start Claude Code "${command}": ${why}`);
    }
    sink.childStarted(child.pid);
    // The child leads a session of its own (detached); its pid is that session's id.
    const rootStart = await startTicks(child.pid).catch(() => undefined);
    const scope: JobScope = {
      ...(isWindows ? {} : { sessionId: child.pid }),
      marker,
      ...(rootStart !== undefined ? { notBeforeTicks: rootStart } : {}),
    };
    let swept: Promise<void> | undefined;
    const sweep = (graceMs: number) =>
      swept ??= sweepJob(scope, { graceMs }).then(() => {}, () => {});
    const streamFile = await open(join(spec.dir, STREAM_FILE), "a");
    const stderrFile = await open(join(spec.dir, STDERR_FILE), "a");
    let result: ResultEvent | undefined;
    const splitter = new LineSplitter(MAX_PARSED_LINE, (line) => {
      for (const item of parseStreamLine(line)) {
        if (item.type === "init") {
          sink.sessionStarted({
            ...(item.permissionMode ? { permissionMode: item.permissionMode } : {}),
            ...(item.model ? { model: item.model } : {}),
          });
        } else if (item.type === "activity") {
          if (item.toolCall) sink.toolCall();
          sink.activity(item.activity);
        } else {
          result = item.result;
        }
      }
    });
    const pumpStdout = (async () => {
      for await (const chunk of child.stdout) {
        await streamFile.write(chunk);
        splitter.push(chunk);
      }
      splitter.end();
    })();
    let stderrTail = "";
    const pumpStderr = (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of child.stderr) {
        await stderrFile.write(chunk);
        stderrTail = (stderrTail + decoder.decode(chunk, { stream: true })).slice(-STDERR_TAIL);
      }
    })();
    const done = (async (): Promise<TurnOutcome> => {
      const status = await child.status;
      // Nothing the delegate started outlives its turn: what left the tree (setsid -f, a
      // double fork) is found by session and marker.
      await sweep(LEFTOVER_GRACE_MS);
      // A grandchild can keep the pipes open after claude exits; its output is not ours.
      await Promise.race([Promise.allSettled([pumpStdout, pumpStderr]), delay(2000)]);
      await streamFile.close();
      await stderrFile.close();
      const outcome = outcomeOf(result, status.code, status.signal, stderrTail);
      const verdict = outcome.usage && judgeTurn({
        model: spec.model,
        estimate,
        usage: outcome.usage,
        loadedContext: await this.#loadedContext(spec.model),
      });
      return verdict ? judged(outcome, verdict, sink) : outcome;
    })();
    return {
      done,
      async stop(graceMs: number) {
        await killTree(child.pid, { graceMs, rootGraceMs: Math.min(graceMs, ROOT_GRACE_MS) });
        await child.status;
        await sweep(Math.min(graceMs, LEFTOVER_GRACE_MS));
      },
    };
  }
}

/**
 * A turn whose prompts Ollama cut fails: the model answered without all of its instructions,
 * tools or task, so its answer is no result. What it said stays as partial output beside the
 * warning. A turn whose requests only reached the loaded context keeps its state, with the
 * warning beside it.
 */
function judged(
  outcome: TurnOutcome,
  verdict: NonNullable<ReturnType<typeof judgeTurn>>,
  sink: TurnSink,
): TurnOutcome {
  sink.warning?.(verdict.warning);
  if (verdict.kind !== "cut" || !outcome.ok) return outcome;
  return {
    ...outcome,
    ok: false,
    errorText: "context_overflow: Ollama cut this job's prompt to fit the model's context " +
      "(see the warning); what the model answered was written without the whole of it",
  };
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    (t as unknown as { unref?: () => void }).unref?.();
  });
}

function finished(errorText: string): RunningTurn {
  return { done: Promise.resolve(failedTurn(errorText)), stop: () => Promise.resolve() };
}

/** Exit 0 without a result event is a failure: the run did not finish. */
export function outcomeOf(
  result: ResultEvent | undefined,
  exitCode: number | null,
  signal: string | null,
  stderrTail: string,
): TurnOutcome {
  const base = { exitCode, signal, permissionDenials: result?.permissionDenials ?? [] };
  if (result) {
    const ok = !result.isError && exitCode === 0;
    const outcome: TurnOutcome = {
      ...base,
      ok,
      resultText: result.text,
      usage: result.usage,
      ...(result.apiErrorStatus !== undefined ? { apiErrorStatus: result.apiErrorStatus } : {}),
    };
    if (!ok) {
      outcome.errorText = result.isError
        ? (result.errors.join("; ") || result.text || `Claude Code reported ${result.subtype}`)
        : exitText(exitCode, signal, stderrTail);
    }
    return outcome;
  }
  return {
    ...base,
    ok: false,
    resultText: "",
    errorText: exitCode === 0
      ? "Claude Code exited without a result event; the run did not finish"
      : exitText(exitCode, signal, stderrTail),
  };
}

function exitText(code: number | null, signal: string | null, stderrTail: string): string {
  const tail = stderrTail.trim();
  if (tail) return tail;
  return signal ? `claude was ended by ${signal}` : `claude exited with code ${code}`;
}
