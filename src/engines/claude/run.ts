/**
 * The claude engine: each turn runs as a `claude -p` child pointed at Ollama or a named
 * backend that serves the Messages API (endpoint_target.ts), with an environment built from
 * scratch, the server's directories protected, Claude Code's own
 * sandbox where it can run, and a turn refused before it starts when the loaded model's
 * context would cut its prompt. The child itself is run by child.ts, its outcome read by
 * outcome.ts.
 */
import { readFile, realpath } from "node:fs/promises";
import { isAbsolute, join, relative } from "node:path";
import process from "node:process";
import { loadedContext } from "../../models/loaded_context.ts";
import { isRoot, osPlatform } from "../../platform/runtime.ts";
import { searchPath, which } from "../../platform/which.ts";
import { rootOnlySystemFiles } from "../bwrap_base.ts";
import { jailArgs } from "./jail.ts";
import { jailLimits } from "./jail_limits.ts";
import { planJail } from "./jail_plan.ts";
import { DEFAULT_LIMITS, limitsOf, type SandboxLimits } from "../sandbox_limits.ts";
import { placeholderRunDir } from "../placeholders.ts";
import { collectGuardIdentities } from "../../guard/identities.ts";
import { gitCacheDir } from "../../guard/git_secrets.ts";
import { closedNote } from "../../guard/toolchains.ts";
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
import { protectedFileRules } from "./file_rules.ts";
import { protectScope } from "./protect_scope.ts";
import { jailToolchains, verifyClaude } from "./verify.ts";
import {
  approvesSandboxedBash,
  type ClaudeSandboxPlan,
  findSandboxTools,
  planSandbox,
  sandboxSettings,
  shortPlanText,
  withNestedHostRun,
} from "./sandbox.ts";
import { beginTurnChanges, reportChanges, type TurnChanges } from "../tree/turn_changes.ts";
import { failedStart, judged, withUnrunCall } from "./outcome.ts";
import { AskRelay, RELAY_TOOL } from "./ask_relay.ts";
import type { PermissionMode } from "../../settings/types.ts";

/**
 * Secret files the jail hides at most: each is one bubblewrap mount, and bubblewrap slows
 * sharply as they add up (bench/sandbox_masks_bench.ts: 0.5 s for 500, 9 s for 2,000).
 */
const MAX_SECRET_MASKS = 500;

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

/** Runs turns as `claude -p` children pointed at Ollama. */
export class ClaudeEngine implements Engine {
  readonly name = "claude" as const;

  private readonly serverCwd: string;
  /** Where delegates' Claude Code puts its permission questions; listens from the first. */
  #relay: AskRelay | undefined;

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

  async start(spec: TurnSpec, sink: TurnSink): Promise<RunningTurn> {
    const opened = await openTarget(spec);
    if ("refused" in opened) return failedStart(opened.refused);
    let turn: RunningTurn | undefined;
    try {
      turn = await this.#startOn(spec, sink, opened);
    } finally {
      if (turn) turn.done.finally(() => opened.close()).catch(() => {});
      else opened.close();
    }
    return turn;
  }

  async #startOn(spec: TurnSpec, sink: TurnSink, target: EndpointTarget): Promise<RunningTurn> {
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
    if (plan.kind === "refused") return failedStart(plan.reason);
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

  async #start(
    spec: TurnSpec,
    sink: TurnSink,
    { target, env, marker, command, plan, roots, realRoots, changes }: {
      target: EndpointTarget;
      env: Record<string, string>;
      marker: { name: string; value: string };
      command: string;
      plan: Exclude<ClaudeSandboxPlan, { kind: "refused" }>;
      roots: string[];
      realRoots: string[];
      changes: TurnChanges;
    },
  ): Promise<RunningTurn> {
    const scoped = await protectScope(this.config, spec);
    // Protected files by what they are: secret files and host-run files under other names
    // (a link's target, a hard link) are hidden or held read-only by path in the jail and
    // denied to the file tools, so `notes.txt` hard-linked to `.env` is no way round.
    const jailed = plan.kind === "on" || plan.kind === "partial";
    const ids = await collectGuardIdentities(realRoots, {
      allowSecretFiles: this.config.allowSecretFiles ?? [],
      ...(changes.list ? { list: changes.list } : {}),
      // Only a jail can hide git's objects; without it commands read the whole project anyway.
      ...(jailed
        ? {
          gitObjects: this.config.stateDir ? { cacheDir: gitCacheDir(this.config.stateDir) } : {},
        }
        : {}),
    });
    const masked = ids.secretPaths.length + ids.git.hidden.length;
    if (masked > MAX_SECRET_MASKS) {
      return failedStart(
        `Cannot start Claude Code: ${masked} secret-looking files and git objects lie in the ` +
          `job's directories (${
            [...ids.secretPaths, ...ids.git.hidden].slice(0, 3).join(", ")
          }...), more than the ${MAX_SECRET_MASKS} its jail can hide. Give the job a narrower ` +
          "cwd, drop unreachable git objects (git gc --prune=now), or let delegates read such " +
          "names: ollama-delegate config --allow-secret-file <name>",
      );
    }
    for (const note of ids.git.notes) sink.warning?.(note);
    if (plan.kind === "partial" && ids.scan.incomplete) {
      // Without Claude Code's sandbox nothing else could keep commands off the nested
      // host-run paths the scan did not reach (fail closed).
      return failedStart(
        `Cannot start Claude Code: ${ids.scan.incomplete}, and without socat its own sandbox ` +
          "cannot keep commands off what the scan did not reach. Give the job a narrower cwd, " +
          "or install socat (apt install socat)",
      );
    }
    const guard = await withNestedHostRun(scoped, plan, roots, ids.scan);
    // The user's toolchains, readable in the jail; the job's caches at `$HOME/.cache`.
    const toolchains = jailed ? await jailToolchains(this.config, realRoots, spec.dir) : undefined;
    const closed = toolchains && closedNote(toolchains.view);
    if (closed) sink.warning?.(closed);
    // Wherever bubblewrap is (Linux), the whole CLI runs in our jail: its own file tools are
    // not confined by Claude Code's sandbox, which nests inside when socat is there too.
    const jail = jailed
      ? planJail({
        cwd: spec.cwd,
        addDirs: spec.options.addDirs,
        command,
        pathDirs: searchPath(env),
        configDir: this.config.claudeConfigDir,
        ...(env.HOME ? { home: env.HOME } : {}),
        protect: guard.protect,
        readOnly: scoped.readOnly,
        // A scan that could not cover the roots adds the roots themselves: Claude Code's
        // sandbox then keeps commands from writing; the file tools are held by the rules.
        nestedHostRun: [
          ...guard.readOnly.slice(scoped.readOnly.length).filter((p) => !roots.includes(p)),
          ...ids.hostRunPaths,
        ],
        secretFiles: ids.secretPaths,
        git: ids.git,
        tmpMb: this.#limits.tmpMb,
        ...(toolchains ? { toolchains } : {}),
      })
      : undefined;
    const sandbox = plan.kind === "on"
      ? sandboxSettings({
        cwd: spec.cwd,
        addDirs: spec.options.addDirs,
        // In the jail only the config dir of what the server keeps is there to protect.
        protect: jail ? [this.config.claudeConfigDir] : guard.protect,
        readOnly: guard.readOnly,
        jailed: jail !== undefined,
        // Only here, with the jail and Claude Code's sandbox both on: partial or no
        // confinement keeps commands to what allowed_tools and the mode approve.
        autoAllowBash: jail !== undefined &&
          approvesSandboxedBash(spec.options.permissionMode, spec.options.allowedTools),
        ...(toolchains ? { cacheDir: toolchains.cache.dest } : {}),
      })
      : undefined;
    const denyRules = [
      ...protectedFileRules({
        roots,
        ...(env.HOME ? { home: env.HOME } : {}),
        protect: guard.protect,
        unreadable: [
          ...ids.secretPaths,
          ...(isRoot() ? rootOnlySystemFiles().map((m) => m.path) : []),
        ],
        unwritable: ids.hostRunPaths,
        // The walk stopped early: secret files it did not reach are denied by name too.
        secretNames: ids.incomplete !== undefined,
        gitObjects: !jailed,
        ...(toolchains ? { readable: toolchains.readable } : {}),
      }),
      ...guard.extraRules,
    ];
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
      sandbox: sandbox !== undefined,
      lean: this.#lean,
    });
    // Ollama cuts what does not fit, silently; another server refuses it: each is told apart.
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
    if (refusal) return failedStart(refusal);
    // A person to ask (issue 31, item 3): where Claude Code would prompt, it asks our relay,
    // which refuses what no answer may allow and puts the rest to the person.
    const ask = sink.ask && asksInMode(spec.options.permissionMode)
      ? await (this.#relay ??= new AskRelay()).register({
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
      const turn = await this.#launch(spec, sink, {
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
        args: claudeArgs(
          spec,
          pinnedSettings(target.baseUrl, spec.model, sandbox, denyRules, this.#lean, {
            customHeaders: customHeadersText(spec.sessionId),
          }),
          tools,
          this.#lean,
          ask && { config: ask.config, tool: RELAY_TOOL },
        ),
        toolchains,
      });
      if (ask) turn.done.finally(() => ask.release()).catch(() => {});
      return turn;
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
    }: {
      target: EndpointTarget;
      env: Record<string, string>;
      command: string;
      plan: Exclude<ClaudeSandboxPlan, { kind: "refused" }>;
      realRoots: string[];
      changes: TurnChanges;
      marker: { name: string; value: string };
      estimate: number;
      tools: string[];
      jail: ReturnType<typeof planJail> | undefined;
      prompt: Uint8Array;
      args: string[];
      toolchains: Awaited<ReturnType<typeof jailToolchains>> | undefined;
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
    const launch = jail && real && limited && (plan.kind === "on" || plan.kind === "partial")
      ? limited.launch(
        plan.bwrap,
        jailArgs({ ...jail, ...(limited.shell ? { shell: limited.shell } : {}) }, real, args),
      )
      : { command, args };
    // Host-run paths missing now: one the turn creates is moved out of the project at its end.
    const missing = missingHostRun(realRoots);
    const turn = await startChild(
      {
        ...launch,
        cwd: spec.cwd,
        // In the jail: the PATH of what it holds, and the toolchains' and caches' variables.
        env: toolchains ? { ...env, ...toolchains.env } : env,
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
        return withUnrunCall(verdict ? judged(outcome, verdict, sink) : outcome, tools, sink);
      },
    );
    // Also when Claude Code could not be started, which settles nothing.
    if (limited) turn.done.finally(() => limited.release()).catch(() => {});
    return turn;
  }
}

/** The modes in which Claude Code would prompt: dontAsk, plan and bypassPermissions never do. */
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
