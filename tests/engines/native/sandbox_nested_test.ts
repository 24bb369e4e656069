/**
 * The real bubblewrap sandbox with a working directory that holds several projects: the
 * host-run paths of the projects below it (`proj/.git`, `proj/.claude`, `sub/.envrc`) are as
 * read-only inside as the top-level ones, also after the delegate moves a project, and a tree
 * too large to scan gets no sandbox at all rather than one with holes.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, realpath, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import process from "node:process";
import { type BwrapRunner, runShell } from "../../../src/engines/native/sandbox.ts";
import { SCAN_BOUNDS } from "../../../src/engines/host_run_scan.ts";
import { bashTool } from "../../../src/engines/native/tools/bash.ts";
import type { ToolContext } from "../../../src/engines/native/tools/types.ts";

const BWRAP = "/usr/bin/bwrap";
const hasBwrap = existsSync(BWRAP) && process.platform === "linux";

function bwrapTest(name: string, fn: () => Promise<void>): void {
  Deno.test({ name, ignore: !hasBwrap, fn });
}

async function withFolder(fn: (top: string) => Promise<void>): Promise<void> {
  const top = await realpath(await Deno.makeTempDir({ prefix: "sandbox_nested_" }));
  try {
    await fn(top);
  } finally {
    await rm(top, { recursive: true, force: true });
  }
}

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
    await withFolder(async (top) => {
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

bwrapTest("sandbox: a project moved by one command is found again in the next", async () => {
  await withFolder(async (top) => {
    const code = await projects(top);
    const run = runner(top);
    const moved = await runShell(run, request(code, "mv proj proj2"));
    assert.equal(moved.exitCode, 0, moved.output);
    const write = await runShell(run, request(code, "echo x > proj2/.git/config"));
    assert.notEqual(write.exitCode, 0, write.output);
    assert.doesNotMatch(readFileSync(join(code, "proj2/.git/config"), "utf8"), /^x$/m);
    // Swapped for a new, empty project of the same name: the moved one stays protected.
    await runShell(run, request(code, "mv proj2 proj3 && mkdir -p proj2/.git"));
    const again = await runShell(run, request(code, "echo x > proj3/.git/config"));
    assert.notEqual(again.exitCode, 0, again.output);
  });
});

bwrapTest(
  "sandbox: a tree deeper than the scan's bound is refused, nothing runs, and says why",
  async () => {
    await withFolder(async (top) => {
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
