/**
 * Runs git for the server, in the user's repository and in worktrees a delegate wrote. The
 * delegate controls every file of its worktree, so nothing git reads from there may run a
 * program on the host: hooks and fsmonitor are off, the filter drivers the repository's
 * config defines are emptied (a planted `.gitattributes` could name one, gitattributes(5)
 * "filter"), diffs never run textconv or an external diff, and commits are never signed.
 * The environment is built from scratch and the user's global and system config are not
 * read (they may define more drivers); the repository's own config, which no delegate can
 * write, still applies.
 */
import process from "node:process";
import { DelegateError } from "../errors.ts";
import { concatBytes } from "../platform/bytes.ts";
import { SpawnError, spawnProcess } from "../platform/spawn.ts";
import { which } from "../platform/which.ts";

/** Output kept from one git command; a diff or a file list beyond it is an error, not a crash. */
const MAX_OUTPUT = 64 * 1024 * 1024;

/** Options every command gets, whatever config the repository holds. */
const SAFE_CONFIG = [
  "core.hooksPath=/dev/null",
  "core.fsmonitor=false",
  "commit.gpgSign=false",
  "tag.gpgSign=false",
  "core.pager=cat",
];

/** The server's own identity for the commits it makes: works without any user git config. */
export const DELEGATE_AUTHOR = { name: "ollama-delegate", email: "delegate@localhost" };

/** A git command failed: what it was, and git's own words. */
export class GitError extends DelegateError {
  override name = "GitError";
  constructor(
    readonly args: readonly string[],
    readonly code: number | null,
    readonly stderr: string,
    message?: string,
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
    path: which("git", { PATH: "/usr/bin:/bin:/usr/local/bin" }, "/") ??
      which("git", { PATH: process.env.PATH ?? "" }, "/"),
  };
  return gitPath.path;
}

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
}

export interface GitOutput {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `git <args>`; throws GitError when it cannot start or exits with another code. */
export async function git(args: readonly string[], options: GitOptions): Promise<GitOutput> {
  const command = findGit();
  if (!command) {
    throw new GitError(
      args,
      null,
      "",
      "git is not installed (not found in /usr/bin, /bin, /usr/local/bin or PATH); " +
        "worktree isolation needs it",
    );
  }
  const env: Record<string, string> = {
    PATH: "/usr/bin:/bin:/usr/local/bin",
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
  let child;
  try {
    child = await spawnProcess({
      command,
      args: full,
      cwd: options.cwd,
      env,
      ...(options.stdin ? { stdin: options.stdin } : {}),
    });
  } catch (e) {
    const why = e instanceof SpawnError ? e.code : String(e);
    throw new GitError(args, null, why, `Cannot run git (${command}): ${why}`);
  }
  const [stdout, stderr] = await Promise.all([collect(child.stdout), collect(child.stderr)]);
  const status = await child.status;
  const text = (b: Uint8Array | undefined) => (b ? new TextDecoder().decode(b) : "");
  if (stdout === undefined) {
    throw new GitError(args, status.code, "", `git ${args[0]} wrote over ${MAX_OUTPUT} bytes`);
  }
  const code = status.code ?? -1;
  if (code !== 0 && !(options.okCodes ?? []).includes(code)) {
    throw new GitError(args, status.code, text(stderr));
  }
  return { code, stdout: text(stdout), stderr: text(stderr) };
}

/** A stream's bytes, or undefined past MAX_OUTPUT (the rest is drained, not kept). */
async function collect(stream: ReadableStream<Uint8Array>): Promise<Uint8Array | undefined> {
  const parts: Uint8Array[] = [];
  let size = 0;
  let over = false;
  for await (const chunk of stream) {
    if (over) continue;
    size += chunk.length;
    if (size > MAX_OUTPUT) over = true;
    else parts.push(chunk);
  }
  return over ? undefined : concatBytes(parts, size);
}

/**
 * `-c filter.<name>.clean=` (and process, smudge) for every filter driver the repository's
 * config defines: git runs none of them then, whatever `.gitattributes` a delegate wrote.
 */
export async function emptiedFilters(gitDir: string, cwd: string): Promise<string[]> {
  const out = await git(["config", "--name-only", "--get-regexp", "^filter\\."], {
    cwd,
    gitDir,
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
