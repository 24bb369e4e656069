/**
 * The real bubblewrap sandbox with a working directory that holds several projects: the
 * host-run paths of the projects below it (`proj/.git`, `proj/.claude`, `sub/.envrc`) are as
 * read-only inside as the top-level ones; once a command moves one of them (or a folder above
 * it) the turn's shell is refused rather than left with a hole; and a tree too large to scan
 * gets no sandbox at all.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { BwrapRunner } from "../../../../src/engines/native/sandbox/shell_runner.ts";
import { runShell } from "../../../../src/engines/native/sandbox/run_shell.ts";
import { SCAN_BOUNDS, scanHostRun } from "../../../../src/guard/host_run_scan.ts";
import { bashTool } from "../../../../src/engines/native/tools/bash.ts";
import type { ToolContext } from "../../../../src/engines/native/tools/types.ts";
import { BWRAP, bwrapTest, withTempFolder } from "./support.ts";

/** A folder of projects: `code/proj` is a git repository with Claude Code settings. */
async function projects(top: string): Promise<string> {
  const code = join(top, "code");
  const proj = join(code, "proj");
  await mkdir(join(proj, "src"), { recursive: true });
  execFileSync("git", ["init", "-q", proj]);
  await mkdir(join(proj, ".claude"));
  await writeFile(join(proj, ".claude", "settings.json"), "{}\n");
  await mkdir(join(code, "other", "sub"), { recursive: true });
  await writeFile(join(code, "other", "sub", ".envrc"), "export A=1\n");
  return code;
}

function runner(top: string): BwrapRunner {
  return { kind: "bwrap", bwrap: BWRAP, runDir: join(top, "run") };
}

function request(cwd: string, command: string) {
  return {
    command,
    cwd,
    writable: [cwd],
    timeoutMs: 60_000,
    signal: new AbortController().signal,
    keepChars: 20_000,
  };
}

bwrapTest(
  "sandbox: host-run paths of projects below cwd are read-only inside; other files are not",
  async () => {
    await withTempFolder("sandbox_nested_", async (top) => {
      const code = await projects(top);
      const config = readFileSync(join(code, "proj/.git/config"), "utf8");
      const run = runner(top);
      const attempt = async (command: string) => (await runShell(run, request(code, command)));
      assert.notEqual((await attempt("echo x > proj/.git/config")).exitCode, 0);
      const hook = await attempt(
        "mkdir -p proj/.git/hooks && echo 'touch /tmp/x' > proj/.git/hooks/post-checkout",
      );
      assert.notEqual(hook.exitCode, 0, hook.output);
      assert.match(hook.output, /Read-only file system/);
      assert.notEqual((await attempt("echo '{}' > proj/.claude/settings.json")).exitCode, 0);
      assert.notEqual((await attempt("echo 'rm -rf ~' >> other/sub/.envrc")).exitCode, 0);
      const ok = await attempt("echo ok > proj/src/a.txt");
      assert.equal(ok.exitCode, 0, ok.output);
      assert.equal(readFileSync(join(code, "proj/src/a.txt"), "utf8"), "ok\n");
      assert.equal(readFileSync(join(code, "proj/.git/config"), "utf8"), config);
      assert.ok(!existsSync(join(code, "proj/.git/hooks/post-checkout")));
      assert.equal(readFileSync(join(code, "proj/.claude/settings.json"), "utf8"), "{}\n");
      assert.equal(readFileSync(join(code, "other/sub/.envrc"), "utf8"), "export A=1\n");
    });
  },
);

/** A runner and a command runner for one turn in `code`. */
function turn(top: string, code: string) {
  const run = runner(top);
  return (command: string) => runShell(run, request(code, command));
}

const MOVED =
  /^Bash is refused for the rest of this turn: (.+) (was|were) moved, replaced or removed/;

bwrapTest(
  "sandbox: a project moved into node_modules by one command: Bash is refused for the rest of the turn",
  async () => {
    await withTempFolder("sandbox_nested_", async (top) => {
      const code = await projects(top);
      const config = readFileSync(join(code, "proj/.git/config"), "utf8");
      const shell = turn(top, code);
      const moved = await shell("mv proj node_modules");
      assert.equal(moved.exitCode, 0, moved.output);
      // The command that moved it is told at once.
      assert.ok(
        moved.protectedChanged.includes(join(code, "proj/.git")),
        moved.protectedChanged.join(),
      );
      const write = await shell("echo '[core] fsmonitor = evil' >> node_modules/.git/config");
      assert.equal(write.exitCode, null);
      assert.match(write.refused ?? "", MOVED);
      assert.match(write.refused ?? "", /proj\/\.claude, proj\/\.git/);
      assert.match(write.refused ?? "", /follow up on the job or start a new one$/);
      // Sticky: moving it back does not open the shell again.
      const back = await shell("mv node_modules proj");
      assert.match(back.refused ?? "", MOVED);
      assert.equal(readFileSync(join(code, "node_modules/.git/config"), "utf8"), config);
    });
  },
);

bwrapTest(
  "sandbox: renaming a folder above a project, or swapping it for a link, refuses Bash",
  async () => {
    for (
      const swap of [
        "mv code code2",
        "mv code code2 && ln -s code2 code",
        'mv code code2 && ln -s "$PWD/code2" code',
      ]
    ) {
      await withTempFolder("sandbox_nested_", async (top) => {
        await projects(join(top, "inner"));
        const cwd = join(top, "inner");
        const shell = turn(top, cwd);
        const moved = await shell(swap);
        assert.equal(moved.exitCode, 0, moved.output);
        const write = await shell(
          "echo x >> code2/proj/.git/config; echo x >> code/proj/.git/config",
        );
        assert.match(write.refused ?? "", MOVED, swap);
        assert.match(write.refused ?? "", /code\/proj\/\.git/, swap);
        assert.doesNotMatch(
          readFileSync(join(cwd, "code2/proj/.git/config"), "utf8"),
          /^x$/m,
          swap,
        );
      });
    }
  },
);

bwrapTest(
  "sandbox: a mounted .git cannot be renamed itself; the turn's shell keeps working",
  async () => {
    await withTempFolder("sandbox_nested_", async (top) => {
      const code = await projects(top);
      const shell = turn(top, code);
      const rename = await shell("mv proj/.git proj/.git2");
      assert.notEqual(rename.exitCode, 0, rename.output);
      assert.match(rename.output, /busy/i);
      const ok = await shell("echo ok > proj/src/a.txt");
      assert.equal(ok.refused, undefined);
      assert.equal(ok.exitCode, 0, ok.output);
    });
  },
);

bwrapTest(
  "sandbox: the user saving a nested host-run file on the host (write, then rename) does not stop Bash",
  async () => {
    await withTempFolder("sandbox_nested_", async (top) => {
      const code = await projects(top);
      await writeFile(join(code, "proj/CLAUDE.md"), "rules\n");
      const shell = turn(top, code);
      assert.equal((await shell("true")).exitCode, 0);
      await writeFile(join(code, "proj/CLAUDE.md.tmp"), "new rules\n");
      await rename(join(code, "proj/CLAUDE.md.tmp"), join(code, "proj/CLAUDE.md"));
      const next = await shell("echo x >> proj/CLAUDE.md");
      assert.equal(next.refused, undefined);
      assert.notEqual(next.exitCode, 0, "still read-only");
      assert.equal(readFileSync(join(code, "proj/CLAUDE.md"), "utf8"), "new rules\n");
    });
  },
);

bwrapTest(
  "scan: a project an earlier turn renamed to node_modules has its host-run paths found",
  async () => {
    await withTempFolder("sandbox_nested_", async (top) => {
      const code = await projects(top);
      await rename(join(code, "proj"), join(code, "node_modules"));
      await mkdir(join(code, "node_modules", "dep", ".git"), { recursive: true });
      const scan = await scanHostRun([code]);
      assert.equal(scan.incomplete, undefined);
      assert.ok(scan.paths.includes(join(code, "node_modules/.git")), scan.paths.join());
      assert.ok(scan.paths.includes(join(code, "node_modules/.claude")), scan.paths.join());
      // Still not descended into: dependencies' own folders are left out.
      assert.ok(!scan.paths.includes(join(code, "node_modules/dep/.git")), scan.paths.join());
      // And the next turn's sandbox keeps it read-only.
      const write = await turn(top, code)("echo x >> node_modules/.git/config");
      assert.notEqual(write.exitCode, 0, write.output);
    });
  },
);

bwrapTest(
  "sandbox: a tree deeper than the scan's bound is refused, nothing runs, and says why",
  async () => {
    await withTempFolder("sandbox_nested_", async (top) => {
      const code = await projects(top);
      const levels = Array.from({ length: SCAN_BOUNDS.maxDepth + 1 }, (_, i) => `d${i}`);
      await mkdir(join(code, ...levels), { recursive: true });
      const commands: unknown[] = [];
      const ctx = {
        cwd: code,
        roots: [code],
        signal: new AbortController().signal,
        commandRun: (run: unknown) => commands.push(run),
        fileChanged: () => {},
      } as unknown as ToolContext;
      const result = await bashTool(runner(top)).run({ command: "touch ran" }, ctx);
      assert.equal(result.isError, true);
      assert.match(
        result.text,
        /^Bash is refused for this turn: the job's directories are nested deeper than 16 folders .*narrower cwd/,
      );
      assert.ok(!existsSync(join(code, "ran")), "the command did not run");
      assert.equal(commands.length, 1);
      assert.match(String((commands[0] as { refused?: string }).refused), /narrower cwd/);
    });
  },
);
