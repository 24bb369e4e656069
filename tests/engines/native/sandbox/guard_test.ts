/**
 * What the turn-start identities (src/guard/identities.ts) add to the real bubblewrap sandbox:
 * secret files and their hard links hidden (also inside a read-only host-run folder), host-run
 * files under other names read-only, and a host-run link's missing target kept from being
 * created. Each test runs the command for real and looks at the host afterwards.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { link, mkdir, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import process from "node:process";
import { collectGuardIdentities } from "../../../../src/guard/identities.ts";
import type { BwrapRunner } from "../../../../src/engines/native/sandbox/shell_runner.ts";
import { runShell } from "../../../../src/engines/native/sandbox/run_shell.ts";

const BWRAP = "/usr/bin/bwrap";
const hasBwrap = existsSync(BWRAP) && process.platform === "linux";

async function guarded(cwd: string, top: string): Promise<BwrapRunner> {
  const guard = await collectGuardIdentities([cwd]);
  assert.equal(guard.pathsIncomplete, undefined);
  return {
    kind: "bwrap",
    bwrap: BWRAP,
    runDir: join(top, "run"),
    nested: {
      readOnly: guard.hostRunPaths,
      secrets: guard.secretPaths,
      missing: guard.hostRunMissing,
    },
  };
}

function run(runner: BwrapRunner, cwd: string, command: string) {
  return runShell(runner, {
    command,
    cwd,
    writable: [cwd],
    timeoutMs: 30_000,
    signal: new AbortController().signal,
    keepChars: 20_000,
  });
}

Deno.test({
  name: "sandbox: secrets hidden (hard links and inside .devcontainer too), host-run files " +
    "under other names read-only, a dangling host-run link's target not created",
  ignore: !hasBwrap,
  async fn() {
    const top = await realpath(await Deno.makeTempDir({ prefix: "sandbox_guard_" }));
    const cwd = join(top, "proj");
    try {
      await mkdir(join(cwd, ".devcontainer"), { recursive: true });
      await writeFile(join(cwd, ".env"), "A=poison-env\n");
      await link(join(cwd, ".env"), join(cwd, "notes.txt"));
      await writeFile(join(cwd, ".devcontainer", ".env"), "B=poison-dev\n");
      await writeFile(join(cwd, "CLAUDE.md"), "rules\n");
      await link(join(cwd, "CLAUDE.md"), join(cwd, "RULES.md"));
      await mkdir(join(cwd, "extra"));
      await symlink("../house.md", join(cwd, "extra", "CLAUDE.md"));
      const result = await run(
        await guarded(cwd, top),
        cwd,
        'cat .env notes.txt .devcontainer/.env; echo x >> RULES.md; echo "agents=$?"; ' +
          'echo x > house.md; echo "house=$?"; echo ok > plain.txt; echo "plain=$?"',
      );
      assert.doesNotMatch(result.output, /poison-/);
      assert.match(result.output, /cat: \.devcontainer\/\.env: Permission denied/);
      assert.match(result.output, /agents=[1-9]/);
      assert.match(result.output, /house=[1-9]/);
      assert.match(result.output, /plain=0/);
      assert.equal(readFileSync(join(cwd, "CLAUDE.md"), "utf8"), "rules\n");
      assert.equal(existsSync(join(cwd, "house.md")), false, "the placeholder was left behind");
      assert.equal(readFileSync(join(cwd, "plain.txt"), "utf8"), "ok\n");
    } finally {
      await rm(top, { recursive: true, force: true });
    }
  },
});
