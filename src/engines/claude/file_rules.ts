/**
 * Permission rules that keep a Claude Code delegate's own file tools (Edit, Write, Read) away
 * from the protected paths, whatever its permission mode: deny rules are consulted before
 * any mode, bypassPermissions included. Claude Code checks path rules only for Edit (which
 * covers every tool that edits files) and Read; an absolute path is written with a leading
 * `//` (a single `/` would be relative to a settings file). Host-run paths are denied at any
 * depth below each root (a `**` pattern), as protected_paths.ts says why. Its sandbox guards
 * Bash; these rules guard the tools that do not run through it, on every OS (and Claude Code
 * also holds a plain redirection in a Bash command, `echo x > proj/.envrc`, to them).
 */
import { CREDENTIAL_PATHS, HOST_RUN_PATHS } from "../protected_paths.ts";

export interface FileRuleScope {
  /** The working directory and add_dirs. */
  roots: readonly string[];
  /** The delegate's HOME, where credential stores are. */
  home?: string;
  /** The server's own settings, records and Claude Code config. */
  protect: readonly string[];
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
  for (const root of scope.roots) {
    for (const name of HOST_RUN_PATHS) {
      // At any depth (gitignore-style `**/`): cwd may be a folder of projects, and each
      // project's `.git/hooks` or `.claude/settings.json` runs when the user works there.
      rules.push(...both("Edit", `${absolute(root)}/${name}`));
      rules.push(...both("Edit", `${absolute(root)}/**/${name}`));
    }
  }
  const credentialHomes = scope.home ? [scope.home] : [];
  for (const home of credentialHomes) {
    for (const entry of CREDENTIAL_PATHS) {
      const path = `${absolute(home)}/${entry}`;
      rules.push(...both("Read", path), ...both("Edit", path));
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
