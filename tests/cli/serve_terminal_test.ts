/**
 * The server started by hand in a terminal says what it is on stderr, how to register it and
 * how to quit; started by an MCP client (stdin a pipe) it prints nothing extra. The program
 * is the one the other suites start (`deno run src/main.ts`, or the installed npm command).
 */
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { join } from "node:path";
import { REPO, serverCommand, until } from "../support/harness.ts";
import { cliEnv } from "./jobs_support.ts";
import { PTY_UNSUPPORTED, startOnPty } from "./pty_support.ts";

const HINT = "this is an MCP server for Claude Code";

Deno.test({
  name: "serve on a terminal: one stderr line says what it is, how to register it, how to quit",
  ignore: PTY_UNSUPPORTED !== undefined,
  async fn() {
    const ctx = cliEnv();
    const { command, args } = serverCommand();
    const run = startOnPty([command, ...args], { tty: ["stdin"], env: ctx.env, cwd: ctx.cwd });
    try {
      await until(() => run.stderr().includes(HINT), 60_000, "the terminal hint");
      const line = run.stderr().split("\n").find((l) => l.includes(HINT))!;
      assert.match(line, /^ollama-delegate: this is an MCP server for Claude Code, waiting /);
      assert.match(line, /Quit with Ctrl-D or Ctrl-C/);
      // The registration names this very program, and that command starts it.
      const registered = /claude mcp add ollama --scope user -- (.+?) \(Claude Code/.exec(line);
      assert.ok(registered, line);
      const argv = registered[1]!.split(" ");
      if (command === "deno") {
        assert.deepEqual(argv, [
          "deno",
          "run",
          "-A",
          "--config",
          join(REPO, "deno.json"),
          join(REPO, "src", "main.ts"),
        ]);
      } else {
        assert.deepEqual(argv, [command], "the installed command, as the client would run it");
      }
      const version = spawnSync(argv[0]!, [...argv.slice(1), "--version"], {
        env: ctx.env,
        encoding: "utf8",
      });
      assert.match(version.stdout, /^ollama-delegate \d+\.\d+\.\d+/, version.stderr);
      // Ctrl-D at the start of a line is the end of input: the server stops, as the hint says.
      run.type("\x04");
      const end = await run.done;
      assert.equal(end.code, 0, end.stderr);
      assert.match(end.stderr, /stopping: client closed stdin/);
      assert.equal(end.stderr.split("\n").filter((l) => l.includes(HINT)).length, 1);
      // stdout is the MCP stream: nothing but JSON-RPC may appear there.
      assert.equal(end.stdout, "");
    } finally {
      run.child.kill();
      await run.done.catch(() => {});
    }
  },
});

Deno.test("serve with stdin a pipe (an MCP client) prints no terminal hint", async () => {
  const ctx = cliEnv();
  const { command, args } = serverCommand();
  const child = spawn(command, args, { env: ctx.env, cwd: ctx.cwd, stdio: "pipe" });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Uint8Array) => (stdout += new TextDecoder().decode(c)));
  child.stderr.on("data", (c: Uint8Array) => (stderr += new TextDecoder().decode(c)));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", resolve);
    // The client leaves at once: the server runs its start-up and exits.
    child.stdin.end();
  });
  assert.equal(code, 0, stderr);
  assert.match(stderr, /stopping: client closed stdin/);
  assert.ok(!stderr.includes(HINT), stderr);
  assert.equal(stdout, "");
});
