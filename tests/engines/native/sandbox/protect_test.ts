/**
 * What the real bubblewrap sandbox keeps a command from doing to the host: planting files the
 * host runs later, reading credential stores or root-only system files, and exhausting the
 * machine. Each test runs the attack for real and looks at the host afterwards.
 */
import { git } from "../../../support/git_repo.ts";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import type { BwrapRunner } from "../../../../src/engines/native/sandbox/shell_runner.ts";
import { type CommandRequest, runShell } from "../../../../src/engines/native/sandbox/run_shell.ts";
import { bashTool } from "../../../../src/engines/native/tools/bash.ts";
import { BWRAP, bwrapTest, hasBwrap, isRoot, withProject } from "./support.ts";
import { cgroupSupport } from "../../../../src/platform/posix/limit_cgroup.ts";

function runner(top: string, extra: Partial<BwrapRunner> = {}): BwrapRunner {
  return { kind: "bwrap", bwrap: BWRAP, runDir: join(top, "run"), ...extra };
}

function request(cwd: string, command: string, extra: Partial<CommandRequest> = {}) {
  return {
    command,
    cwd,
    writable: [cwd],
    timeoutMs: 30_000,
    signal: new AbortController().signal,
    keepChars: 20_000,
    ...extra,
  };
}

bwrapTest("sandbox: .git is read-only inside; git's read commands still work", async () => {
  await withProject("sandbox_protect_", async (cwd, top) => {
    git(cwd, "init", "-q", ".");
    await writeFile(join(cwd, "a.txt"), "a\n");
    git(cwd, "add", "a.txt");
    git(cwd, "commit", "-qm", "first");
    const configBefore = readFileSync(join(cwd, ".git", "config"), "utf8");
    const marker = join(top, "fsmonitor-ran");
    const result = await runShell(
      runner(top),
      request(
        cwd,
        `git log --oneline; echo b >> a.txt; git status --short; ` +
          `git config core.fsmonitor "touch ${marker}"; echo "config=$?"; ` +
          `printf '#!/bin/sh\\ntouch ${marker}\\n' > .git/hooks/pre-commit; echo "hook=$?"; ` +
          `git add a.txt; echo "add=$?"`,
      ),
    );
    assert.match(result.output, /first/, "git log works");
    assert.match(result.output, /^ M a\.txt$/m, "git status works and lists nothing else");
    assert.doesNotMatch(result.output, /\?\?/, "no placeholder shows as untracked");
    assert.match(result.output, /config=(?!0)\d+/);
    assert.match(result.output, /hook=(?!0)\d+/);
    assert.match(result.output, /add=(?!0)\d+/);
    assert.equal(readFileSync(join(cwd, ".git", "config"), "utf8"), configBefore);
    assert.ok(!existsSync(join(cwd, ".git", "hooks", "pre-commit")));
    // The host's next git commands run nothing the delegate planted.
    git(cwd, "status");
    git(cwd, "commit", "-qam", "second");
    assert.ok(!existsSync(marker));
  });
});

bwrapTest(
  "sandbox: the host-run folders tools watch live cannot be created; the other host-run paths a " +
    "command creates are moved out when it ends; no trace is left",
  async () => {
    await withProject("sandbox_protect_", async (cwd, top) => {
      // Held by a placeholder: the command fails at once.
      const held = [
        "mkdir -p .claude && echo '{}' > .claude/settings.json",
        "mkdir -p .vscode && echo '{}' > .vscode/tasks.json",
        "mkdir -p .git/hooks && echo x > .git/hooks/pre-commit",
        "rm -rf .claude && mkdir .claude",
      ];
      // Not held: created, then moved out of the project when the command ends.
      const moved = [
        ["echo 'touch /tmp/x' > .envrc", ".envrc"],
        ["echo '{}' > .mcp.json", ".mcp.json"],
        ["echo 'obey me' > CLAUDE.md", "CLAUDE.md"],
        ["echo '{}' > ollama-mcp.config.json", "ollama-mcp.config.json"],
        ["mkdir -p .husky && echo x > .husky/pre-commit", ".husky"],
      ];
      const all = [...held, ...moved.map(([a]) => a!)];
      const result = await runShell(
        runner(top),
        request(cwd, all.map((a, i) => `(${a}) 2>/dev/null; echo "try${i}=$?"`).join("; ")),
      );
      held.forEach((attempt, i) => {
        assert.match(result.output, new RegExp(`try${i}=(?!0)\\d+`), attempt);
      });
      // Nothing is left in the project: neither mount points nor what the command made.
      assert.deepEqual(readdirSync(cwd), []);
      assert.deepEqual(result.protectedChanged, []);
      const gone = (result.quarantined ?? []).map((q) => basename(q.path)).sort();
      assert.deepEqual(gone, moved.map(([, name]) => name!).sort());
      // Kept, not deleted: the content is where the result says.
      const envrc = result.quarantined!.find((q) => q.path.endsWith(".envrc"))!;
      assert.equal(readFileSync(envrc.movedTo!, "utf8"), "touch /tmp/x\n");
    });
  },
);

bwrapTest(
  "sandbox: a placeholder stays while another command in the same directory still uses it",
  async () => {
    await withProject("sandbox_protect_", async (cwd, top) => {
      const long = runShell(
        runner(top),
        request(cwd, 'sleep 2; mkdir .claude/x; echo "late=$?"'),
      );
      await new Promise((r) => setTimeout(r, 500));
      const short = await runShell(runner(top), request(cwd, "true"));
      assert.equal(short.exitCode, 0);
      const late = await long;
      assert.match(late.output, /late=(?!0)\d+/, late.output);
      assert.ok(!existsSync(join(cwd, ".claude")));
    });
  },
);

bwrapTest(
  "sandbox: a command started on another's placeholders keeps them read-only after that one ends",
  async () => {
    await withProject("sandbox_protect_", async (cwd, top) => {
      const first = runShell(runner(top), request(cwd, "sleep 2"));
      const end = Date.now() + 10_000;
      while (!existsSync(join(cwd, ".claude")) && Date.now() < end) {
        await new Promise((r) => setTimeout(r, 20));
      }
      // Its mount points exist now, empty: to this command they look like the user's files.
      const second = runShell(
        runner(top),
        request(cwd, 'sleep 4; echo planted > .claude/settings.json; echo "late=$?"'),
      );
      assert.equal((await first).exitCode, 0);
      const late = await second;
      assert.match(late.output, /late=(?!0)\d+/, late.output);
      assert.deepEqual(readdirSync(cwd), [], "nothing planted, no placeholder left");
    });
  },
);

bwrapTest(
  "sandbox: credential stores in the project are hidden, also nested ones found by the walk",
  async () => {
    await withProject("sandbox_protect_", async (cwd, top) => {
      await mkdir(join(cwd, ".ssh"));
      await writeFile(join(cwd, ".ssh", "id_rsa"), "TOP-SECRET-KEY");
      await mkdir(join(cwd, "backup", ".aws"), { recursive: true });
      await writeFile(join(cwd, "backup", ".aws", "credentials"), "NESTED-SECRET");
      await mkdir(join(cwd, "vendor", "lib", ".git"), { recursive: true });
      await writeFile(join(cwd, "vendor", "lib", ".git", "config"), "[core]\n");
      const result = await runShell(
        runner(top, {
          nested: {
            readOnly: [join(cwd, "vendor", "lib", ".git")],
            hidden: [join(cwd, "backup", ".aws")],
          },
        }),
        request(
          cwd,
          "cat .ssh/id_rsa backup/.aws/credentials; echo x > .ssh/planted; " +
            "echo '[core] fsmonitor=evil' >> vendor/lib/.git/config; echo \"nested=$?\"",
        ),
      );
      assert.doesNotMatch(result.output, /SECRET/);
      assert.match(result.output, /nested=(?!0)\d+/);
      assert.equal(readFileSync(join(cwd, "vendor", "lib", ".git", "config"), "utf8"), "[core]\n");
      assert.deepEqual(readdirSync(join(cwd, ".ssh")), ["id_rsa"]);
    });
  },
);

bwrapTest(
  "sandbox as root: the command runs as nobody and root-only system files are hidden",
  async () => {
    await withProject("sandbox_protect_", async (cwd, top) => {
      const result = await runShell(
        runner(top),
        request(cwd, 'id -u; cat /etc/shadow; echo "shadow=$?"; echo ok > mine.txt; cat mine.txt'),
      );
      assert.match(result.output, /^65534$/m);
      assert.match(result.output, /shadow=(?!0)\d+/);
      assert.doesNotMatch(result.output, /^root:/m);
      // The project stays writable, and what it writes belongs to the server's user.
      assert.match(result.output, /^ok$/m);
      assert.equal(statSync(join(cwd, "mine.txt")).uid, 0);
    });
  },
  !isRoot || !existsSync("/etc/shadow"),
);

const limits = { maxProcesses: 40, maxMemoryMb: 256, maxFileMb: 1, tmpMb: 4 };

bwrapTest("sandbox limits: processes, memory, file size and /tmp are capped", async () => {
  await withProject("sandbox_protect_", async (cwd, top) => {
    const result = await runShell(
      runner(top, { limits }),
      request(
        cwd,
        `perl -e '$x = "a" x (512*1024*1024); print "allocated\\n"' 2>&1 | tail -1; ` +
          `perl -e '$x = "a" x (64*1024*1024); print "small-ok\\n"'; ` +
          `(head -c 2000000 /dev/zero > big.bin) 2>/dev/null; echo "big=$?"; ` +
          `(head -c 900000 /dev/zero > /tmp/a; head -c 900000 /dev/zero > /tmp/b; ` +
          `head -c 900000 /dev/zero > /tmp/c; head -c 900000 /dev/zero > /tmp/d; ` +
          `head -c 900000 /dev/zero > /tmp/e) 2>/dev/null; echo "tmp=$?"; ` +
          // Last: the sleeps hold their slots (long enough for a slow machine; they end with the
          // sandbox). Each fork runs in a subshell so that a failed
          // fork does not end the script (dash exits on one).
          `n=0; for i in $(seq 100); do (sleep 30 >/dev/null &) 2>/dev/null && n=$((n+1)); done; ` +
          `echo "started=$n"`,
      ),
    );
    const started = Number(/started=(\d+)/.exec(result.output)?.[1]);
    assert.ok(started < 40, `at most 40 processes: ${result.output}`);
    assert.doesNotMatch(result.output, /^allocated$/m);
    assert.match(result.output, /^small-ok$/m);
    assert.match(result.output, /big=(?!0)\d+/);
    assert.ok(statSync(join(cwd, "big.bin")).size <= 1024 * 1024);
    assert.match(result.output, /tmp=(?!0)\d+/, "a 4 MiB /tmp holds no 4.5 MB");
  });
});

bwrapTest(
  "Bash tool: a file over the size limit is explained, not just a signal name",
  async () => {
    await withProject("sandbox_protect_", async (cwd, top) => {
      const tool = bashTool(runner(top, { limits }));
      const reply = await tool.run({ command: "head -c 2000000 /dev/zero > big.bin" }, {
        cwd,
        roots: [cwd],
        signal: new AbortController().signal,
        fileChanged() {},
        commandRun() {},
      });
      assert.equal(reply.isError, true);
      assert.match(reply.text, /SIGXFSZ: a file reached the sandbox's 1 MiB size limit/);
    });
  },
);

const pidsCgroup = hasBwrap && (await cgroupSupport()).pids;

bwrapTest(
  "Bash tool: forks refused at the process limit are said, to the model and in the job's warnings",
  async () => {
    await withProject("sandbox_protect_", async (cwd, top) => {
      const tool = bashTool(runner(top, { limits }));
      const warnings: string[] = [];
      const ctx = {
        cwd,
        roots: [cwd],
        signal: new AbortController().signal,
        fileChanged() {},
        commandRun() {},
        warning: (text: string) => warnings.push(text),
      };
      // bash retries a refused fork after 1, 2, 4 and 8 s: the sleeps last long enough to fill
      // the limit (40) on a loaded machine and end before the second retry (at 3 s).
      const forks = "for i in $(seq 100); do (sleep 2.5 >/dev/null &) 2>/dev/null; done; echo done";
      const reply = await tool.run({ command: forks }, ctx);
      assert.match(reply.text, /^done$/m);
      assert.match(
        reply.text,
        // Once when the machine is so loaded that the forks came slowly (two suites at once).
        /\[the command reached the sandbox's process limit of 40 \(sandboxMaxProcesses\) (once|\d+ times), so some of its forks failed/,
      );
      assert.deepEqual(warnings, [
        "processes: a command reached the sandbox's process limit of 40 (sandboxMaxProcesses), " +
        "so some of its forks failed; ollama-delegate config --sandbox-max-processes <n> raises it",
      ]);
      // A command within the limit says nothing of it.
      const calm = await tool.run({ command: "sleep 0.1 & sleep 0.1 & wait; echo calm" }, ctx);
      assert.doesNotMatch(calm.text, /process limit/);
      assert.equal(warnings.length, 1);
    });
  },
  !pidsCgroup,
);

bwrapTest(
  "sandbox: the server's own directories inside a project are hidden, and cannot be made when missing",
  async () => {
    await withProject("sandbox_protect_", async (cwd, top) => {
      const state = join(cwd, "state");
      await mkdir(join(state, "job"), { recursive: true });
      await writeFile(join(state, "job", "prompt.txt"), "PRIVATE-PROMPT");
      const missing = join(cwd, ".cfg", "ollama-mcp", "claude");
      const result = await runShell(
        runner(top),
        request(
          cwd,
          "cat state/job/prompt.txt; echo x > state/planted; " +
            "mkdir -p .cfg/ollama-mcp/claude && echo '{}' > .cfg/ollama-mcp/claude/settings.json; " +
            'echo "made=$?"',
          { hide: [state, missing] },
        ),
      );
      assert.doesNotMatch(result.output, /PRIVATE-PROMPT/);
      assert.match(result.output, /made=(?!0)\d+/);
      assert.deepEqual(readdirSync(state), ["job"]);
      // No empty parent is left behind on the host.
      assert.deepEqual(readdirSync(cwd), ["state"]);
    });
  },
);
