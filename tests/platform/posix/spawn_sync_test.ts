/**
 * spawnSyncExact gives its child exactly the environment asked for, on the runtime under test.
 * Deno 2.9's own spawnSync hands the child this process's whole environment with `env` laid
 * over it; a variable planted here stands for a credential of the server's.
 */
import assert from "node:assert/strict";
import process from "node:process";
import { spawnSyncExact } from "../../../src/platform/posix/spawn_sync.ts";

const linux = process.platform === "linux";

Deno.test({
  name: "spawnSyncExact: the child sees only the variables given, not this process's",
  ignore: !linux,
  fn() {
    process.env.OD_PLANTED_TOKEN = "planted-secret";
    try {
      const run = spawnSyncExact("/usr/bin/env", [], {
        env: { A: "1", B: "two words", PATH: "/usr/bin:/bin" },
        encoding: "utf8",
      });
      assert.equal(run.status, 0);
      assert.deepEqual(String(run.stdout).trim().split("\n").sort(), [
        "A=1",
        "B=two words",
        "PATH=/usr/bin:/bin",
      ]);
      const none = spawnSyncExact("/usr/bin/env", [], { env: {}, encoding: "utf8" });
      assert.equal(String(none.stdout), "");
    } finally {
      delete process.env.OD_PLANTED_TOKEN;
    }
  },
});

Deno.test({
  name: "spawnSyncExact: a command found on the given PATH, a missing one ends 127, and a name " +
    "env would misread is refused",
  ignore: !linux,
  fn() {
    const found = spawnSyncExact("sh", ["-c", "echo ran $X"], {
      env: { PATH: "/usr/bin:/bin", X: "-i" },
      encoding: "utf8",
    });
    assert.equal(String(found.stdout), "ran -i\n");
    const missing = spawnSyncExact("/nonexistent/od-tool", [], { env: {}, stdio: "ignore" });
    assert.equal(missing.status, 127);
    assert.throws(() => spawnSyncExact("/tmp/a=b", [], { env: {} }), /through env/);
    assert.throws(() => spawnSyncExact("true", [], { env: { "A=B": "1" } }), /not a variable/);
  },
});
