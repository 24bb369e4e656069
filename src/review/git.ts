/**
 * Runs git for a review, on the server's side: a repository is data here, never code. Hooks
 * and the fsmonitor command are switched off (a repository's config may name programs:
 * git-config(1) "core.fsmonitor", "core.hooksPath"), as are external diff drivers and textconv
 * filters (gitattributes(5) "diff"), and the environment is built from scratch.
 */
import { DelegateError } from "../errors.ts";
import { concatBytes } from "../platform/bytes.ts";
import { minimalShellEnv } from "../platform/env.ts";
import { spawnProcess } from "../platform/spawn.ts";
import { isWindows } from "../platform/runtime.ts";
import { killTree } from "../platform/tree_kill.ts";
import { which } from "../platform/which.ts";

/** Options every git command of a review gets, before the subcommand. */
const SAFE_CONFIG = [
  "--no-pager",
  "-c",
  "core.hooksPath=/dev/null",
  "-c",
  "core.fsmonitor=false",
  "-c",
  "core.quotePath=false",
];

export interface GitResult {
  code: number | null;
  stdout: Uint8Array;
  stderr: string;
}

const GIT_TIMEOUT_MS = 60_000;
const STDERR_KEEP = 4000;

/**
 * Runs `git <args>` in `cwd` and collects at most `maxBytes` of its output; more is a clear
 * error (the review asks for a narrower range), never unbounded memory.
 */
export async function runGit(
  cwd: string,
  args: readonly string[],
  maxBytes = 32 * 1024 * 1024,
): Promise<GitResult> {
  const env = {
    ...minimalShellEnv(),
    LC_ALL: "C",
    GIT_TERMINAL_PROMPT: "0",
    // A review only reads: no index refresh written behind the user's back.
    GIT_OPTIONAL_LOCKS: "0",
  };
  const git = which(isWindows ? "git.exe" : "git", env, cwd);
  if (!git) {
    throw new DelegateError(
      "Cannot review: git is not on the server's PATH. Install git, or review by hand with " +
        "delegate_start",
    );
  }
  const child = await spawnProcess({
    command: git,
    args: [...SAFE_CONFIG, ...args],
    cwd,
    env,
    detached: !isWindows,
  });
  let over = false;
  const timer = setTimeout(() => {
    over = true;
    killTree(child.pid, { graceMs: 500 }).catch(() => child.kill("SIGKILL"));
  }, GIT_TIMEOUT_MS);
  const chunks: Uint8Array[] = [];
  let size = 0;
  let tooBig = false;
  const readOut = (async () => {
    for await (const chunk of child.stdout) {
      if (tooBig) continue;
      size += chunk.length;
      if (size > maxBytes) {
        tooBig = true;
        child.kill("SIGKILL");
        continue;
      }
      chunks.push(chunk);
    }
  })();
  let stderr = "";
  const readErr = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of child.stderr) {
      if (stderr.length < STDERR_KEEP) stderr += decoder.decode(chunk, { stream: true });
    }
  })();
  const status = await child.status;
  await Promise.allSettled([readOut, readErr]);
  clearTimeout(timer);
  if (tooBig) {
    throw new DelegateError(
      `Cannot review: git ${args[0]} printed over ${maxBytes} bytes. Review a narrower range ` +
        "(commit some changes first, or pass a nearer base)",
    );
  }
  if (over) {
    throw new DelegateError(`Cannot review: git ${args[0]} took over ${GIT_TIMEOUT_MS / 1000} s`);
  }
  return { code: status.code, stdout: concatBytes(chunks, size), stderr: stderr.trim() };
}

/** git's stdout as text; throws with git's own words when it failed. */
export async function gitText(cwd: string, args: readonly string[], what: string): Promise<string> {
  const r = await runGit(cwd, args);
  if (r.code !== 0) {
    throw new DelegateError(`Cannot review: ${what} failed (${r.stderr || `exit ${r.code}`})`);
  }
  return new TextDecoder().decode(r.stdout);
}
