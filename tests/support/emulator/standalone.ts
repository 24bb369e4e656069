import assert from "node:assert/strict";

/**
 * Runs the emulator as its own process (`--port 0` plus `args`), hands its URL to `fn`, then
 * closes stdin and asserts that the process exits 0, as a CLI user would see it.
 */
export async function withStandaloneEmulator(
  args: string[],
  fn: (url: string) => Promise<void>,
): Promise<void> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      new URL("./emulator.ts", import.meta.url).pathname,
      "--port",
      "0",
      ...args,
    ],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = "";
  try {
    while (!out.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) break;
      out += value;
    }
    const { url } = JSON.parse(out.split("\n")[0]!) as { url: string };
    await fn(url);
  } finally {
    await child.stdin.close();
    while (!(await reader.read()).done) { /* drain */ }
    assert.equal((await child.status).code, 0);
  }
}
