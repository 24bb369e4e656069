/**
 * git for the tests' own repositories: the one `git(cwd, ...args)` and the one "a repository
 * with a first commit" the tests build their fixtures on. The environment is fixed (no system
 * or user configuration, HOME the repository, a fixed identity) so that what a test sees does
 * not depend on the machine's git settings.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

/** Runs `git <args>` in `cwd` and gives its stdout; throws (with its stderr) when git fails. */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], {
    cwd,
    encoding: "utf8",
    env: { PATH: "/usr/bin:/bin", HOME: cwd, GIT_CONFIG_NOSYSTEM: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/**
 * `dir` (made when missing) as a repository on `main` whose first commit ("first") holds
 * `files` (relative path: content; folders made as needed). Gives `dir`.
 */
export function committedRepo(dir: string, files: Readonly<Record<string, string>>): string {
  mkdirSync(dir, { recursive: true });
  git(dir, "init", "-q", "-b", "main");
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  git(dir, "add", "-A");
  git(dir, "commit", "-q", "-m", "first");
  return dir;
}
