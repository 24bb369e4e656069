/**
 * The end-to-end fixture itself: a request to a server that died says how it died and quotes
 * the server's last stderr lines, and the scene stops everything it started.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { alive, until } from "./harness.ts";
import { startScene } from "./scene.ts";

/** An invalid setting the server reports on stderr and otherwise survives. */
const NOISY = { OLLAMA_MCP_JOB_TIMEOUT_MS: "0" };
const WARNING = /Invalid setting jobTimeoutMs in OLLAMA_MCP_JOB_TIMEOUT_MS/;

Deno.test("a call in flight when the server is killed names the signal and quotes stderr", async () => {
  await using scene = await startScene({ env: NOISY });
  await until(() => WARNING.test(scene.stderr()) || undefined, 30_000, "the setting warning");
  const pending = scene.call("delegate_start", {
    prompt: "@hang\nnever answers",
    engine: "native",
    model: "qwen3:8b",
    wait_seconds: 120,
  });
  // Swallowed here, asserted below: the rejection must not go unhandled meanwhile.
  pending.catch(() => {});
  await until(
    () => scene.emulator.nativeChatRequests().length > 0 || undefined,
    60_000,
    "the delegate's first model request",
  );
  Deno.kill(scene.pid, "SIGKILL");
  const error: Error = await pending.then(
    () => assert.fail("the call succeeded on a killed server"),
    (e) => e,
  );
  assert.match(error.message, /Connection closed/, "the SDK's own words are kept");
  assert.match(error.message, /the server was killed by signal SIGKILL/);
  assert.match(error.message, /last \d+ stderr lines:\n(.*\n)*.*Invalid setting jobTimeoutMs/);
  assert.equal(scene.server.exit(), "signal SIGKILL");
});

Deno.test("a call after the server exited names the exit code and its last words", async () => {
  await using scene = await startScene({ emulator: false });
  Deno.kill(scene.pid, "SIGTERM");
  await until(() => scene.server.exit(), 30_000, "the server to exit");
  await assert.rejects(
    () => scene.call("ollama_models"),
    (e: Error) => {
      assert.match(
        e.message,
        /^(Not connected|MCP error -32000: Connection closed): the server exited with code 0; /,
      );
      assert.match(e.message, /\n {2}\| ollama-delegate: stopping: server received SIGTERM\n/);
      return true;
    },
  );
});

Deno.test("a request that fails on a live server is left as it was", async () => {
  await using scene = await startScene({ emulator: false });
  await assert.rejects(
    () => scene.client.request({ method: "no/such/method" } as never, {} as never),
    (e: Error) => {
      assert.doesNotMatch(e.message, /the server (exited|was killed)/);
      return true;
    },
  );
  assert.equal(scene.server.exit(), undefined);
});

Deno.test("disposing a scene stops its servers and its emulator", async () => {
  let pids: number[] = [];
  let url = "";
  {
    await using scene = await startScene({ server: false });
    assert.ok(existsSync(scene.cwd), "the working directory exists before any server");
    const first = await scene.startServer();
    const second = await scene.startServer();
    assert.equal(scene.server, first);
    assert.equal(second.stateDir, first.stateDir, "later servers share the state dir");
    pids = [first.pid, second.pid];
    url = scene.emulator.url;
  }
  for (const pid of pids) {
    await until(() => !alive(pid) || undefined, 10_000, `server ${pid} to stop`);
  }
  await assert.rejects(() => fetch(`${url}/api/version`));
});
