import assert from "node:assert/strict";
import { join } from "node:path";
import process from "node:process";
import { allowlistedEnv } from "../../../src/platform/env.ts";
import { currentEnv } from "../../../src/platform/runtime.ts";
import { spawnProcess } from "../../../src/platform/spawn.ts";
import { killTree, procSourceFor } from "../../../src/platform/tree_kill.ts";
import { cmdExePath, system32, windowsEnvValue } from "../../../src/platform/windows/system_dir.ts";
import { taskkillCommand, taskkillReport } from "../../../src/platform/windows/taskkill.ts";

const windowsOnly = process.platform !== "win32";

Deno.test("windowsEnvValue: names match case-insensitively; the first spelling in sort order wins", () => {
  const env = { systemroot: "C:\\Lower", SystemRoot: "C:\\Mixed", Path: "C:\\bin" };
  // "SystemRoot" sorts before "systemroot" (upper-case letters first), as in Node and execa.
  assert.equal(windowsEnvValue(env, "SYSTEMROOT"), "C:\\Mixed");
  assert.equal(windowsEnvValue(env, "path"), "C:\\bin");
  assert.equal(windowsEnvValue(env, "PATHEXT"), undefined);
});

Deno.test("system32 and cmdExePath: from SystemRoot in any spelling, else windir", () => {
  assert.equal(system32({ SYSTEMROOT: "D:\\Win" }), "D:\\Win\\System32");
  assert.equal(system32({ WinDir: "E:\\W" }), "E:\\W\\System32");
  assert.equal(system32({ SystemRoot: "C:\\Windows", windir: "E:\\W" }), "C:\\Windows\\System32");
  assert.equal(cmdExePath({ SystemRoot: "C:\\Windows" }), "C:\\Windows\\System32\\cmd.exe");
  assert.throws(() => system32({ PATH: "C:\\bin" }), /SystemRoot is not set/);
  assert.throws(() => system32({ SystemRoot: "Windows" }), /"Windows", not an absolute path/);
});

Deno.test("taskkillCommand: absolute taskkill.exe from System32, /pid N /T /F", () => {
  assert.deepEqual(taskkillCommand(4242, { systemRoot: "C:\\WINDOWS" }), {
    command: "C:\\WINDOWS\\System32\\taskkill.exe",
    args: ["/pid", "4242", "/T", "/F"],
  });
  for (const pid of [0, 4, -1, 1.5, Number.NaN]) {
    assert.throws(() => taskkillCommand(pid, { SystemRoot: "C:\\Windows" }), RangeError);
  }
  assert.throws(() => taskkillCommand(4242, {}), /SystemRoot is not set/);
});

Deno.test("taskkillReport: exit 0 killed the tree, 128 means already gone, else a survivor", () => {
  assert.deepEqual(taskkillReport(9, { code: 0, signal: null }, 12), {
    pids: [9],
    terminated: [],
    killed: [9],
    survivors: [],
    elapsedMs: 12,
  });
  assert.deepEqual(taskkillReport(9, { code: 128, signal: null }, 3).pids, []);
  assert.deepEqual(taskkillReport(9, { code: 1, signal: null }, 3).survivors, [9]);
});

Deno.test("procSourceFor: Windows has no process-table reader and says so", () => {
  assert.throws(() => procSourceFor("win32", "list process tree"), {
    message:
      "Cannot list process tree: there is no process table reader for Windows (killTree uses taskkill)",
  });
});

// Real Windows only (CI's windows runner): the same code paths against the real cmd.exe.

async function withShim(fn: (dir: string, shim: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "win shim & (x) " });
  try {
    const echo = join(dir, "echo_args.ts");
    await Deno.writeTextFile(echo, "console.log(JSON.stringify(Deno.args));\n");
    // What npm's cmd-shim does: forward every argument with %*.
    const shim = join(dir, "echo.cmd");
    await Deno.writeTextFile(shim, `@"${Deno.execPath()}" run --quiet "${echo}" %*\r\n`);
    await fn(dir, shim);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test({
  name: "Windows: arguments reach a program behind a .cmd shim byte for byte",
  ignore: windowsOnly,
  fn: () =>
    withShim(async (dir, shim) => {
      const args = ['x" & calc.exe & "', "a&b", "%PATH%", '\\\\"', "", "a b\\", "!x!", "^", "é😀"];
      const env = allowlistedEnv(currentEnv(), true);
      const child = await spawnProcess({ command: shim, args, cwd: dir, env });
      const [status, out, err] = await Promise.all([
        child.status,
        new Response(child.stdout).text(),
        new Response(child.stderr).text(),
      ]);
      assert.equal(status.code, 0, err);
      assert.deepEqual(JSON.parse(out), args);
    }),
});

Deno.test({
  name: "Windows: killTree ends a batch file and the program it started, via taskkill",
  ignore: windowsOnly,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "win_kill_" });
    try {
      const shim = join(dir, "wait.cmd");
      await Deno.writeTextFile(shim, "@ping -n 60 127.0.0.1 >NUL\r\n");
      const env = allowlistedEnv(currentEnv(), true);
      const child = await spawnProcess({ command: shim, args: [], cwd: dir, env });
      const drained = Promise.all([
        new Response(child.stdout).text(),
        new Response(child.stderr).text(),
      ]);
      const report = await killTree(child.pid, { graceMs: 3000 });
      assert.deepEqual(report.killed, [child.pid]);
      const status = await child.status;
      assert.notEqual(status.code, 0);
      await drained; // ping held the pipes; they close only once it is gone too
      assert.deepEqual((await killTree(child.pid, { graceMs: 0 })).pids, []);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
