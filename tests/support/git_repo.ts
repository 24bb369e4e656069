/**
 * git for the tests' own repositories: the one `git(cwd, ...args)` and the one "a repository
 * with a first commit" the tests build their fixtures on. The environment is fixed (no system
 * or user configuration, HOME the repository, a fixed identity) so that what a test sees does
 * not depend on the machine's git settings.
 */
import { spawnSyncExact } from "../../src/platform/posix/spawn_sync.ts";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

/** Runs `git <args>` in `cwd` and gives its stdout; throws (with its stderr) when git fails. */
export function git(cwd: string, ...args: string[]): string {
  // Exactly this environment, so none of the developer's GIT_* variables reaches it (Deno's
  // own execFileSync would add them: platform/posix/spawn_sync.ts).
  const run = spawnSyncExact("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], {
    cwd,
    encoding: "utf8",
    env: { PATH: "/usr/bin:/bin", HOME: cwd, GIT_CONFIG_NOSYSTEM: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  if (run.error) throw run.error;
  if (run.status !== 0) {
    throw new Error(`git ${args.join(" ")} exited with ${run.status}: ${String(run.stderr)}`);
  }
  return String(run.stdout);
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
