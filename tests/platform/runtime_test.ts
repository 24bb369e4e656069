/** platform/runtime.ts's isTty, in a real process whose streams are a pseudo-terminal or pipes. */
import assert from "node:assert/strict";
import { join } from "node:path";
import process from "node:process";
import { REPO } from "../support/harness.ts";
import { PTY_UNSUPPORTED, startOnPty, type TtyStream } from "../cli/pty_support.ts";

const PROBE = join(REPO, "tests", "platform", "support", "tty_probe.ts");

async function probe(tty: TtyStream[]): Promise<Record<string, boolean>> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? "/usr/bin:/bin" };
  for (const name of ["HOME", "DENO_DIR"]) if (process.env[name]) env[name] = process.env[name]!;
  const run = startOnPty(["deno", "run", "--no-prompt", "-A", PROBE], { tty, env, cwd: REPO });
  const end = await run.done;
  assert.equal(end.code, 0, end.stderr + end.output);
  return JSON.parse(end.stderr.trim().split("\n").at(-1)!);
}

Deno.test({
  name: "isTty: true only for the streams on a terminal",
  ignore: PTY_UNSUPPORTED !== undefined,
  async fn() {
    assert.deepEqual(await probe(["stdin"]), { stdin: true, stdout: false, stderr: false });
    assert.deepEqual(await probe(["stdout"]), { stdin: false, stdout: true, stderr: false });
    assert.deepEqual(await probe([]), { stdin: false, stdout: false, stderr: false });
  },
});
