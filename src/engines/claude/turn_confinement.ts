/**
 * What confines one claude turn, decided before Claude Code starts: the protected files by what
 * they are (guard/identities.ts), our bubblewrap jail around the whole CLI, Claude Code's own
 * sandbox nested inside, and the deny rules its file tools obey. A turn that cannot be confined
 * as its sandbox plan says is refused (fail closed).
 */
import { isRoot } from "../../platform/runtime.ts";
import { searchPath } from "../../platform/which.ts";
import { MAX_SECRET_MASKS, rootOnlySystemFiles } from "../bwrap_base.ts";
import { collectGuardIdentities } from "../../guard/identities.ts";
import { gitCacheDir } from "../../guard/git_secrets.ts";
import {
  knownStores,
  knownStoresDir,
  linkedStores,
  rememberStores,
} from "../../guard/known_stores.ts";
import { hiddenInRoots } from "../../guard/hidden_list.ts";
import { closedNote } from "../../guard/toolchains.ts";
import type { TurnSink, TurnSpec } from "../types.ts";
import type { JailLayout } from "./jail.ts";
import { jailMasks, planJail } from "./jail_plan.ts";
import { protectedFileRules } from "./file_rules.ts";
import { protectScope } from "./protect_scope.ts";
import { type ClaudeVerifyConfig, type JailToolchains, jailToolchains } from "./verify.ts";
import {
  approvesSandboxedBash,
  type ClaudeSandboxPlan,
  type ClaudeSandboxSettings,
  sandboxSettings,
  withNestedHostRun,
} from "./sandbox.ts";
import { storesUnknown, type TurnChanges } from "../tree/turn_changes.ts";

/** The turn as far as it is set up: the child's environment and binary, the plan, the roots. */
export interface ConfineInput {
  env: Record<string, string>;
  command: string;
  plan: Exclude<ClaudeSandboxPlan, { kind: "refused" }>;
  roots: string[];
  realRoots: string[];
  changes: TurnChanges;
}

/** How the turn is confined. */
export interface Confinement {
  /** Our jail around the CLI; undefined where bubblewrap is not there. */
  jail: JailLayout | undefined;
  /** Claude Code's own sandbox settings; undefined when its sandbox does not run. */
  sandbox: ClaudeSandboxSettings | undefined;
  denyRules: string[];
  toolchains: JailToolchains | undefined;
}

/** How `spec`'s turn is confined, or why it cannot be. */
export async function confineTurn(
  config: ClaudeVerifyConfig,
  spec: TurnSpec,
  sink: TurnSink,
  { env, command, plan, roots, realRoots, changes }: ConfineInput,
): Promise<Confinement | { refused: string }> {
  const scoped = await protectScope(config, spec);
  // Protected files by what they are: secret files and host-run files under other names
  // (a link's target, a hard link) are hidden or held read-only by path in the jail and
  // denied to the file tools, so `notes.txt` hard-linked to `.env` is no way round.
  const jailed = plan.kind === "on" || plan.kind === "partial";
  const ids = await collectGuardIdentities(realRoots, {
    allowSecretFiles: config.allowSecretFiles ?? [],
    ...(changes.list ? { list: changes.list } : {}),
    // Only a jail can hide git's objects; without it commands read the whole project anyway.
    ...(jailed
      ? { gitObjects: config.stateDir ? { cacheDir: gitCacheDir(config.stateDir) } : {} }
      : {}),
  });
  // Credential stores below the top, anywhere (dependencies too): hidden by the jail like the
  // top-level ones, found by the turn's journal or walk of the folders; and those a link led to
  // before, by what they are (guard/known_stores.ts: `.config -> cfg` relinked since).
  const storesDir = jailed && config.stateDir ? knownStoresDir(config.stateDir) : undefined;
  const known = storesDir ? knownStores(storesDir, realRoots) : { paths: [] };
  if (known.incomplete) {
    return {
      refused: `Cannot start Claude Code: ${known.incomplete}, so its jail cannot hide it. ` +
        "Give the job a narrower cwd, or move the store back where it was",
    };
  }
  const stores = jailed ? [...changes.nested?.credentials ?? [], ...known.paths] : [];
  if (storesDir) {
    rememberStores(storesDir, [...linkedStores(realRoots), ...changes.nested?.linked ?? []]);
  }
  const masked = ids.secretPaths.length + ids.git.hidden.length + stores.length;
  if (masked > MAX_SECRET_MASKS) {
    return {
      refused:
        `Cannot start Claude Code: ${masked} secret-looking files, credential stores and git ` +
        `objects lie in the job's directories (${
          [...ids.secretPaths, ...stores, ...ids.git.hidden].slice(0, 3).join(", ")
        }...), more than the ${MAX_SECRET_MASKS} its jail can hide. Give the job a narrower ` +
        "cwd, drop unreachable git objects (git gc --prune=now), move credential stores out " +
        "of the project, or let delegates read such " +
        "names: ollama-delegate config --allow-secret-file <name>",
    };
  }
  for (const note of ids.git.notes) sink.warning?.(note);
  if (plan.kind === "partial" && ids.scan.incomplete) {
    // Without Claude Code's sandbox nothing else could keep commands off the nested
    // host-run paths the scan did not reach (fail closed).
    return {
      refused: `Cannot start Claude Code: ${ids.scan.incomplete}, and without socat its own ` +
        "sandbox cannot keep commands off what the scan did not reach. Give the job a narrower " +
        "cwd, or install socat (apt install socat)",
    };
  }
  const guard = await withNestedHostRun(scoped, plan, roots, ids.scan);
  // The user's toolchains, readable in the jail; the job's caches at `$HOME/.cache`.
  const toolchains = jailed ? await jailToolchains(config, realRoots, spec.dir) : undefined;
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
      configDir: config.claudeConfigDir,
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
      credentialStores: stores,
      git: ids.git,
      tmpMb: config.limits.tmpMb,
      ...(toolchains ? { toolchains } : {}),
    })
    : undefined;
  // What the jail hides, named in the reply; without the jail only rules by name hold them.
  sink.hidden?.(jail ? hiddenInRoots(realRoots, stores, ids.secretPaths) : []);
  const sandbox = plan.kind === "on"
    ? sandboxSettings({
      cwd: spec.cwd,
      addDirs: spec.options.addDirs,
      // In the jail only the config dir of what the server keeps is there to protect.
      protect: jail ? [config.claudeConfigDir] : guard.protect,
      // The nested host-run paths the scan found are read-only mounts of the jail, which
      // Claude Code's sandbox inherits (its binds are recursive): naming each again cost
      // every command about three bubblewrap arguments and a check per path, seconds with
      // 100 nested projects (issue 34). A scan that could not cover the roots still makes
      // the roots read-only here (fail closed: the jail leaves them writable to file tools).
      readOnly: jail && !ids.scan.incomplete ? scoped.readOnly : guard.readOnly,
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
        ...secretsToDeny(ids.secretPaths, jail),
        ...(isRoot() ? rootOnlySystemFiles().map((m) => m.path) : []),
      ],
      unwritable: ids.hostRunPaths,
      // The walk stopped early: secret files it did not reach are denied by name too.
      secretNames: ids.incomplete !== undefined,
      gitObjects: !jailed,
      credentialsHidden: storesAllHidden(jail, changes.nested),
      ...(toolchains ? { readable: toolchains.readable } : {}),
    }),
    ...guard.extraRules,
  ];
  return { jail, sandbox, denyRules, toolchains };
}

/**
 * Whether the jail hides every credential store in the roots: it is there, and the turn's
 * journal or walk found them all, with no folder left unread, where a command could open one up
 * (chmod) and a store in it would be neither hidden nor denied. Then the file tools get no Read
 * rule by pattern for them (file_rules.ts `credentialsHidden`).
 */
export function storesAllHidden(
  jail: JailLayout | undefined,
  nested: TurnChanges["nested"],
): boolean {
  return jail !== undefined && storesUnknown(nested) === undefined;
}

/**
 * The secret files the file tools' Read rules name. Claude Code's sandbox turns each literal
 * Read rule into a mount of /dev/null for every command, and one more on each folder above it
 * up to the working directory (so that renaming the folder cannot uncover the file): with a
 * secret `.envrc` in each of 100 nested projects, 200 more mounts per command, each of which
 * bubblewrap sets up by reading the jail's whole mount table (about 600 lines there), about
 * 2 s per command (issue 34, measured with strace). In the jail a secret file the jail masks
 * is already /dev/null without device access, for the CLI's file tools and its commands alike:
 * reading it fails there, through any name (a hard link to a mount point cannot be made, and
 * neither the mask nor a folder's rename uncovers it). Those are left to the jail; the others
 * (outside the folders the jail shows) keep their rule.
 */
function secretsToDeny(secrets: readonly string[], jail: JailLayout | undefined): string[] {
  if (!jail) return [...secrets];
  return secrets.filter((path) => !jailMasks(jail, path));
}
