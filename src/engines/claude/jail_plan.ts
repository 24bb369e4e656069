/**
 * The inputs of one turn's jail (jail.ts), read from the disk: real paths of the roots, what
 * the CLI needs, the host-run paths to hold read-only, the credential stores and server
 * folders to hide, and as root the system files only root may read.
 */
import { existsSync, mkdirSync } from "node:fs";
import { dirname, isAbsolute, join } from "node:path";
import { isRoot } from "../../platform/runtime.ts";
import { hasRawBytes } from "../../platform/file_names.ts";
import { rawKindOf, realOrSelf as real } from "../../platform/raw_fs.ts";
import { pathFacts } from "../../platform/path_facts.ts";
import { CREDENTIAL_PATHS, HOST_RUN_PATHS, storeHeads } from "../../guard/protected_paths.ts";
import { plannedIdentities, rootOnlySystemFiles } from "../bwrap_base.ts";
import type { GitObjects } from "../../guard/identities.ts";
import type { ToolchainView } from "../../guard/toolchains.ts";
import { cliFiles, etcLinkTargets, type JailLayout, type JailMask, outermost } from "./jail.ts";
import { isInside as within } from "../../platform/path_inside.ts";

export interface JailInputs {
  cwd: string;
  addDirs: readonly string[];
  /** The CLI as resolved for the child (absolute). */
  command: string;
  /** The child's PATH entries, for a script's `#!/usr/bin/env node`. */
  pathDirs: readonly string[];
  /**
   * The delegates' CLAUDE_CONFIG_DIR: mounted writable (sessions, settings). Absent for the
   * server's own verification commands, which get no Claude Code config at all.
   */
  configDir?: string;
  /** The delegate's HOME (an empty tmpfs inside). */
  home?: string;
  /** The server's own folders: hidden when a root holds them. */
  protect: readonly string[];
  /** Read-only besides: a worktree's repository git dir. */
  readOnly: readonly string[];
  /**
   * Held read-only besides the host-run names at the top: those found deeper (host_run_scan.ts)
   * and host-run files under other names (link targets, hard links: src/guard/identities.ts).
   */
  nestedHostRun: readonly string[];
  /** Files holding a secret (src/guard/identities.ts `secretPaths`): hidden, whatever their name. */
  secretFiles?: readonly string[];
  /**
   * Credential stores found below the top of the roots (`sub/.ssh`, `tools/.config/gh`: the
   * turn's change journal or walk, engines/tree/): hidden like the top-level ones.
   */
  credentialStores?: readonly string[];
  /** Git's objects holding a secret (src/guard/identities.ts `git`): hidden, or a view. */
  git?: Pick<GitObjects, "hidden" | "views">;
  tmpMb: number;
  /**
   * The user's toolchains (src/guard/toolchains.ts): read-only at their real paths, the
   * credential files in them hidden, and the job's cache folder writable at `$HOME/.cache`.
   */
  toolchains?: {
    view: Pick<ToolchainView, "opened" | "hidden">;
    cache?: { source: string; dest: string };
  };
}

/** Whether the jail masks `path` (by what it resolves to, as planJail masks it). */
export function jailMasks(layout: JailLayout, path: string): boolean {
  const target = real(path);
  return (layout.masks ?? []).some((m) => m.path === target);
}

function kindOf(path: string): "file" | "dir" | undefined {
  // A name that is not UTF-8 is looked at by its bytes, and named to bubblewrap by them
  // (bwrap_base.ts `bwrapCommand`); host_run_scan.ts refuses a link there, which is not
  // followed by bytes (real() leaves such a path as it is).
  if (hasRawBytes(path)) {
    const kind = rawKindOf(path);
    return kind === "dir" || kind === "file" ? kind : undefined;
  }
  try {
    const kind = pathFacts(path, true)?.kind;
    return kind === "dir" || kind === "file" ? kind : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `path` or a folder above it is one of `set` (real paths, each normalised). */
function underAny(set: ReadonlySet<string>, path: string): boolean {
  if (set.size === 0) return false;
  for (let at = path;; at = dirname(at)) {
    if (set.has(at)) return true;
    if (dirname(at) === at) return false;
  }
}

/** The jail for one turn. Creates the config dir when it is missing (it must be mounted). */
export function planJail(inputs: JailInputs): JailLayout {
  const cwd = real(inputs.cwd);
  const roots = outermost([cwd, ...inputs.addDirs.map(real)]);
  if (inputs.configDir) mkdirSync(inputs.configDir, { recursive: true, mode: 0o700 });
  const configDir = inputs.configDir && real(inputs.configDir);
  // Host-run paths are held read-only by the kernel, links followed: `.claude -> tools/claude`
  // makes tools/claude read-only too, whichever name a tool writes through.
  // Only real paths inside the roots: a link out (`.claude -> ~/.claude`) must not bring the
  // user's own folder into the jail, not even read-only.
  const readOnlyInside = new Set<string>();
  const hold = (path: string) => {
    const target = real(path);
    if (kindOf(target) !== undefined && roots.some((r) => within(r, target))) {
      readOnlyInside.add(target);
    }
  };
  for (const root of roots) for (const name of HOST_RUN_PATHS) hold(join(root, name));
  for (const path of inputs.nestedHostRun) hold(path);
  const masks: JailMask[] = [];
  const seen = new Set<string>();
  // Also inside the folders mounted read-only besides: a worktree's repository holds its store.
  const readOnly = inputs.readOnly.map(real).filter((p) => existsSync(p));
  const hide = (path: string) => {
    const target = real(path);
    const kind = kindOf(target);
    const shown = [...roots, ...readOnly].some((r) => within(r, target));
    if (!kind || seen.has(target) || !shown) return;
    if (roots.includes(target) || (configDir && target === configDir)) return;
    seen.add(target);
    masks.push({ path: target, kind });
  };
  for (const root of roots) for (const entry of CREDENTIAL_PATHS) hide(join(root, entry));
  for (const store of inputs.credentialStores ?? []) hide(store);
  for (const file of inputs.secretFiles ?? []) hide(file);
  for (const path of inputs.git?.hidden ?? []) hide(path);
  const views = (inputs.git?.views ?? [])
    .filter((v) => [...roots, ...readOnly].some((r) => within(r, v.packDir)))
    .map((v) => ({ source: v.view, dest: v.packDir }));
  for (const dir of inputs.protect) if (!configDir || !within(dir, configDir)) hide(dir);
  // A mask inside a folder's mask (a secret file or git object in a store, a secret-named link
  // into one) is hidden by it already, and bubblewrap could make no mount point in that
  // read-only folder: every later turn there would fail to start. Views likewise.
  // By the folders above each path (all real, so normalised), not by every pair: 100 nested
  // projects bring 400 read-only paths and 100 masks.
  const maskDirs = new Set(masks.filter((m) => m.kind === "dir").map((m) => m.path));
  const inMask = (path: string) => underAny(maskDirs, dirname(path));
  const shown = masks.filter((m) => !inMask(m.path));
  const shownViews = views.filter((v) => !inMask(v.dest));
  // A masked path is read-only already (/dev/null, or a read-only tmpfs): no bind under it.
  // Each mount in the jail costs every command of Claude Code's sandbox a little, which
  // bubblewrap reads and copies all of (issue 34); a `.envrc` in each of 100 nested projects
  // is both host-run and secret.
  // Nor one inside a mask: a host-run link into a store (`sub/CLAUDE.md -> ../.docker/x.json`,
  // which a delegate can plant) would ask bubblewrap for a mount point in the mask's read-only
  // folder, and every later turn there would fail to start.
  const shownPaths = new Set(shown.map((m) => m.path));
  for (const path of [...readOnlyInside]) {
    if (underAny(shownPaths, path)) readOnlyInside.delete(path);
  }
  // The folders a store of several parts is known by, bound onto themselves so that a command
  // cannot rename them (see storeHeads); not where a read-only bind or a mask holds them
  // already, which a writable bind would open up again.
  // Only strictly inside a root: a root cannot be renamed anyway (a mount point), and a folder
  // above one (`~/.config` of a job in `~/.config/helm`) must not be brought into the jail.
  const tools = inputs.toolchains;
  const cli = cliFiles(inputs.command, inputs.pathDirs);
  const held = [
    ...cli,
    ...readOnly,
    ...(tools?.view.opened.map((o) => o.path) ?? []),
    ...readOnlyInside,
    ...shown.map((m) => m.path),
  ];
  const pins = new Set<string>();
  for (const mask of shown) {
    for (const head of storeHeads(mask.path)) {
      if (!roots.some((r) => r !== head && within(r, head))) continue;
      if (held.some((h) => within(h, head))) continue;
      if (kindOf(head) === "dir") pins.add(head);
    }
  }
  // What each path bound inside the roots is now, and the folder of each mask there (a mask
  // makes its path anew where it is gone: the store renamed away with its folder would be
  // left open), checked inside the jail (bwrap_base.ts identityCheck).
  // Not a folder a view is mounted over (git's `objects/pack`): inside, that is the view.
  const folders = shown.map((m) => dirname(m.path)).filter((d) =>
    roots.some((r) => within(r, d)) && !shownViews.some((v) => within(v.dest, d))
  );
  const identities = plannedIdentities([...new Set([...readOnlyInside, ...pins, ...folders])]);
  const mountConfig = configDir && !roots.some((r) => within(r, configDir));
  if (tools?.cache) mkdirSync(tools.cache.source, { recursive: true, mode: 0o700 });
  return {
    cwd,
    writable: [...roots, ...(configDir && mountConfig ? [configDir] : [])],
    readOnly: [
      ...cli,
      ...etcLinkTargets(),
      ...readOnly,
      ...(tools?.view.opened.map((o) => o.path) ?? []),
    ],
    readOnlyInside: [...readOnlyInside],
    masks: [...shown, ...(tools?.view.hidden.map(({ path, kind }) => ({ path, kind })) ?? [])],
    ...(tools?.cache || pins.size > 0
      ? {
        binds: [
          ...(tools?.cache ? [tools.cache] : []),
          ...[...pins].map((p) => ({ source: p, dest: p })),
        ],
      }
      : {}),
    ...(shownViews.length > 0 ? { views: shownViews } : {}),
    ...(inputs.home && isAbsolute(inputs.home) ? { home: inputs.home } : {}),
    root: isRoot(),
    ...(isRoot() ? { systemMasks: rootOnlySystemFiles() } : {}),
    tmpMb: inputs.tmpMb,
    ...(identities.length > 0 ? { identities } : {}),
  };
}
