/**
 * The claude engine: each turn runs as a `claude -p` child pointed at Ollama or a named
 * backend that serves the Messages API (endpoint_target.ts), with an environment built from
 * scratch, the server's directories protected, Claude Code's own
 * sandbox where it can run, and a turn refused before it starts when the loaded model's
 * context would cut its prompt. The child itself is run by child.ts, its outcome read by
 * outcome.ts.
 *
 * A turn in steps: open its endpoint (the backend comes resolved in TurnSpec.backend), prepare
 * the child (environment, binary, sandbox plan, the changes' baseline), confine it
 * (turn_confinement.ts), check the prompt against the context the endpoint has for the model,
 * then run it (the permission relay, the jail, the child).
 */
import { failureText } from "../../errors.ts";
import type { TurnFailure } from "../backend_failures.ts";
import { readFile, realpath } from "node:fs/promises";
import { isAbsolute, join, relative } from "node:path";
import process from "node:process";
import { loadedContext } from "../../models/loaded_context.ts";
import { osPlatform } from "../../platform/runtime.ts";
import { which } from "../../platform/which.ts";
import { bwrapCommand } from "../bwrap_base.ts";
import { jailArgs, jailHelperShare } from "./jail.ts";
import { mountHelperFor } from "../mount_helper.ts";
import { jailLimits, processLimitWarning } from "./jail_limits.ts";
import { DEFAULT_LIMITS, limitsOf, type SandboxLimits } from "../sandbox_limits.ts";
import { placeholderRunDir } from "../mount_placeholders.ts";
import {
  missingHostRun,
  quarantinePlanted,
  quarantineText,
  removeClaudeTrace,
} from "../../guard/planted.ts";
import type {
  Activity,
  CheckResult,
  Engine,
  EngineSetup,
  RunningTurn,
  TurnFacts,
  TurnSink,
  TurnSpec,
  VerifySpec,
} from "../types.ts";
import { startChild, turnMarker } from "./child.ts";
import { claudeFolder } from "./folder.ts";
import {
  type ClaudeHarness,
  DEFAULT_CLAUDE_TOOLS,
  LEAN_CLAUDE_TOOLS,
  type SandboxSetting,
} from "../../settings/types.ts";
import { customHeadersText } from "../../backends/session_headers.ts";
import { claudeArgs, delegateTools } from "./argv.ts";
import {
  estimatePromptTokens,
  judgeTurn,
  refusalText,
  servedRefusalText,
  skipsContextCheck,
} from "./context_check.ts";
import { claudeChildEnv, pinnedSettings } from "./env.ts";
import { type EndpointTarget, openTarget } from "./endpoint_target.ts";
import { type ConfineInput, type Confinement, confineTurn } from "./turn_confinement.ts";
import { verifyClaude } from "./verify.ts";
import { findSandboxTools, planSandbox, shortPlanText } from "./sandbox.ts";
import { beginTurnChanges, reportChanges } from "../tree/turn_changes.ts";
import { applyContextVerdict, failedStart, withUnrunCall } from "./outcome.ts";
import type { AskRelay } from "./ask_relay.ts";
import type { PermissionMode } from "../../settings/types.ts";

/** How long asking Ollama which models are loaded may hold up a turn's start or end. */
const PS_TIMEOUT_MS = 3000;

export interface ClaudeEngineConfig {
  claudeBin: string;
  claudeConfigDir: string;
  baseUrl: string;
  parentEnv: Record<string, string | undefined>;
  /** "on" (default): Claude Code's own sandbox confines delegates' Bash where bwrap exists. */
  sandbox?: SandboxSetting;
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
  /** "lean" (default): Claude Code's minimal mode (`--bare`) and our short prompt; or "full". */
  harness?: ClaudeHarness;
  /** The state dir: a turn's cwd may be the worktree the server made in it. */
  stateDir?: string;
  /**
   * The sandbox limits (`sandboxMax*` settings) of the jail's commands and of `verify`, and the
   * size of the jail's private /tmp and $HOME (`sandboxTmpMb`); DEFAULT_LIMITS when absent.
   */
  limits?: SandboxLimits;
  /** Secret-looking file names delegates may read anyway (`allowSecretFiles`). */
  allowSecretFiles?: readonly string[];
  /** Folders commands may read besides the toolchains on PATH (`toolchainPaths`). */
  toolchainPaths?: readonly string[];
}

/** The claude engine as the server's settings configure it. */
export function createEngine(setup: EngineSetup): ClaudeEngine {
  const s = setup.settings;
  return new ClaudeEngine({
    claudeBin: s.claudeBin,
    claudeConfigDir: s.claudeConfigDir,
    // A pool's turns are pinned to the endpoint each was placed on (TurnSpec.endpoint); its
    // first endpoint stands for it where no turn is at hand (the environment ollama_models shows).
    baseUrl: s.baseUrls[0]?.url ?? s.baseUrl,
    parentEnv: setup.env,
    sandbox: s.sandbox,
    protect: [setup.userConfigDir, s.stateDir],
    serverCwd: setup.serverCwd,
    claudeTools: s.claudeTools,
    harness: s.claudeHarness,
    stateDir: s.stateDir,
    limits: limitsOf(s),
    allowSecretFiles: s.allowSecretFiles,
    toolchainPaths: s.toolchainPaths,
  });
}

/** A turn as far as it is set up before it is confined (ClaudeEngine.#prepare). */
interface Prepared extends ConfineInput {
  target: EndpointTarget;
  marker: { name: string; value: string };
}

/** Runs turns as `claude -p` children pointed at Ollama. */
export class ClaudeEngine implements Engine {
  readonly name = "claude" as const;

  private readonly serverCwd: string;
  /**
   * Where delegates' Claude Code puts its permission questions; listens from the first. Loaded
   * then too: its HTTP server and MCP transport cost a server about 40 ms to load, and most
   * turns have nobody to ask.
   */
  #relay: Promise<AskRelay> | undefined;

  #askRelay(): Promise<AskRelay> {
    return this.#relay ??= import("./ask_relay.ts").then((m) => new m.AskRelay(), (e) => {
      this.#relay = undefined;
      throw e;
    });
  }

  constructor(private readonly config: ClaudeEngineConfig) {
    this.serverCwd = config.serverCwd ?? process.cwd();
  }

  recentActivity(dir: string, limit: number): Promise<Activity[]> {
    return claudeFolder.recentActivity(dir, limit);
  }

  turnFacts(dir: string): Promise<TurnFacts> {
    return claudeFolder.turnFacts(dir);
  }

  verify(spec: VerifySpec): Promise<CheckResult> {
    return verifyClaude(spec, { ...this.config, limits: this.#limits });
  }

  /** The environment a delegate of `model` gets (shown by `ollama_models`). */
  childEnv(model: string): Record<string, string> {
    return claudeChildEnv({
      parentEnv: this.config.parentEnv,
      baseUrl: this.config.baseUrl,
      model,
      claudeConfigDir: this.config.claudeConfigDir,
      lean: this.#lean,
    });
  }

  get #limits(): SandboxLimits {
    return this.config.limits ?? DEFAULT_LIMITS;
  }

  get #lean(): boolean {
    return (this.config.harness ?? "lean") === "lean";
  }

  /** The tools a delegate may be shown: claudeTools, within what the harness offers. */
  get #offered(): string[] {
    const configured = this.config.claudeTools ?? DEFAULT_CLAUDE_TOOLS;
    return this.#lean ? configured.filter((t) => LEAN_CLAUDE_TOOLS.includes(t)) : [...configured];
  }

  /**
   * The context `/api/ps` shows `model` loaded with; undefined when it is not loaded, is a
   * cloud model, or Ollama does not say (older versions, another server at baseUrl).
   */
  async #loadedContext(model: string, target: EndpointTarget): Promise<number | undefined> {
    if (skipsContextCheck(model)) return undefined;
    // Not knowing is no reason to refuse: the turn runs and its usage is checked after.
    return await loadedContext(target.url, model, PS_TIMEOUT_MS);
  }

  /** Where `claudeBin` resolves for a child, or undefined when it cannot be found. */
  resolveBinary(cwd: string): string | undefined {
    return which(this.config.claudeBin, this.childEnv("x"), cwd);
  }

  /** Opens the turn's endpoint (the key relay for a named backend) for as long as it runs. */
  async start(spec: TurnSpec, sink: TurnSink): Promise<RunningTurn> {
    const opened = await openTarget(spec);
    if ("refused" in opened) return failedStart(opened.refused);
    let turn: RunningTurn | undefined;
    try {
      turn = await this.#prepare(spec, sink, opened);
    } finally {
      if (turn) turn.done.finally(() => opened.close()).catch(() => {});
      else opened.close();
    }
    return turn;
  }

  /**
   * The turn on its open endpoint, set up: the child's environment and binary, the sandbox
   * plan, and the baseline of its directories' changes, held until the turn ends.
   */
  async #prepare(spec: TurnSpec, sink: TurnSink, target: EndpointTarget): Promise<RunningTurn> {
    const marker = turnMarker(spec.jobId, spec.turn);
    // What Claude Code is pointed at: the endpoint the turn was placed on (a pool's turn is
    // pinned to it), or for a named backend the relay in front of it, which holds its key.
    const baseUrl = target.baseUrl;
    const extras = { customHeaders: customHeadersText(spec.sessionId) };
    const env = claudeChildEnv({
      parentEnv: this.config.parentEnv,
      baseUrl,
      model: spec.model,
      claudeConfigDir: this.config.claudeConfigDir,
      marker,
      lean: this.#lean,
      extras,
    });
    // Resolved once, to an absolute path, and exactly that file is spawned: the OS must not
    // look the name up again in the job's working directory.
    const command = which(this.config.claudeBin, env, this.serverCwd);
    if (!command) {
      return failedStart(
        `Cannot start Claude Code: "${this.config.claudeBin}" was not found on the delegate's ` +
          `PATH (only its absolute entries are searched). Install Claude Code, or set its ` +
          `absolute path with ollama-delegate config --claude-bin <path> (or OLLAMA_MCP_CLAUDE_BIN)`,
      );
    }
    const plan = planSandbox(this.config.sandbox ?? "on", findSandboxTools(env), osPlatform);
    if (plan.kind === "refused") return failedStart(failureText(plan.problem));
    if (plan.kind !== "on") {
      const o = spec.options;
      const bash = delegateTools(this.#offered, o.allowedTools, o.disallowedTools).includes("Bash");
      sink.sandbox?.(shortPlanText(plan, o.permissionMode, o.allowedTools, bash));
    }
    const roots = [spec.cwd, ...spec.options.addDirs];
    const realRoots = await Promise.all(roots.map((r) => realpath(r).catch(() => r)));
    // What the turn changes is looked for by the server, from before Claude Code starts.
    const changes = await beginTurnChanges(realRoots, { walk: true });
    let turn: RunningTurn | undefined;
    try {
      turn = await this.#start(spec, sink, {
        target,
        env,
        marker,
        command,
        plan,
        roots,
        realRoots,
        changes,
      });
    } finally {
      if (turn) turn.done.finally(() => changes.release()).catch(() => {});
      else changes.release();
    }
    return turn;
  }

  /**
   * The turn set up (its endpoint open, its child's environment and plan, the changes'
   * baseline): confined, checked against the context the endpoint has for the model, then run.
   */
  async #start(spec: TurnSpec, sink: TurnSink, prepared: Prepared): Promise<RunningTurn> {
    const confined = await confineTurn(
      { ...this.config, limits: this.#limits },
      spec,
      sink,
      prepared,
    );
    if ("refused" in confined) return failedStart(confined.refused);
    const request = await this.#request(spec, prepared.target, confined);
    if ("refused" in request) return failedStart(request.refused);
    return await this.#run(spec, sink, { ...prepared, ...confined, ...request });
  }

  /**
   * What Claude Code is sent, and whether it fits: Ollama cuts what does not fit the model's
   * loaded context, silently; another server refuses it. Each is told apart before the turn.
   */
  async #request(
    spec: TurnSpec,
    target: EndpointTarget,
    confined: Confinement,
  ): Promise<
    { prompt: Uint8Array; tools: string[]; estimate: number } | { refused: TurnFailure }
  > {
    const prompt = await readFile(spec.promptPath);
    const tools = delegateTools(
      this.#offered,
      spec.options.allowedTools,
      spec.options.disallowedTools,
    );
    const estimate = estimatePromptTokens({
      tools,
      permissionMode: spec.options.permissionMode,
      taskChars: new TextDecoder().decode(prompt).length,
      appendChars: spec.options.appendSystemPrompt?.length ?? 0,
      sandbox: confined.sandbox !== undefined,
      lean: this.#lean,
    });
    const refusal = target.kind === "ollama"
      ? refusalText({
        model: spec.model,
        loadedContext: await this.#loadedContext(spec.model, target),
        estimate,
      })
      : servedRefusalText({
        model: spec.model,
        where: target.watched.where,
        servedContext: await target.servedContext(spec.model),
        estimate,
      });
    return refusal ? { refused: refusal } : { prompt, tools, estimate };
  }

  /** Runs the confined turn, with the permission relay when a person can be asked. */
  async #run(
    spec: TurnSpec,
    sink: TurnSink,
    turn: Prepared & Confinement & { prompt: Uint8Array; tools: string[]; estimate: number },
  ): Promise<RunningTurn> {
    const { roots, realRoots } = turn;
    // A person to ask (issue 31, item 3): where Claude Code would prompt, it asks our relay,
    // which refuses what no answer may allow and puts the rest to the person.
    const ask = sink.ask && asksInMode(spec.options.permissionMode)
      ? await (await this.#askRelay()).register({
        scope: {
          cwd: spec.cwd,
          roots: [...new Set([...roots, ...realRoots])],
          protect: [...(this.config.protect ?? []), this.config.claudeConfigDir],
          allowSecretFiles: this.config.allowSecretFiles ?? [],
        },
        reason: askReason(spec.options.permissionMode, spec.options.allowedTools),
        ask: sink.ask.bind(sink),
      })
      : undefined;
    try {
      const running = await this.#launch(spec, sink, {
        ...turn,
        args: claudeArgs(
          spec,
          pinnedSettings(
            turn.target.baseUrl,
            spec.model,
            turn.sandbox,
            turn.denyRules,
            this.#lean,
            {
              customHeaders: customHeadersText(spec.sessionId),
            },
          ),
          turn.tools,
          this.#lean,
          ask && { config: ask.config, tool: ask.tool },
        ),
      });
      if (ask) running.done.finally(() => ask.release()).catch(() => {});
      return running;
    } catch (e) {
      ask?.release();
      throw e;
    }
  }

  async #launch(
    spec: TurnSpec,
    sink: TurnSink,
    {
      target,
      env,
      command,
      plan,
      realRoots,
      changes,
      marker,
      estimate,
      tools,
      jail,
      prompt,
      args,
      toolchains,
    }: Prepared & Confinement & {
      estimate: number;
      tools: string[];
      prompt: Uint8Array;
      args: string[];
    },
  ): Promise<RunningTurn> {
    // The real file: the jail holds its folder, not the links that led to it.
    const real = jail && await realpath(command);
    // The sandbox limits: a cgroup around the whole jail, and the rlimits of its commands.
    let limited;
    try {
      limited = jail && await jailLimits(
        this.#limits,
        env,
        this.config.stateDir && placeholderRunDir(this.config.stateDir),
      );
    } catch (e) {
      return failedStart((e as Error).message);
    }
    let launch = { command, args };
    /** The folder of Claude Code's own at the head of its PATH (jail_limits.ts CLAUDE_ONLY_BIN). */
    let ownBin: string | undefined;
    if (jail && real && limited && (plan.kind === "on" || plan.kind === "partial")) {
      try {
        const helper = mountHelperFor(plan.bwrap, jailHelperShare(jail).helper);
        const jailed = jailArgs(
          {
            ...jail,
            ...(limited.shell ? { shell: limited.shell } : {}),
            ...(helper ? { mountHelper: helper } : {}),
          },
          real,
          args,
        );
        const bwrap = bwrapCommand(plan.bwrap, jailed);
        launch = limited.launch(bwrap.command, bwrap.args);
        ownBin = limited.shell?.bin.path;
      } catch (e) {
        await limited.release();
        return failedStart(`Cannot start Claude Code: ${(e as Error).message}`);
      }
    }
    // Host-run paths missing now: one the turn creates is moved out of the project at its end.
    const missing = missingHostRun(realRoots);
    const turn = await startChild(
      {
        ...launch,
        cwd: spec.cwd,
        // In the jail: the PATH of what it holds, and the toolchains' and caches' variables.
        env: withOwnBin(toolchains ? { ...env, ...toolchains.env } : env, ownBin),
        stdin: prompt,
        dir: spec.dir,
        marker,
        backend: target.watched,
        promptTokens: estimate,
        resumed: spec.resume,
        // The next turn of the session then goes to another endpoint of the pool.
        ...(spec.endpoint ? { backendGone: (reason: string) => spec.endpoint!.down(reason) } : {}),
      },
      sink,
      async (outcome, requests) => {
        const hits = await limited?.processLimitHits() ?? 0;
        if (hits > 0) {
          sink.warning?.(processLimitWarning(this.#limits, hits, outcome.exitCode));
        }
        // What is still in the jail's cgroup (nothing, unless it escaped the sweep) ends here.
        await limited?.release();
        for (const root of realRoots) removeClaudeTrace(root, missing);
        const moved = quarantinePlanted(missing, join(spec.dir, "planted"));
        if (moved.length > 0) {
          sink.warning?.(`planted: ${quarantineText(moved, (p) => shownPath(p, realRoots[0]!))}`);
        }
        // Everything the turn started is gone by now: what it changed stays as it is.
        await reportChanges(changes, realRoots, sink);
        // Only Ollama cuts a prompt silently: another server's failure is the turn's error.
        const verdict = target.kind === "ollama" && outcome.usage && judgeTurn({
          model: spec.model,
          estimate,
          usage: outcome.usage,
          requests,
          loadedContext: await this.#loadedContext(spec.model, target),
        });
        return withUnrunCall(
          verdict ? applyContextVerdict(outcome, verdict, sink) : outcome,
          tools,
          sink,
        );
      },
    );
    // Also when Claude Code could not be started, which settles nothing.
    if (limited) turn.done.finally(() => limited.release()).catch(() => {});
    return turn;
  }
}

/** The modes in which Claude Code would prompt: dontAsk, plan and bypassPermissions never do. */
/**
 * `env` with `bin` at the head of its PATH: Claude Code's own, which the jail's shell takes off
 * again for every command (jail_limits.ts npmScript). Not on an empty PATH, whose commands find
 * nothing anyway.
 */
function withOwnBin(env: Record<string, string>, bin: string | undefined): Record<string, string> {
  return bin && env.PATH ? { ...env, PATH: `${bin}:${env.PATH}` } : env;
}

function asksInMode(mode: PermissionMode): boolean {
  return mode === "manual" || mode === "default" || mode === "acceptEdits" || mode === "auto";
}

/** Why a delegate's Claude Code asks, for the question: its mode and allow rules. */
function askReason(mode: PermissionMode, allowedTools: readonly string[] | undefined): string {
  return `permission mode ${mode}` +
    (allowedTools ? `, allowed_tools ${allowedTools.join(", ") || "none"}` : "");
}

/** `path` relative to the working directory when it lies there, else as it is. */
function shownPath(path: string, cwd: string): string {
  const rel = relative(cwd, path);
  return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel) ? rel : path;
}
