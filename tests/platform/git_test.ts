/** git() through runCommand: input, exit codes that are answers, the output cap, failures. */
import assert from "node:assert/strict";
import { git, GitError } from "../../src/platform/git.ts";
import { tempDir } from "../support/harness.ts";

Deno.test("git: stdin, okCodes, the byte cap and a failure", async () => {
  const cwd = tempDir();
  await git(["init", "-q"], { cwd });
  const hashed = await git(["hash-object", "--stdin"], {
    cwd,
    stdin: new TextEncoder().encode("hello\n"),
  });
  assert.equal(hashed.stdout.trim(), "ce013625030ba8dba906f756967f9e9ca394464a");
  const differs = await git(["diff", "--quiet", "--no-index", "/dev/null", ".git/HEAD"], {
    cwd,
    okCodes: [1],
  });
  assert.equal(differs.code, 1);
  const big = await git(["cat-file", "-p", "HEAD:nothing"], { cwd }).catch((e) => e);
  assert.ok(big instanceof GitError);
  assert.equal(big.reason, undefined);
  assert.match(big.message, /^git cat-file -p HEAD:nothing failed \(exit 128\)/);
  const tooBig = await git(["hash-object", "--stdin"], {
    cwd,
    stdin: new TextEncoder().encode("x"),
    maxBytes: 10,
  }).catch((e) => e);
  assert.ok(tooBig instanceof GitError);
  assert.equal(tooBig.reason, "too-big");
});
