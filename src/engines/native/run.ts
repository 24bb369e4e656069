/**
 * The native engine: turns run in-process as our own agent loop, over Ollama's native chat API
 * for Ollama backends (the only one of Ollama's that sets the context per request) and over
 * OpenAI-compatible chat completions for the others. Each job folder holds `messages.jsonl` (the whole conversation so far, so a
 * follow-up resumes it, also after a restart) and `transcript.jsonl` (what was done).
 */
import { readFile, realpath, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { OllamaClient } from "../../backends/ollama.ts";
import { OllamaChatClient } from "../../backends/ollama_chat.ts";
import {
  type ChatBackend,
  ChatClient,
  type ChatClientOptions,
  type ChatEffort,
  type ChatMessage,
} from "../../backends/openai.ts";
import { errorMessage } from "../../errors.ts";
import { defaultWorkdirPolicy, realContext, refusalOf, type WorkdirPolicy } from "../workdirs.ts";
import { commonGitDir, isServerWorktree, protectAround, WORKTREES_DIR } from "../worktree_scope.ts";
import type { BackendSpec } from "../../settings/types.ts";
import type {
  Activity,
  Engine,
  EngineSetup,
  RunningTurn,
  TurnFacts,
  TurnOutcome,
  TurnSink,
  TurnSpec,
} from "../types.ts";
import { changedBetween, plantedWarnings, type Snapshot, snapshot } from "./changes.ts";
import { ContextFitter } from "./context.ts";
import { contextCap, ContextOverflowError } from "./context_budget.ts";
import {
  backendNames,
  type BackendTable,
  DEFAULT_BACKEND,
  resolveBackend,
  type ResolvedBackend,
} from "./backend.ts";
import {
  endpointError,
  failed,
  missingKeyError,
  statusOf,
  unknownBackendError,
} from "./failures.ts";
import { MESSAGES_FILE, nativeFolder, TRANSCRIPT_FILE } from "./folder.ts";
import { JsonlWriter, line, readHistory, settleWriters, withRepairNote } from "./history.ts";
import { DEFAULT_MAX_TURNS, runLoop } from "./loop.ts";
import { inlineFiles } from "./one_shot.ts";
import { toolPolicy } from "./permissions.ts";
import { systemPrompt } from "./prompt.ts";
import { type SandboxLimits, type SandboxMode, shellRunner } from "./sandbox.ts";
import { bashTool } from "./tools/bash.ts";
import { protectedPaths } from "./tools/real_paths.ts";
import { FILE_TOOLS } from "./tools/index.ts";

export interface NativeEngineConfig {
  /** The default backend: the Ollama at baseUrl. */
  baseUrl: string;
  backends: Record<string, BackendSpec>;
  sandbox: SandboxMode;
  /** What one sandboxed command may use; the defaults when absent. */
  sandboxLimits?: SandboxLimits;
  /** Where sandboxes of every server sharing this state dir coordinate (placeholders.ts). */
  sandboxRunDir?: string;
  /** The server's environment: API keys are read from here, by name, per backend. */
  parentEnv: Record<string, string | undefined>;
  /**
   * The server's own settings and records (user config dir, stateDir, claudeConfigDir):
   * hidden from commands and refused to file tools even inside a writable dir.
   */
  protect?: readonly string[];
  /** Secret-looking file names the file tools may read anyway (`allowSecretFiles`). */
  allowSecretFiles?: readonly string[];
  /** Where jobs may work (jobs/workdirs.ts); this process's home and no roots when absent. */
  workdirs?: WorkdirPolicy;
  /** Retry backoff, for tests and benchmarks. */
  backoffMs?: ChatClientOptions["backoffMs"];
  /** The largest context (tokens) a job may use; 0 or absent = the model's own. */
  maxContext?: number;
  /** Ollama's `keep_alive` for the model (e.g. "30m"); Ollama's default when empty. */
  keepAlive?: string;
  /** `<stateDir>/.worktrees`: a turn's cwd may be the worktree the server made there. */
  worktreesDir?: string;
}

/** The native engine as the server's settings configure it. */
export function createEngine(setup: EngineSetup): NativeEngine {
  const s = setup.settings;
  return new NativeEngine({
    baseUrl: s.baseUrl,
    backends: s.backends,
    sandbox: s.sandbox,
    sandboxLimits: {
      maxProcesses: s.sandboxMaxProcesses,
      maxMemoryMb: s.sandboxMaxMemoryMb,
      maxFileMb: s.sandboxMaxFileMb,
      tmpMb: s.sandboxTmpMb,
    },
    sandboxRunDir: join(s.stateDir, ".sandbox"),
    parentEnv: setup.env,
    protect: [setup.userConfigDir, s.stateDir, s.claudeConfigDir],
    allowSecretFiles: s.allowSecretFiles,
    workdirs: setup.workdirs,
    maxContext: s.maxContext,
    keepAlive: s.keepAlive,
    worktreesDir: join(s.stateDir, WORKTREES_DIR),
  });
}

export class NativeEngine implements Engine {
  readonly name = "native" as const;

  constructor(private readonly config: NativeEngineConfig) {}

  #backends(): BackendTable {
    return {
      baseUrl: this.config.baseUrl,
      backends: this.config.backends,
      env: this.config.parentEnv,
    };
  }

  /** Resolves a backend by name; undefined = the Ollama at baseUrl. */
  backend(name: string | undefined): ResolvedBackend | undefined {
    return resolveBackend(this.#backends(), name);
  }

  /** Names of every backend a call may use. */
  backendNames(): string[] {
    return backendNames(this.#backends());
  }

  start(spec: TurnSpec, sink: TurnSink): Promise<RunningTurn> {
    const controller = new AbortController();
    const done = this.#run(spec, sink, controller.signal).catch((e): TurnOutcome =>
      failed(`Cannot run job: ${errorMessage(e)}`)
    );
    return Promise.resolve({
      done,
      async stop() {
        controller.abort();
        await done;
      },
    });
  }

  async #run(spec: TurnSpec, sink: TurnSink, signal: AbortSignal): Promise<TurnOutcome> {
    const started = performance.now();
    const backend = this.backend(spec.backend);
    if (!backend) return failed(unknownBackendError(spec.backend, this.backendNames()));
    if (backend.apiKeyEnv && !backend.apiKey) return failed(missingKeyError(backend));
    const cwd = await realpath(spec.cwd);
    const roots = [cwd, ...(await Promise.all(spec.options.addDirs.map((d) => realpath(d))))];
    // The server checked these already; judged again here because the directories are
    // resolved anew and anything may have changed since (a follow-up, a restart).
    const context = await realContext(this.config.workdirs ?? defaultWorkdirPolicy());
    for (const root of roots) {
      // The server made this worktree for the job, inside its own state dir.
      if (root === cwd && isServerWorktree(cwd, spec.worktree, this.config.worktreesDir)) continue;
      const refusal = refusalOf(root, context);
      if (refusal) {
        return failed(
          `Cannot run job: the native engine makes cwd and add_dirs writable, and "${root}" ` +
            `is refused: ${refusal.reason}. Use a project directory`,
        );
      }
    }
    // As written and as resolved, also when missing: a directory created later stays protected.
    const listed = await protectedPaths(this.config.protect ?? []);
    const worktree = spec.worktree && await realpath(spec.worktree.path);
    const protect = worktree ? protectAround(listed, worktree) : listed;
    const runner = shellRunner(this.config.sandbox, undefined, {
      ...(this.config.sandboxLimits ? { limits: this.config.sandboxLimits } : {}),
      ...(this.config.sandboxRunDir ? { runDir: this.config.sandboxRunDir } : {}),
    });
    const policy = toolPolicy(
      [...FILE_TOOLS, bashTool(runner)],
      spec.options.permissionMode,
      spec.options.allowedTools,
      spec.options.disallowedTools,
      cwd,
    );
    const prompt = await readFile(spec.promptPath, "utf8");

    const common: ChatClientOptions = {
      baseUrl: backend.url,
      label: backend.name === DEFAULT_BACKEND
        ? `Ollama (${backend.url})`
        : `backend "${backend.name}"`,
      ...(backend.apiKey ? { apiKey: backend.apiKey } : {}),
      ...(this.config.backoffMs ? { backoffMs: this.config.backoffMs } : {}),
      onRetry: ({ attempt, waitMs, reason }) =>
        sink.activity({
          kind: "error",
          text: `${reason} from ${backend.name}; retry ${attempt} in ${waitMs} ms`,
        }),
    };
    let client: ChatBackend;
    let model: { contextLength?: number; capabilities?: string[] } | undefined;
    let loadedContext: number | undefined;
    if (backend.kind === "ollama") {
      const keepAlive = this.config.keepAlive;
      client = new OllamaChatClient({ ...common, ...(keepAlive ? { keepAlive } : {}) });
      const ollama = new OllamaClient(backend.url);
      // Unknown (undefined) when Ollama cannot say: the chat request then reports why.
      [model, loadedContext] = await Promise.all([
        ollama.show(spec.model).catch(() => undefined),
        ollama.ps()
          .then((loaded) => loaded.find((m) => sameModel(m.name, spec.model))?.contextLength)
          .catch(() => undefined),
      ]);
    } else {
      const openai = new ChatClient(common);
      client = openai;
      const contextLength = await openai.contextLength(spec.model).catch(() => undefined);
      model = contextLength !== undefined ? { contextLength } : undefined;
    }
    const cap = contextCap(model?.contextLength, this.config.maxContext ?? 0);
    const effort = usableEffort(spec.options.effort, model?.capabilities);

    let userText = prompt;
    if (spec.options.files && spec.options.files.length > 0) {
      const contextTokens = cap.source === "assumed" ? undefined : cap.tokens;
      const inlined = await inlineFiles({
        prompt,
        files: spec.options.files,
        cwd,
        roots,
        protect,
        allowSecretFiles: this.config.allowSecretFiles ?? [],
        pathRefusal: policy.pathRefusal,
        model: spec.model,
        ...(contextTokens !== undefined ? { contextTokens } : {}),
      });
      userText = inlined.message;
      sink.activity({
        kind: "tool",
        name: "files",
        detail: `${inlined.included.length} inlined (~${inlined.fileTokens} tokens)` +
          (inlined.skipped.length > 0
            ? `, ${inlined.skipped.length} skipped: ${
              inlined.skipped.map((s) => `${s.path} (${s.reason})`).join("; ")
            }`
            : ""),
      });
    }

    const { messages: history, repair } = spec.previousDir
      ? await readHistory(spec.previousDir)
      : { messages: [] };
    // Rebuilt every turn: a follow-up may change the tools, the mode or the appended prompt.
    const system: ChatMessage = {
      role: "system",
      content: systemPrompt({
        cwd,
        tools: policy.tools,
        ...(spec.options.appendSystemPrompt ? { append: spec.options.appendSystemPrompt } : {}),
      }),
    };
    const messages: ChatMessage[] = [system, ...history.filter((m) => m.role !== "system")];
    messages.push({ role: "user", content: userText });

    const writer = new JsonlWriter(join(spec.dir, MESSAGES_FILE));
    const transcript = new JsonlWriter(join(spec.dir, TRANSCRIPT_FILE));
    await writeFile(join(spec.dir, MESSAGES_FILE), messages.map(line).join(""), { mode: 0o600 });
    sink.sessionStarted({ permissionMode: spec.options.permissionMode, model: spec.model });
    if (repair) {
      sink.activity({ kind: "error", text: repair });
      transcript.push({ kind: "text", text: `[history repaired] ${repair}` });
    }

    const watchesShell = policy.tools.some((t) => t.name === "Bash") && runner.kind !== "refused";
    let before: Snapshot | undefined = watchesShell ? await snapshot(roots) : undefined;
    // Nested repositories and credential stores get the protection the top-level ones get.
    if (before && runner.kind === "bwrap") {
      runner.nested = { readOnly: before.nestedGit, hidden: before.credentials };
    }
    // git in the worktree reads the repository's `.git` (its `.git` file points there):
    // mounted read-only, so the delegate's commands see it but cannot change it.
    if (spec.worktree && runner.kind === "bwrap") {
      const readOnly = [...(runner.nested?.readOnly ?? []), commonGitDir(spec.worktree)];
      runner.nested = { ...runner.nested, readOnly };
    }
    // Old tool output is shortened only when a request would not fit, and said so.
    const fitter = new ContextFitter({
      cap,
      sizeContext: backend.kind === "ollama",
      ...(loadedContext !== undefined ? { loadedContext } : {}),
      onShortened: (count, note) => {
        transcript.push({ kind: "text", text: note });
        sink.activity({ kind: "text", text: note });
        if (count > 0) sink.contextElided?.(count);
      },
    });
    let outcome: TurnOutcome;
    try {
      const result = await runLoop(messages, {
        client,
        prepare: (request) => {
          const fitted = fitter.fit(request);
          return effort ? { ...fitted, effort } : fitted;
        },
        model: spec.model,
        policy,
        ctx: {
          cwd,
          roots,
          protect,
          allowSecretFiles: this.config.allowSecretFiles ?? [],
          pathRefusal: policy.pathRefusal,
          signal,
          fileChanged: (path) => sink.fileChanged?.(path),
          commandRun: (run) => sink.commandRun?.(run),
          processStarted: (pid) => sink.childStarted(pid),
        },
        maxTurns: spec.options.maxTurns ?? DEFAULT_MAX_TURNS,
        signal,
        activity: (a) => sink.activity(a),
        toolCall: (info) => sink.toolCall(info),
        warning: (text) => sink.warning?.(text),
        transcript: (entry) => transcript.push(entry),
        remember: (added) => {
          for (const m of added) writer.push(m);
        },
      });
      outcome = {
        ok: result.ok,
        resultText: withRepairNote(result.text, repair),
        ...(result.errorText ? { errorText: result.errorText } : {}),
        usage: {
          inputTokens: result.inputTokens,
          outputTokens: result.outputTokens,
          cacheReadTokens: 0,
          cacheCreationTokens: 0,
          numTurns: result.turns,
          durationMs: Math.round(performance.now() - started),
        },
        exitCode: null,
        signal: null,
        permissionDenials: result.denials,
      };
    } catch (e) {
      outcome = signal.aborted
        ? failed("Stopped before the model answered")
        : e instanceof ContextOverflowError
        ? failed(e.message)
        : failed(endpointError(e, backend, spec.model), statusOf(e));
    }
    if (before) {
      const after = await snapshot(roots);
      for (const path of changedBetween(before, after)) sink.fileChanged?.(path);
      for (const text of plantedWarnings(changedBetween(before, after), roots)) {
        sink.warning?.(text);
      }
      const capped = before.capped || after.capped;
      if (capped) {
        sink.activity({
          kind: "error",
          text: (capped === "project"
            ? "The job's directories hold over 20,000 entries"
            : "The job's version control and dependency folders hold over 200,000 entries") +
            ": the list of changed files covers Write and Edit calls and only part of what " +
            "commands changed",
        });
      }
      before = undefined;
    }
    return await settleWriters(outcome, [writer, transcript]);
  }

  recentActivity(dir: string, limit: number): Promise<Activity[]> {
    return nativeFolder.recentActivity(dir, limit);
  }

  facts(dir: string): Promise<TurnFacts> {
    return nativeFolder.facts(dir);
  }
}

/** Ollama names a model without a tag as `:latest`. */
function sameModel(a: string, b: string): boolean {
  const full = (name: string) => (/:[^/]*$/.test(name) ? name : `${name}:latest`);
  return full(a) === full(b);
}

/**
 * The effort to send. A model that Ollama says cannot think gets none but "off": Ollama
 * refuses `think` for it (HTTP 400 "does not support thinking").
 */
function usableEffort(
  effort: ChatEffort | undefined,
  capabilities: readonly string[] | undefined,
): ChatEffort | undefined {
  if (effort === undefined || effort === "off" || capabilities === undefined) return effort;
  return capabilities.includes("thinking") ? effort : undefined;
}

export { DEFAULT_BACKEND, MESSAGES_FILE, type ResolvedBackend, TRANSCRIPT_FILE };
