/**
 * Runs git for a review, on the server's side: a repository is data here, never code. The
 * runner is the worktree code's (../platform/git.ts): the user's global and system config are
 * not read, hooks and the fsmonitor command are off (git-config(1) "core.hooksPath",
 * "core.fsmonitor"), the repository's filter drivers are emptied (`reviewConfig`), and the
 * environment is built from scratch. Diffs add `--no-ext-diff --no-textconv` and
 * `--ignore-submodules=all` (see diff.ts): a repository a delegate made inside the reviewed
 * one has its own config, which git would otherwise read for a gitlink's submodule.
 */
import { DelegateError } from "../errors.ts";
import { emptiedFilters, gitBytes, GitError } from "../platform/git.ts";

export interface GitResult {
  code: number | null;
  stdout: Uint8Array;
  stderr: string;
}

const GIT_TIMEOUT_MS = 60_000;
/** Output a review reads from one git command (a diff), at most. */
export const MAX_DIFF_BYTES = 32 * 1024 * 1024;

/** A git command of a review printed more than it may read (`maxBytes`). */
export class GitOutputTooBig extends DelegateError {
  override name = "GitOutputTooBig";
}
const STDERR_KEEP = 4000;

/** Paths printed as they are: parseDiff reads both forms, and plain ones read better. */
const REVIEW_CONFIG = ["core.quotePath=false"];

/**
 * The `-c` settings every git command of a review of `cwd` gets: the repository's filter
 * drivers emptied (a `.gitattributes` in the reviewed changes could name one).
 */
export async function reviewConfig(cwd: string): Promise<string[]> {
  try {
    return [...REVIEW_CONFIG, ...await emptiedFilters(undefined, cwd)];
  } catch (e) {
    throw reviewError(e, "git config");
  }
}

export interface RunGitOptions {
  /** Output kept, at most; more is a clear error (the review asks for a narrower range). */
  maxBytes?: number;
  /** From `reviewConfig`; without it, filters are emptied for this one command. */
  config?: readonly string[];
}

/**
 * Runs `git <args>` in `cwd` and collects at most `maxBytes` of its output; more is a clear
 * error (the review asks for a narrower range), never unbounded memory.
 */
export async function runGit(
  cwd: string,
  args: readonly string[],
  options: RunGitOptions = {},
): Promise<GitResult> {
  const maxBytes = options.maxBytes ?? MAX_DIFF_BYTES;
  const config = options.config ?? await reviewConfig(cwd);
  try {
    const r = await gitBytes(args, {
      cwd,
      config,
      anyCode: true,
      maxBytes,
      timeoutMs: GIT_TIMEOUT_MS,
    });
    return { code: r.code, stdout: r.stdout, stderr: r.stderr.trim().slice(0, STDERR_KEEP) };
  } catch (e) {
    throw reviewError(e, `git ${args[0]}`, maxBytes);
  }
}

/** A runner's failure in a review's words: what to do about it. */
function reviewError(e: unknown, what: string, maxBytes = 0): unknown {
  if (!(e instanceof GitError)) return e;
  switch (e.reason) {
    case "too-big":
      return new GitOutputTooBig(
        `Cannot review: ${what} printed over ${maxBytes} bytes. Review a narrower range ` +
          "(commit some changes first, or pass a nearer base)",
      );
    case "timeout":
      return new DelegateError(`Cannot review: ${what} took over ${GIT_TIMEOUT_MS / 1000} s`);
    case "missing":
      return new DelegateError(
        "Cannot review: git is not installed on the server. Install git, or review by hand " +
          "with delegate_start",
      );
    default:
      return new DelegateError(`Cannot review: ${e.message}`, { cause: e });
  }
}

/** git's stdout as text; throws with git's own words when it failed. */
export async function gitText(
  cwd: string,
  args: readonly string[],
  what: string,
  config?: readonly string[],
): Promise<string> {
  const r = await runGit(cwd, args, config ? { config } : {});
  if (r.code !== 0) {
    throw new DelegateError(`Cannot review: ${what} failed (${r.stderr || `exit ${r.code}`})`);
  }
  return new TextDecoder().decode(r.stdout);
}
