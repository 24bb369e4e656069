import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { runShell } from "../../../../src/engines/native/sandbox/run_shell.ts";
import { sessionOfStat } from "../../../../src/platform/posix/session.ts";

const BWRAP = "/usr/bin/bwrap";

Deno.test("sessionOfStat reads field 6, also past a command name with spaces and parens", () => {
  assert.equal(sessionOfStat("812 (a b) c) S 1 812 805 0 -1 4194560 0"), 805);
  assert.equal(sessionOfStat("garbage"), null);
});

Deno.test({
  name: "runShell: stopping a sandbox while it sets up leaves nothing behind and never hangs",
  ignore: Deno.build.os !== "linux" || !existsSync(BWRAP),
  async fn() {
    const dir = await Deno.makeTempDir();
    const tag = `sleep 3${Math.floor(Math.random() * 1e6)}`;
    try {
      for (let i = 0; i < 15; i++) {
        const ac = new AbortController();
        const run = runShell({ kind: "bwrap", bwrap: BWRAP }, {
          command: `${tag}; :`,
          cwd: dir,
          writable: [dir],
          timeoutMs: 30_000,
          signal: ac.signal,
          keepChars: 1000,
        });
        setTimeout(() => ac.abort(), i % 5);
        const result = await run;
        assert.equal(result.aborted, true);
        assert.ok(result.durationMs < 5000, `run ${i} took ${result.durationMs} ms`);
      }
      const left: string[] = [];
      for (const entry of Deno.readDirSync("/proc")) {
        if (!/^\d+$/.test(entry.name)) continue;
        try {
          const cmd = Deno.readTextFileSync(`/proc/${entry.name}/cmdline`);
          if (cmd.includes(tag)) left.push(entry.name);
        } catch {
          // Gone.
        }
      }
      assert.deepEqual(left, []);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
