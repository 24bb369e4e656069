/**
 * The review's git goes through the worktree code's runner: the user's global config is not
 * read, output over the cap is a clear error, and an exit code is an answer, not a crash.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runGit } from "../../src/review/git.ts";
import { tempDir } from "../support/harness.ts";

Deno.test("review git: no global config, capped output, exit codes returned", async () => {
  const home = tempDir("od-review-home-");
  const repo = tempDir("od-review-git-");
  const marker = join(home, "global-filter-ran");
  // A filter driver in the user's global config, which a reviewed .gitattributes names: the
  // server's git does not read that config, so nothing can name what it defines.
  writeFileSync(join(home, ".gitconfig"), `[filter "g"]\n\tclean = touch ${marker}; cat\n`);
  const env = { PATH: "/usr/bin:/bin", HOME: home };
  execFileSync("git", ["init", "-q", "-b", "main"], { cwd: repo, env });
  writeFileSync(join(repo, "a.txt"), "x".repeat(10_000));
  writeFileSync(join(repo, ".gitattributes"), "a.txt filter=g\n");
  execFileSync("git", ["add", "."], { cwd: repo, env: { ...env, GIT_CONFIG_GLOBAL: "/dev/null" } });
  writeFileSync(join(repo, "a.txt"), "y".repeat(20_000));
  const saved = Deno.env.get("HOME");
  Deno.env.set("HOME", home);
  try {
    // The diff reads the changed file, through the clean filter had git known it.
    await runGit(repo, ["diff", "--stat"]);
    const status = await runGit(repo, ["status", "--porcelain"]);
    assert.equal(existsSync(marker), false, "the user's global config was read");
    assert.equal(status.code, 0);
    assert.equal(new TextDecoder().decode(status.stdout), "A  .gitattributes\nAM a.txt\n");
    const missing = await runGit(repo, ["rev-parse", "--verify", "--quiet", "nope"]);
    assert.equal(missing.code, 1);
    await assert.rejects(
      runGit(repo, ["diff", "--cached"], { maxBytes: 100 }),
      /Cannot review: git diff printed over 100 bytes\. Review a narrower range/,
    );
  } finally {
    if (saved === undefined) Deno.env.delete("HOME");
    else Deno.env.set("HOME", saved);
  }
});
