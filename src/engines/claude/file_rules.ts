/**
 * Permission rules that keep a Claude Code delegate's own file tools (Edit, Write, Read) away
 * from the protected paths, whatever its permission mode: deny rules are consulted before
 * any mode, bypassPermissions included. Claude Code checks path rules only for Edit (which
 * covers every tool that edits files) and Read; an absolute path is written with a leading
 * `//` (a single `/` would be relative to a settings file). Host-run paths are denied at any
 * depth below each root (a `**` pattern), as protected_paths.ts says why. Its sandbox guards
 * Bash; these rules guard the tools that do not run through it, on every OS (and Claude Code
 * also holds a plain redirection in a Bash command, `echo x > proj/.envrc`, to them).
 *
 * `$HOME` is denied by default: everything in it but the way down to a root (deny rules
 * outrank allow rules, so the roots are carved out by naming what lies beside them, level by
 * level). On Linux the jail (jail.ts) already keeps `$HOME` out of sight; elsewhere these
 * rules are the line, and a token file a new tool adds tomorrow is covered all the same.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { isInside } from "../../platform/path_inside.ts";
import {
  CREDENTIAL_PATHS,
  HOST_RUN_PATHS,
  SECRET_FILE_PATTERNS,
} from "../../guard/protected_paths.ts";

export interface FileRuleScope {
  /** The working directory and add_dirs. */
  roots: readonly string[];
  /** The delegate's HOME, where credential stores are. */
  home?: string;
  /** The server's own settings, records and Claude Code config. */
  protect: readonly string[];
  /** Denied to Read: secret files found in the roots; as root, the system files only root may read. */
  unreadable?: readonly string[];
  /** Denied to Edit: host-run files under other names (a link's target, a hard link). */
  unwritable?: readonly string[];
  /** Also deny secret file names at any depth (when the walk could not find them all). */
  secretNames?: boolean;
  /** Deny the file tools git's object stores in the roots (where no jail hides secrets there). */
  gitObjects?: boolean;
  /**
   * The jail hides every credential store in the roots, at any depth (the turn found them all):
   * no Read rules by pattern for them. Claude Code's sandbox turns a Read deny pattern into the
   * paths that match it before every command, by reading the whole tree, `node_modules`
   * included (issue 34: 31,500 folder reads and 0.5-2 s per command at 100,000 files).
   */
  credentialsHidden?: boolean;
  /**
   * Left out of `$HOME`'s deny rules like the roots: the toolchains the jail opens read-only
   * and the job's cache folder (`$HOME/.cache`). Claude Code's sandbox turns Read and Edit deny
   * rules into paths its commands cannot read or write, which would hide them from Bash.
   */
  readable?: readonly string[];
}

/** Most entries beside the way to the roots that are named one by one (see besideRoots). */
const MAX_BESIDE = 400;

/**
 * `dir` when no root lies in it; else its entries beside the way down to the roots, level by
 * level, the roots themselves left out. Bounded: past MAX_BESIDE entries the rest of a level
 * is not named (Linux's jail still hides it; the doc says so for other systems).
 */
export function besideRoots(dir: string, roots: readonly string[], max = MAX_BESIDE): string[] {
  const within = roots.filter((r) => isInside(dir, r));
  if (within.length === 0) return [dir];
  if (within.some((r) => r === dir)) return [];
  const out: string[] = [];
  const walk = (at: string) => {
    let names: string[] = [];
    try {
      names = readdirSync(at);
    } catch {
      return;
    }
    for (const name of names.sort()) {
      if (out.length >= max) return;
      const path = join(at, name);
      if (within.some((r) => r === path)) continue;
      if (within.some((r) => isInside(path, r))) walk(path);
      else out.push(path);
    }
  };
  walk(dir);
  return out;
}

/** `//abs/path`, with Windows drive paths in the `//c/...` form Claude Code documents. */
function absolute(path: string): string {
  const posix = path.replaceAll("\\", "/").replace(
    /^([A-Za-z]):/,
    (_, d: string) => `/${d.toLowerCase()}`,
  );
  return `/${posix.startsWith("/") ? posix : `/${posix}`}`.replace(/\/+$/, "");
}

/** The path itself and everything below it. */
const both = (tool: string, path: string) => [`${tool}(${path})`, `${tool}(${path}/**)`];

/** The `permissions.deny` rules for one turn. */
export function protectedFileRules(scope: FileRuleScope): string[] {
  const rules: string[] = [];
  // Inside the roots, only `**/` patterns, which match at the top too (gitignore-style: zero or
  // more folders). Claude Code's sandbox turns a deny rule that names a literal path into a
  // mount of /dev/null there, also where nothing exists yet, which a delegate's `ls` then shows
  // as a dozen character devices named after config files; a pattern is not mounted. Host-run
  // paths the jail holds read-only when they exist, and one a command creates is moved out of
  // the project when the turn ends (planted.ts).
  for (const root of scope.roots) {
    for (const name of HOST_RUN_PATHS) {
      // At any depth: cwd may be a folder of projects, and each project's `.git/hooks` or
      // `.claude/settings.json` runs when the user works there.
      rules.push(...both("Edit", `${absolute(root)}/**/${name}`));
    }
    // git's object store, which may hold secret files' content (src/guard/git_secrets.ts),
    // where no jail hides those objects: not for the file tools (git commands read it for a
    // model). In the jail the store it shows is safe to read, and Claude Code's sandbox would
    // hide every object matching this rule from Bash, git's own reads included.
    if (scope.gitObjects) rules.push(`Read(${absolute(root)}/**/.git/**/objects/**)`);
    // Credential stores inside the roots, at any depth. An Edit pattern costs nothing per
    // command (measured); it keeps the file tools from making a store the jail did not hide.
    for (const entry of CREDENTIAL_PATHS) {
      const path = `${absolute(root)}/**/${entry}`;
      if (!scope.credentialsHidden) rules.push(...both("Read", path));
      rules.push(...both("Edit", path));
    }
  }
  if (scope.home) {
    for (const path of besideRoots(scope.home, [...scope.roots, ...(scope.readable ?? [])])) {
      rules.push(...both("Read", absolute(path)), ...both("Edit", absolute(path)));
    }
  }
  for (const path of scope.unreadable ?? []) rules.push(`Read(${absolute(path)})`);
  for (const path of scope.unwritable ?? []) rules.push(...both("Edit", absolute(path)));
  if (scope.secretNames) {
    for (const root of scope.roots) {
      for (const pattern of SECRET_FILE_PATTERNS) {
        rules.push(`Read(${absolute(root)}/**/${pattern})`, `Read(${absolute(root)}/${pattern})`);
      }
    }
  }
  for (const dir of scope.protect) {
    rules.push(...both("Read", absolute(dir)), ...both("Edit", absolute(dir)));
  }
  return [...new Set(rules)];
}

/**
 * Extra rules for a turn in the worktree the server made under its state dir, where the
 * state dir itself cannot be denied whole. Other jobs' folders are denied by their name's
 * shape (a UUID), so that folders made during the turn are covered too; the user's checkout
 * and the repository's `.git` may be read (git needs them) but not edited, nor the worktree's
 * own `.git` file.
 */
export function worktreeFileRules(
  scope: { stateDir: string; checkout: string; worktree: string },
): string[] {
  const state = absolute(scope.stateDir);
  const uuid = "*-*-*-*-*";
  return [
    ...both("Read", `${state}/${uuid}`),
    ...both("Edit", `${state}/${uuid}`),
    ...both("Read", `${state}/.sessions`),
    ...both("Edit", `${state}/.sessions`),
    ...both("Edit", absolute(scope.checkout)),
    // Also when cwd is a folder below the worktree's top, where the roots' rules do not reach.
    ...both("Edit", `${absolute(scope.worktree)}/.git`),
  ];
}
