/**
 * Runs git for the server, in the user's repository, in worktrees a delegate wrote, for
 * reviews and for the guard's look at a repository's object store (one runner for all of them). The delegate controls every file of its worktree, so
 * nothing git reads from there may run a program on the host: hooks and fsmonitor are off,
 * the filter drivers the repository's config defines are emptied (a planted `.gitattributes`
 * could name one, gitattributes(5) "filter"), diffs never run textconv or an external diff,
 * and commits are never signed. Nor does git descend into a repository a delegate made inside
 * the worktree: that repository's own config is the delegate's and may name a filter, and
 * `git status` or `git diff` against the work tree run it for a gitlink's submodule unless
 * told `--ignore-submodules=all` on the command line (a `.gitmodules` entry overrides the
 * config setting); callers add that flag, and the server never stages a gitlink.
 * The environment is built from scratch and the user's global and system config are not
 * read (they may define more drivers); the repository's own config, which no delegate can
 * write, still applies.
 */
import process from "node:process";
import { DelegateError } from "../errors.ts";
import { minimalShellEnv } from "./env.ts";
import { isWindows } from "./runtime.ts";
import { runCommand } from "./command_run.ts";
import { which } from "./which.ts";

/** Output kept from one git command; a diff or a file list beyond it is an error, not a crash. */
const MAX_OUTPUT = 64 * 1024 * 1024;

/** Options every command gets, whatever config the repository holds. */
const SAFE_CONFIG = [
  "core.hooksPath=/dev/null",
  "core.fsmonitor=false",
  "commit.gpgSign=false",
  "tag.gpgSign=false",
  "core.pager=cat",
  // Neither descends into submodules nor summarizes them (the flag above still matters).
  "submodule.recurse=false",
  "status.submoduleSummary=false",
  "diff.submodule=short",
];

/** A git command failed: what it was, and git's own words. */
export class GitError extends DelegateError {
  override name = "GitError";
  constructor(
    readonly args: readonly string[],
    readonly code: number | null,
    readonly stderr: string,
    message?: string,
    /** Why, when git did not simply fail: too much output, too slow, or not installed. */
    readonly reason?: "too-big" | "timeout" | "missing",
  ) {
    super(
      message ??
        `git ${args.slice(0, 3).join(" ")} failed (exit ${code ?? "signal"}): ${
          stderr.trim().split("\n").slice(-3).join(" ").slice(0, 400)
        }`,
    );
  }
}

let gitPath: { path: string | undefined } | undefined;

/** git, from the system's directories first and only then the server's PATH. */
export function findGit(): string | undefined {
  gitPath ??= {
    path: isWindows
      ? which("git", minimalShellEnv(), process.cwd())
      : which("git", { PATH: POSIX_PATH }, "/") ??
        which("git", { PATH: process.env.PATH ?? "" }, "/"),
  };
  return gitPath.path;
}

const POSIX_PATH = "/usr/bin:/bin:/usr/local/bin";

export interface GitOptions {
  cwd: string;
  /** Pins the repository: a `.git` file a delegate rewrote is never followed. */
  gitDir?: string;
  /** Pins the common dir too: the `commondir` file in gitDir is not followed either. */
  commonDir?: string;
  workTree?: string;
  stdin?: Uint8Array;
  /** Extra `-c` settings, e.g. emptied filter drivers. */
  config?: readonly string[];
  /** Exit codes that are answers, not failures (`diff --quiet` exits 1 for "differs"). */
  okCodes?: readonly number[];
  /** Every exit code is an answer: the caller reads `code` itself. */
  anyCode?: boolean;
  /** Output kept, at most (default 64 MiB); more is a GitError with reason "too-big". */
  maxBytes?: number;
  /** Killed (with its children) after this long: a GitError with reason "timeout". */
  timeoutMs?: number;
}

export interface GitOutput {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `git <args>`; throws GitError when it cannot start or exits with another code. */
export async function git(args: readonly string[], options: GitOptions): Promise<GitOutput> {
  const out = await gitBytes(args, options);
  return { code: out.code, stdout: new TextDecoder().decode(out.stdout), stderr: out.stderr };
}

/** As `git`, with stdout as bytes (a diff of binary files is not text). */
export async function gitBytes(
  args: readonly string[],
  options: GitOptions,
): Promise<{ code: number; stdout: Uint8Array; stderr: string }> {
  const command = findGit();
  if (!command) {
    throw new GitError(
      args,
      null,
      "",
      "git is not installed (not found in /usr/bin, /bin, /usr/local/bin or PATH); " +
        "worktree isolation and reviews need it",
      "missing",
    );
  }
  const env: Record<string, string> = {
    // Windows needs its system variables (SystemRoot...) to start git at all.
    ...(isWindows ? minimalShellEnv() : { PATH: POSIX_PATH }),
    LC_ALL: "C",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_TERMINAL_PROMPT: "0",
    // Read-only commands in the user's checkout must not rewrite its index either.
    GIT_OPTIONAL_LOCKS: "0",
    ...(options.gitDir ? { GIT_DIR: options.gitDir } : {}),
    ...(options.commonDir ? { GIT_COMMON_DIR: options.commonDir } : {}),
    ...(options.workTree ? { GIT_WORK_TREE: options.workTree } : {}),
  };
  const full = [...[...SAFE_CONFIG, ...(options.config ?? [])].flatMap((c) => ["-c", c]), ...args];
  const max = options.maxBytes ?? MAX_OUTPUT;
  const run = await runCommand({
    command,
    args: full,
    cwd: options.cwd,
    env,
    keepChars: 0,
    maxBytes: max,
    ...(options.stdin ? { stdin: options.stdin } : {}),
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    okCodes: [0, ...(options.okCodes ?? [])],
    // A session of its own only for a deadline: it forks the whole server (command_run.ts),
    // and worktrees, reviews and evidence run git hundreds of times. Hooks and fsmonitor are
    // off (SAFE_CONFIG), so a git that ends leaves nothing behind to sweep; the cap's and the
    // deadline's stop walk its process tree either way.
    ownSession: options.timeoutMs !== undefined,
  });
  if (run.notStarted !== undefined) {
    throw new GitError(
      args,
      null,
      run.notStarted,
      `Cannot run git (${command}): ${run.notStarted}`,
    );
  }
  const stderr = run.stderr ? new TextDecoder().decode(run.stderr) : "";
  if (run.timedOut) {
    const s = options.timeoutMs! / 1000;
    throw new GitError(args, run.exitCode, "", `git ${args[0]} took over ${s} s`, "timeout");
  }
  if (run.overCap) {
    throw new GitError(args, run.exitCode, "", `git ${args[0]} wrote over ${max} bytes`, "too-big");
  }
  if (run.stdout === undefined) {
    throw new GitError(
      args,
      run.exitCode,
      stderr,
      `git ${args[0]} ended, but a process it started still held its output`,
    );
  }
  const code = run.exitCode ?? -1;
  if (!run.accepted && !options.anyCode) throw new GitError(args, run.exitCode, stderr);
  return { code, stdout: run.stdout, stderr };
}

/**
 * `-c filter.<name>.clean=` (and process, smudge) for every filter driver the repository's
 * config defines: git runs none of them then, whatever `.gitattributes` a delegate wrote.
 */
export async function emptiedFilters(gitDir: string | undefined, cwd: string): Promise<string[]> {
  const out = await git(["config", "--name-only", "--get-regexp", "^filter\\."], {
    cwd,
    ...(gitDir ? { gitDir } : {}),
    okCodes: [1],
  });
  const names = new Set<string>();
  for (const key of out.stdout.split("\n")) {
    const last = key.lastIndexOf(".");
    if (key.startsWith("filter.") && last > "filter.".length) {
      names.add(key.slice("filter.".length, last));
    }
  }
  return [...names].flatMap((n) => [
    `filter.${n}.clean=`,
    `filter.${n}.smudge=`,
    `filter.${n}.process=`,
    `filter.${n}.required=false`,
  ]);
}
