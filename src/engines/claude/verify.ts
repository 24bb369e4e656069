/**
 * A job's verification on the claude engine. There is no Claude Code child when the server
 * checks the work, so the commands run in the delegate's own jail (jail.ts, planned by
 * jail_plan.ts: the system read-only, `$HOME` an empty tmpfs, only the turn's roots writable,
 * credential stores, secret files and the server's folders hidden, as root uid 65534 with
 * every capability dropped) with what Claude Code's nested sandbox adds for the delegate's
 * Bash: no network (a network namespace of its own), the host-run paths held read-only also
 * where they do not exist yet (empty read-only placeholders, as the native sandbox mounts
 * them), the delegate's environment allowlist, and a native command's limits (a cgroup per
 * command where one can be made, and prlimit's rlimits inside: ../limit_launch.ts), at the
 * user's values, with no room for a Claude Code, which is not there. The Claude Code config
 * dir is not mounted at all. Where the delegate's Bash ran unconfined (the sandbox setting
 * off, no bubblewrap), so do the commands, and the check says so.
 */
import { failureText } from "../../errors.ts";
import { lstatSync } from "node:fs";
import { open, realpath } from "node:fs/promises";
import { join } from "node:path";
import {
  type CommandResult,
  type CommandSpec,
  runCommand,
  shellCommand,
} from "../../platform/command_run.ts";
import { osPlatform } from "../../platform/runtime.ts";
import { searchPath } from "../../platform/which.ts";
import { noteOf, refusedRun, VERIFY_KEEP_CHARS } from "../check_runs.ts";
import { collectGuardIdentities } from "../../guard/identities.ts";
import { gitCacheDir } from "../../guard/git_secrets.ts";
import { knownStores, knownStoresDir } from "../../guard/known_stores.ts";
import { PlaceholderRegistry, placeholderRunDir } from "../mount_placeholders.ts";
import { HOST_RUN_DIRS, HOST_RUN_PATHS } from "../../guard/protected_paths.ts";
import type { CheckResult, CheckRun, VerifySpec } from "../types.ts";
import { verifyEnv } from "./env.ts";
import { STREAM_FILE } from "./folder.ts";
import { SERVER_NOTE } from "./stream.ts";
import { bwrapCommand, MAX_SECRET_MASKS } from "../bwrap_base.ts";
import { jailArgs, jailHelperShare, type JailLayout, type JailMask } from "./jail.ts";
import { mountHelperFor } from "../mount_helper.ts";
import { planJail } from "./jail_plan.ts";
import { beginTurnChanges, storesUnknown } from "../tree/turn_changes.ts";
import { isInside } from "../../platform/path_inside.ts";
import { type ProtectConfig, protectScope } from "./protect_scope.ts";
import { findSandboxTools, planSandbox, withNestedHostRun } from "./sandbox.ts";
import type { SandboxSetting } from "../../settings/types.ts";
import { limitedLaunch } from "../limit_launch.ts";
import { limitPlan, type SandboxLimits } from "../sandbox_limits.ts";
import {
  cacheDest,
  cacheEnv,
  JOB_CACHE_DIR,
  type ToolchainView,
  toolchainView,
} from "../../guard/toolchains.ts";

export interface ClaudeVerifyConfig extends ProtectConfig {
  parentEnv: Record<string, string | undefined>;
  sandbox?: SandboxSetting;
  /** The sandbox limits of each command (and the size of its private /tmp and $HOME). */
  limits: SandboxLimits;
  allowSecretFiles?: readonly string[];
  toolchainPaths?: readonly string[];
}

/** The user's toolchains in a jail (src/guard/toolchains.ts), for a turn or a check. */
export interface JailToolchains {
  view: ToolchainView;
  /** The job's cache folder, mounted writable at `$HOME/.cache`. */
  cache: { source: string; dest: string };
  /** What commands in the jail get: its PATH, the toolchains' and the caches' variables. */
  env: Record<string, string>;
  /** Left out of the file tools' `$HOME` deny rules, which Claude Code's sandbox applies too. */
  readable: string[];
}

/**
 * The toolchains the jail of a turn or check in `roots` opens, and the job's cache folder:
 * the same for the delegate's Bash and for `verify`, so that a check's build reuses what the
 * delegate's built.
 */
export async function jailToolchains(
  config: Pick<ClaudeVerifyConfig, "parentEnv" | "toolchainPaths" | "protect" | "claudeConfigDir">,
  roots: readonly string[],
  jobDir: string,
): Promise<JailToolchains> {
  const view = await toolchainView({
    env: config.parentEnv,
    extra: config.toolchainPaths ?? [],
    serverDirs: [...(config.protect ?? []), config.claudeConfigDir],
    roots,
  });
  const dest = cacheDest(view.home);
  return {
    view,
    cache: { source: join(jobDir, JOB_CACHE_DIR), dest },
    env: { PATH: view.path, ...view.env, ...cacheEnv(view) },
    readable: [...view.opened.map((o) => o.path), dest],
  };
}

/** Runs one command to its end; `spec` is the rest of what runCommand needs. */
type Run = (
  command: string,
  spec: Omit<CommandSpec, "command" | "args">,
) => Promise<CommandResult>;

/** How the commands run here: in the jail, unconfined (and why), or not at all (and why). */
type Plan =
  | { kind: "jail"; run: Run; release: () => Promise<void> }
  | { kind: "unconfined"; run: Run; reason: string }
  | { kind: "refused"; reason: string };

export async function verifyClaude(
  spec: VerifySpec,
  config: ClaudeVerifyConfig,
): Promise<CheckResult> {
  const env = verifyEnv(config.parentEnv);
  const plan = await planCheck(spec, config, env);
  let result: CheckResult;
  if (plan.kind === "refused") {
    result = { passed: false, runs: [refusedRun(spec.commands[0] ?? "", plan.reason)] };
  } else {
    const runs: CheckRun[] = [];
    try {
      for (const command of spec.commands) {
        const out = await plan.run(command, {
          cwd: spec.cwd,
          env,
          timeoutMs: spec.timeoutMs,
          signal: spec.signal,
          keepChars: VERIFY_KEEP_CHARS,
          ...(spec.onSpawn ? { onSpawn: spec.onSpawn } : {}),
        });
        runs.push({
          command,
          exitCode: out.exitCode,
          signal: out.signal,
          durationMs: out.durationMs,
          timedOut: out.timedOut,
          output: out.output,
          droppedChars: out.droppedChars,
        });
        if (out.exitCode !== 0 || spec.signal.aborted) break;
      }
    } finally {
      if (plan.kind === "jail") await plan.release();
    }
    result = {
      passed: runs.length === spec.commands.length && runs.every((r) => r.exitCode === 0),
      runs,
      ...(plan.kind === "unconfined" ? { confinement: `unconfined: ${plan.reason}` } : {}),
    };
  }
  await noteInStream(spec, result.runs);
  return result;
}

async function planCheck(
  spec: VerifySpec,
  config: ClaudeVerifyConfig,
  env: Record<string, string>,
): Promise<Plan> {
  const sandbox = planSandbox(config.sandbox ?? "on", findSandboxTools(env), osPlatform);
  if (sandbox.kind === "refused") return { kind: "refused", reason: failureText(sandbox.problem) };
  if (sandbox.kind === "off") {
    return {
      kind: "unconfined",
      reason: sandbox.reason,
      run: (command, rest) => runCommand({ ...rest, ...shellCommand(command) }),
    };
  }
  const roots = await Promise.all(
    [spec.cwd, ...spec.addDirs].map((r) => realpath(r).catch(() => r)),
  );
  const scoped = await protectScope(config, spec);
  const ids = await collectGuardIdentities(roots, {
    allowSecretFiles: config.allowSecretFiles ?? [],
    gitObjects: config.stateDir ? { cacheDir: gitCacheDir(config.stateDir) } : {},
  });
  if (ids.scan.incomplete !== undefined || ids.pathsIncomplete !== undefined) {
    // The delegate's Bash had Claude Code's sandbox to hold the whole roots read-only then;
    // with no Claude Code around the commands, they do not run.
    return {
      kind: "refused",
      reason: `Cannot verify: the job's directories could not all be checked for protected ` +
        `files (${ids.scan.incomplete ?? ids.pathsIncomplete}), so the commands could not be ` +
        "confined as the delegate's were. Start the job with a narrower cwd",
    };
  }
  // Credential stores below the top of the roots, found as for the delegate's turn (its
  // journal, or a walk of the folders): the check's output reaches the model in a repair round.
  const changes = await beginTurnChanges(roots, { walk: true });
  // And the stores a link led to before, wherever they are now (guard/known_stores.ts).
  const known = config.stateDir
    ? knownStores(knownStoresDir(config.stateDir), roots)
    : { paths: [] };
  const stores = [...changes.nested?.credentials ?? [], ...known.paths];
  const unknown = storesUnknown(changes.nested) ?? known.incomplete;
  changes.release();
  if (unknown !== undefined) {
    // No Claude Code sandbox around the commands, whose Read rules cover what the list misses
    // in the delegate's turn: a store the jail does not hide would be open to them.
    return {
      kind: "refused",
      reason: `Cannot verify: the job's directories could not all be searched for credential ` +
        `stores (${unknown}), so the commands could not be confined as the delegate's were. ` +
        "Start the job with a narrower cwd",
    };
  }
  const masked = ids.secretPaths.length + ids.git.hidden.length + stores.length;
  if (masked > MAX_SECRET_MASKS) {
    return {
      kind: "refused",
      reason: `Cannot verify: ${masked} secret-looking files, credential stores and git ` +
        `objects lie in the job's directories, more than the ${MAX_SECRET_MASKS} its jail can ` +
        "hide. Give the job a narrower cwd, drop unreachable git objects (git gc " +
        "--prune=now), move credential stores out of the project, or let delegates read " +
        "such names: ollama-delegate config " +
        "--allow-secret-file <name>",
    };
  }
  const guard = await withNestedHostRun(scoped, sandbox, roots, ids.scan);
  const tools = await jailToolchains(config, roots, spec.dir);
  Object.assign(env, tools.env);
  const layout = planJail({
    cwd: spec.cwd,
    addDirs: spec.addDirs,
    // The shell is a system file, already there read-only: nothing of a CLI is mounted.
    command: "/bin/sh",
    pathDirs: searchPath(env),
    ...(env.HOME ? { home: env.HOME } : {}),
    protect: guard.protect,
    readOnly: scoped.readOnly,
    nestedHostRun: [
      ...guard.readOnly.slice(scoped.readOnly.length).filter((p) => !roots.includes(p)),
      ...ids.hostRunPaths,
    ],
    secretFiles: ids.secretPaths,
    credentialStores: stores,
    git: ids.git,
    tmpMb: config.limits.tmpMb,
    toolchains: tools,
  });
  // Host-run paths that do not exist yet get an empty read-only placeholder, so that a test
  // cannot create `.claude/settings.json` or `.envrc` for the host to run later. None inside a
  // mask, which is read-only already and holds no mount point (see planJail).
  const inMask = (path: string) =>
    (layout.masks ?? []).some((m) => m.kind === "dir" && isInside(m.path, path));
  const missing: JailMask[] = [
    ...roots.flatMap((root) =>
      HOST_RUN_PATHS.map((name) => ({
        path: join(root, name),
        kind: HOST_RUN_DIRS.has(name) ? "dir" as const : "file" as const,
      }))
    ).filter((p) => !exists(p.path)),
    ...ids.hostRunMissing.filter((p) => !exists(p.path)),
  ].filter((p) => !inMask(p.path));
  const registry = new PlaceholderRegistry(
    placeholderRunDir(config.stateDir ?? join(spec.dir, "..")),
  );
  let claim;
  try {
    claim = await registry.claim(missing);
  } catch (e) {
    return { kind: "refused", reason: `Cannot verify: ${(e as Error).message}` };
  }
  const jail: JailLayout = {
    ...layout,
    masks: [...(layout.masks ?? []), ...missing],
    noNetwork: true,
  };
  const helper = mountHelperFor(sandbox.bwrap, jailHelperShare(jail).helper);
  if (helper) jail.mountHelper = helper;
  const limits = limitPlan(config.limits);
  return {
    kind: "jail",
    // Each command in a cgroup of its own, which the launching shell joins before bubblewrap
    // starts, and under the rlimits that fit what that cgroup holds, set inside the jail.
    run: async (command, rest) => {
      const limited = await limitedLaunch(limits.cgroup, limits.rlimits);
      try {
        const [shell, ...args] = [...limited.rlimitPrefix, "/bin/sh", "-c", command];
        // Throws, and nothing runs, where a path of the jail cannot be named to bubblewrap.
        const bwrap = bwrapCommand(sandbox.bwrap, jailArgs(jail, shell!, args));
        return await runCommand({
          ...rest,
          ...limited.launch(bwrap.command, bwrap.args),
        });
      } finally {
        await limited.release();
      }
    },
    release: claim.release,
  };
}

/** Whether anything is at `path`, a dangling link included. */
function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Notes the commands in the job's stream file as the server's own events, which this engine's
 * reader turns into transcript entries (folder.ts); Claude Code never writes this type.
 */
async function noteInStream(spec: VerifySpec, runs: readonly CheckRun[]): Promise<void> {
  let file;
  try {
    file = await open(join(spec.dir, STREAM_FILE), "a", 0o600);
    for (const run of runs) {
      await file.write(
        JSON.stringify({ type: SERVER_NOTE, subtype: "verify", text: noteOf(spec, run) }) + "\n",
      );
    }
  } catch {
    // The check's result is in the job's record whatever happens to this note.
  } finally {
    await file?.close();
  }
}
