/**
 * The native engine: turns run in-process as our own agent loop, over Ollama's native chat API
 * for Ollama backends (the only one of Ollama's that sets the context per request) and over
 * OpenAI-compatible chat completions for the others. Each job folder holds `messages.jsonl`
 * (the whole conversation so far, so a follow-up resumes it, also after a restart) and
 * `transcript.jsonl` (what was done).
 *
 * A turn's backend comes resolved by the job layer (TurnSpec.backend), its directories from
 * turn_scope.ts, its client from model_connection.ts, its first messages from
 * turn_conversation.ts, what its shell may touch and changed from sandbox/shell_watch.ts, its
 * outcome from turn_outcome.ts; this module puts the turn together in three steps: prepare,
 * connect, converse.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { kindFacts } from "../../backends/kinds.ts";
import { errorMessage } from "../../errors.ts";
import { collectGuardIdentities, type GuardIdentities } from "../../guard/identities.ts";
import { gitCacheDir } from "../../guard/git_secrets.ts";
import { hiddenByReal, hiddenNames, hiddenThroughTurn } from "../../guard/hidden_list.ts";
import { knownStoresDir } from "../../guard/known_stores.ts";
import { WORKTREES_DIR } from "../../guard/worktree_scope.ts";
import { closedNote } from "../../guard/toolchains.ts";
import {
  type Activity,
  type CheckResult,
  type Engine,
  type EngineSetup,
  failedTurn,
  type RunningTurn,
  type TurnFacts,
  type TurnOutcome,
  type TurnSink,
  type TurnSpec,
  type VerifySpec,
} from "../types.ts";
import { ContextFitter } from "./context/fitter.ts";
import { type ContextCap, contextCap } from "./context/budget.ts";
import type { ResolvedBackend } from "../../settings/backends.ts";
import { unknownBackendError } from "../backend_failures.ts";
import { missingKeyError } from "./failures.ts";
import { LIVE_OUTPUT, MESSAGES_FILE, nativeFolder, TRANSCRIPT_FILE } from "./folder.ts";
import { JsonlWriter, settleWriters } from "./jsonl_writer.ts";
import { DEFAULT_MAX_TURNS, runLoop } from "./loop.ts";
import { type ModelConnection, usableEffort } from "./model_connection.ts";
import { connectTurn } from "./endpoint_failover.ts";
import { parseRule, type ToolPolicy, toolPolicy } from "./permissions.ts";
import { type Effort, isEditingMode } from "../../settings/types.ts";
import { placeholderRunDir } from "../mount_placeholders.ts";
import { type ShellRunner, shellRunner } from "./sandbox/shell_runner.ts";
import { limitsOf } from "../sandbox_limits.ts";
import { watchesShell, watchShell } from "./sandbox/shell_watch.ts";
import { beginTurnChanges, reportChanges, type TurnChanges } from "../tree/turn_changes.ts";
import { bashTool } from "./tools/bash.ts";
import { FILE_TOOLS } from "./tools/index.ts";
import { loopFailure, loopOutcome } from "./turn_outcome.ts";
import { turnScope } from "./turn_scope.ts";
import { openConversation } from "./turn_conversation.ts";
import { toolchainsFor, verifyNative } from "./verify.ts";
import type { NativeEngineConfig } from "./engine_config.ts";

export type { NativeEngineConfig };

/** The native engine as the server's settings configure it. */
export function createEngine(setup: EngineSetup): NativeEngine {
  const s = setup.settings;
  return new NativeEngine({
    sandbox: s.sandbox,
    sandboxLimits: limitsOf(s),
    sandboxRunDir: placeholderRunDir(s.stateDir),
    parentEnv: setup.env,
    protect: [setup.userConfigDir, s.stateDir, s.claudeConfigDir],
    allowSecretFiles: s.allowSecretFiles,
    workdirs: setup.workdirs,
    maxContext: s.maxContext,
    keepAlive: s.keepAlive,
    worktreesDir: join(s.stateDir, WORKTREES_DIR),
    gitCacheDir: gitCacheDir(s.stateDir),
    storesDir: knownStoresDir(s.stateDir),
    toolchainPaths: s.toolchainPaths,
  });
}

/** What a turn is set up with before its model is reached (NativeEngine.#prepare). */
interface Prepared {
  started: number;
  backend: ResolvedBackend;
  cwd: string;
  roots: string[];
  protect: string[];
  runner: ShellRunner;
  policy: ToolPolicy;
  /** The turn's view of its directories' changes; `shell`: whether commands can run. */
  changes: TurnChanges;
  shell: boolean;
  /** What the protected files are, whatever names they go by, before the model acts. */
  guard: GuardIdentities;
  prompt: string;
  /** `transcript.jsonl`: what was done (written from the first line on). */
  transcript: JsonlWriter;
}

/** The model the turn reached (NativeEngine.#connect), and the context it may fill there. */
interface Connected {
  client: ModelConnection["client"];
  loadedContext: number | undefined;
  cap: ContextCap;
  effort: Effort | undefined;
}

export class NativeEngine implements Engine {
  readonly name = "native" as const;

  constructor(private readonly config: NativeEngineConfig) {}

  start(spec: TurnSpec, sink: TurnSink): Promise<RunningTurn> {
    const controller = new AbortController();
    const done = this.#run(spec, sink, controller.signal).catch((e): TurnOutcome =>
      failedTurn(`Cannot run job: ${errorMessage(e)}`)
    );
    return Promise.resolve({
      done,
      async stop() {
        controller.abort();
        await done;
      },
    });
  }

  /** A turn in three steps: prepare (no model yet), connect, run the conversation. */
  async #run(spec: TurnSpec, sink: TurnSink, signal: AbortSignal): Promise<TurnOutcome> {
    const prepared = await this.#prepare(spec, sink);
    if ("refused" in prepared) return failedTurn(prepared.refused);
    try {
      const connected = await this.#connect(spec, sink, prepared);
      return await this.#converse(spec, sink, signal, prepared, connected);
    } finally {
      prepared.changes.release();
    }
  }

  /**
   * Everything decided before the model is reached: the backend's key, the turn's directories,
   * its shell and tools, the changes' baseline, the protected files and the prompt.
   */
  async #prepare(spec: TurnSpec, sink: TurnSink): Promise<Prepared | { refused: string }> {
    const started = performance.now();
    const backend = spec.backend;
    if (!backend) return { refused: "Cannot run job: the job layer gave the turn no backend" };
    if ("unknown" in backend) {
      return { refused: unknownBackendError(backend.unknown, backend.configured) };
    }
    if (backend.apiKeyEnv && !backend.apiKey) return { refused: missingKeyError(backend) };
    const scope = await turnScope(spec, this.config);
    if ("refused" in scope) return scope;
    const runner = shellRunner(this.config.sandbox, undefined, {
      ...(this.config.sandboxLimits ? { limits: this.config.sandboxLimits } : {}),
      ...(this.config.sandboxRunDir ? { runDir: this.config.sandboxRunDir } : {}),
    });
    if (runner.kind === "bwrap" && this.config.storesDir) runner.storesDir = this.config.storesDir;
    const policy = turnPolicy(spec, sink, runner, scope.cwd);
    // Commands' changes are looked for by the server; Write and Edit report their own.
    const shell = watchesShell(policy.tools, runner);
    if (shell && runner.kind === "bwrap") {
      runner.toolchains = await toolchainsFor(this.config, scope.roots, spec.dir);
      const closed = closedNote(runner.toolchains.view);
      if (closed) sink.warning?.(closed);
    }
    const changes = await beginTurnChanges(scope.roots, { walk: shell });
    try {
      const guard = await collectGuardIdentities(scope.roots, {
        allowSecretFiles: this.config.allowSecretFiles ?? [],
        ...(changes.list ? { list: changes.list } : {}),
        ...(shell ? { gitObjects: { cacheDir: this.config.gitCacheDir } } : {}),
      });
      for (const note of guard.git.notes) sink.warning?.(note);
      const prompt = await readFile(spec.promptPath, "utf8");
      const transcript = new JsonlWriter(join(spec.dir, TRANSCRIPT_FILE));
      return {
        started,
        backend,
        ...scope,
        runner,
        policy,
        changes,
        shell,
        guard,
        prompt,
        transcript,
      };
    } catch (e) {
      changes.release();
      throw e;
    }
  }

  /** Reaches the model on the endpoint the turn was placed on, and sizes its context. */
  async #connect(spec: TurnSpec, sink: TurnSink, prepared: Prepared): Promise<Connected> {
    const { transcript } = prepared;
    const { client, model, loadedContext } = await connectTurn(
      prepared.backend,
      spec.model,
      spec.endpoint,
      {
        ...(this.config.backoffMs ? { backoffMs: this.config.backoffMs } : {}),
        ...(this.config.keepAlive ? { keepAlive: this.config.keepAlive } : {}),
        sessionId: spec.sessionId,
        sink,
      },
      (text) => transcript.push({ kind: "text", text: `[endpoint moved] ${text}` }),
    );
    return {
      client,
      loadedContext,
      cap: contextCap(model?.contextLength, this.config.maxContext ?? 0),
      effort: usableEffort(spec.options.effort, model?.capabilities),
    };
  }

  /** Runs the conversation: written out, then the agent loop, then what it changed. */
  async #converse(
    spec: TurnSpec,
    sink: TurnSink,
    signal: AbortSignal,
    prepared: Prepared,
    connected: Connected,
  ): Promise<TurnOutcome> {
    const { started, backend, cwd, roots, protect, runner, policy, changes, shell, guard } =
      prepared;
    const { transcript } = prepared;
    const allowSecretFiles = this.config.allowSecretFiles ?? [];
    const { messages, history } = await openConversation(spec, sink, {
      ...prepared,
      allowSecretFiles,
      cap: connected.cap,
    });
    const { repair } = history;
    const writer = new JsonlWriter(join(spec.dir, MESSAGES_FILE));
    sink.sessionStarted({ permissionMode: spec.options.permissionMode, model: spec.model });
    if (repair) {
      sink.activity({ kind: "error", text: repair });
      transcript.push({ kind: "text", text: `[history repaired] ${repair}` });
    }

    if (guard.incomplete) {
      sink.activity({
        kind: "error",
        text: `The job's directories could not all be checked for links to protected files ` +
          `(${guard.incomplete}): Write and Edit are refused this turn, and Read skips files ` +
          "with other hard links",
      });
    }
    if (shell) watchShell(runner, changes, spec.worktree, roots, guard);
    // What its commands' sandbox hides, named in the reply (no Bash, no sandbox: nothing).
    const hiddenAtStart = shell && runner.kind === "bwrap"
      ? hiddenByReal(roots, runner.nested?.hidden ?? [], guard.secretPaths)
      : new Map<string, string>();
    sink.hidden?.(hiddenNames(hiddenAtStart));
    // Old tool output is shortened only when a request would not fit, and said so.
    const fitter = new ContextFitter({
      cap: connected.cap,
      sizeContext: kindFacts(backend.kind).sizesContext,
      ...(connected.loadedContext !== undefined ? { loadedContext: connected.loadedContext } : {}),
      leftOut: history.leftOut,
      onShortened: (count, note) => {
        transcript.push({ kind: "text", text: note });
        sink.activity({ kind: "text", text: note });
        if (count > 0) sink.contextElided?.(count);
      },
    });
    const effort = connected.effort;
    let outcome: TurnOutcome;
    try {
      const result = await runLoop(messages, {
        client: connected.client,
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
          allowSecretFiles,
          guard,
          pathRefusal: policy.pathRefusal,
          signal,
          fileChanged: (path) => sink.fileChanged?.(path),
          commandRun: (run) => sink.commandRun?.(run),
          warning: (text) => sink.warning?.(text),
          processStarted: (pid) => sink.childStarted(pid),
        },
        maxTurns: spec.options.maxTurns ?? DEFAULT_MAX_TURNS,
        signal,
        activity: (a) => sink.activity(a),
        ...(sink.ask ? { ask: sink.ask.bind(sink) } : {}),
        toolCall: (info) => sink.toolCall(info),
        warning: (text) => sink.warning?.(text),
        response: (tokens) => sink.response?.(tokens),
        transcript: (entry) => transcript.push(entry),
        // Beside the entries, for `jobs tail` alone (folder.ts reads them as no entry).
        output: (id, text) => transcript.push({ kind: LIVE_OUTPUT, id, text }),
        remember: (added) => {
          for (const m of added) writer.push(m);
        },
      });
      outcome = loopOutcome(result, repair, started);
    } catch (e) {
      // Named by the endpoint the turn ended on.
      const at = spec.endpoint ? { ...backend, url: spec.endpoint.url } : backend;
      outcome = loopFailure(e, signal.aborted, at, spec.model);
    }
    // Each command's sandbox looks for the stores at the top of the roots again: one the turn's
    // commands made (`mkdir .aws`) was hidden from the commands after it, which the line names.
    if (shell && runner.kind === "bwrap" && runner.hiddenSeen) {
      sink.hidden?.(hiddenNames(hiddenThroughTurn(hiddenAtStart, runner.hiddenSeen)));
    }
    if (shell) await reportChanges(changes, roots, sink);
    // Without Bash only Write and Edit change files, and each reports its own change.
    else if (policy.tools.some((t) => !t.readOnly)) sink.changesTracked?.();
    return await settleWriters(outcome, [writer, transcript]);
  }

  verify(spec: VerifySpec): Promise<CheckResult> {
    return verifyNative(spec, this.config);
  }

  recentActivity(dir: string, limit: number): Promise<Activity[]> {
    return nativeFolder.recentActivity(dir, limit);
  }

  turnFacts(dir: string): Promise<TurnFacts> {
    return nativeFolder.turnFacts(dir);
  }
}

/**
 * The turn's tools. One rule on both engines (docs/security.md "What a delegate may run"): in
 * the editing modes a command runs unasked only when it is confined; unconfined, only what
 * allowed_tools approves (bypassPermissions approves everything, as in Claude Code). With a
 * person to ask (issue 31, item 3), an unconfined command is theirs to allow. The sink hears
 * why commands are not confined.
 */
function turnPolicy(spec: TurnSpec, sink: TurnSink, runner: ShellRunner, cwd: string): ToolPolicy {
  const unasked = runner.kind !== "unconfined" ||
    spec.options.permissionMode === "bypassPermissions" ||
    (spec.options.allowedTools ?? []).some((t) => parseRule(t).name === "Bash");
  const asking = sink.ask !== undefined;
  const askBash = !unasked && asking && isEditingMode(spec.options.permissionMode);
  const policy = toolPolicy(
    [...FILE_TOOLS, ...(unasked || askBash ? [bashTool(runner)] : [])],
    spec.options.permissionMode,
    spec.options.allowedTools,
    spec.options.disallowedTools,
    cwd,
    {
      asking,
      ...(askBash
        ? { askFor: ["Bash"], askWhy: `its commands would run unconfined: ${runner.why}` }
        : {}),
    },
  );
  if (runner.kind === "unconfined") {
    const offered = policy.tools.some((t) => t.name === "Bash");
    const editing = isEditingMode(spec.options.permissionMode);
    if (askBash) sink.sandbox?.(`${runner.why}; so each command is put to the person first`);
    else if (offered) sink.sandbox?.(runner.why);
    else if (editing) {
      sink.sandbox?.(
        `${runner.why}; so Bash is not offered: commands run only when allowed_tools ` +
          `approves them (["Bash"] for all, or "Bash(npm test)")`,
      );
    }
  }
  return policy;
}
