/**
 * The swap race against the file tools: a real process exchanges a directory `d` in cwd with a
 * symlink to a directory outside (standing in for ~/.ssh) as fast as the kernel lets it
 * (renameat2 RENAME_EXCHANGE, as a sandboxed command can), while Read, Write, Edit, Grep and
 * Glob are called on paths below `d`. Checking a path and opening it later by name lets some
 * of those calls land outside; opening beneath a held directory must never.
 */
import assert from "node:assert/strict";
import { mkdir, readdir, readFile, stat, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { editTool } from "../../../../src/engines/native/tools/edit.ts";
import { globTool } from "../../../../src/engines/native/tools/glob.ts";
import { grepTool } from "../../../../src/engines/native/tools/grep.ts";
import { readTool } from "../../../../src/engines/native/tools/read.ts";
import { writeTool } from "../../../../src/engines/native/tools/write.ts";
import { fixture } from "../tool_fixture.ts";

/**
 * Exchanges two paths in a loop until a stop file appears; prints how many swaps it has made
 * after every 2,000 tries, and the total last.
 */
const ATTACKER = `
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
a, b, stop = sys.argv[1].encode(), sys.argv[2].encode(), sys.argv[3]
n = 0
print('ready', flush=True)
while True:
    for _ in range(2000):
        if libc.renameat2(-100, a, -100, b, 2) == 0:
            n += 1
    print(n, flush=True)
    if os.path.exists(stop):
        break
`;

const SECRET = "BEGIN-OUTSIDE-SECRET-7f3a";
/** Finds the secret without containing it: "No matches for /.../" repeats the pattern. */
const SECRET_PATTERN = "BEGIN-OUTSIDE-SECRET-7f3[a]";
const OUTSIDE_KEYS = "ssh-ed25519 AAAA-outside-original\n";
/** File names that are not secret-looking, so the race is tested, not the secret-file rule. */
const READ_NAME = "key.txt";
const WRITE_NAME = "authorized.txt";
const PAIRS = 40;
/**
 * The swaps the race must see for its result to mean something. On a loaded machine the
 * attacker made 8,000 in the time of PAIRS rounds (CI), so the rounds go on until it has made
 * this many, for at most RACE_MS.
 */
const MIN_SWAPS = 10_000;
const RACE_MS = 60_000;

Deno.test({
  name: "swap race: Read, Write, Edit, Grep and Glob never leave cwd while d is swapped",
  ignore: Deno.build.os !== "linux",
  async fn() {
    const f = await fixture();
    const stop = join(f.top, "stop");
    const ssh = join(f.outside, "ssh");
    await mkdir(ssh);
    await writeFile(join(ssh, READ_NAME), `${SECRET}\n`);
    await writeFile(join(ssh, WRITE_NAME), OUTSIDE_KEYS);
    await writeFile(join(ssh, "only-outside.txt"), "x\n");
    const before = await stat(join(ssh, WRITE_NAME));
    await mkdir(join(f.cwd, "d"));
    await writeFile(join(f.cwd, "d", READ_NAME), "inside decoy\n");
    await writeFile(join(f.cwd, "d", WRITE_NAME), "inside\n");
    await symlink(ssh, join(f.cwd, "l"));

    const attacker = new Deno.Command("python3", {
      args: ["-c", ATTACKER, join(f.cwd, "d"), join(f.cwd, "l"), stop],
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    // Python takes a while to start on a loaded machine: the tools run once it swaps.
    const output = attacker.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let printed = "";
    while (!printed.includes("ready\n")) {
      const chunk = await output.read();
      if (chunk.done) throw new Error(`the attacker did not start: ${printed}`);
      printed += chunk.value;
    }
    /** The attacker's latest count of swaps. */
    const swapsSoFar = () => Number(printed.trimEnd().split("\n").at(-1)) || 0;
    const reading = (async () => {
      for (let chunk = await output.read(); !chunk.done; chunk = await output.read()) {
        printed += chunk.value;
      }
    })();
    const results: string[] = [];
    let readsOk = 0;
    let writesOk = 0;
    const deadline = performance.now() + RACE_MS;
    try {
      for (
        let i = 0;
        i < PAIRS || (swapsSoFar() < MIN_SWAPS && performance.now() < deadline);
        i++
      ) {
        const read = await readTool.run({ file_path: `d/${READ_NAME}` }, f.ctx);
        results.push(read.text);
        if (read.text.includes("inside decoy")) readsOk++;
        const write = await writeTool.run(
          { file_path: `d/${WRITE_NAME}`, content: `PWNED ${i} ORIGINAL\n` },
          f.ctx,
        );
        results.push(write.text);
        if (!write.isError) writesOk++;
        results.push(
          (await editTool.run(
            { file_path: `d/${WRITE_NAME}`, old_string: "ORIGINAL", new_string: "EDITED" },
            f.ctx,
          )).text,
        );
        results.push(
          (await grepTool.run(
            { pattern: SECRET_PATTERN, path: "d", output_mode: "content" },
            f.ctx,
          )).text,
        );
        results.push(
          (await grepTool.run({ pattern: SECRET_PATTERN, output_mode: "content" }, f.ctx)).text,
        );
        results.push((await globTool.run({ pattern: "d/*" }, f.ctx)).text);
      }
    } finally {
      await writeFile(stop, "");
      await reading;
      await attacker.status;
      const swaps = swapsSoFar();
      assert.ok(swaps >= MIN_SWAPS, `the attacker swapped only ${swaps} times`);
    }
    try {
      for (const text of results) {
        assert.ok(!text.includes(SECRET), `the outside secret leaked: ${text}`);
        assert.ok(!text.includes("only-outside"), `an outside name leaked: ${text}`);
      }
      assert.equal(await readFile(join(ssh, WRITE_NAME), "utf8"), OUTSIDE_KEYS);
      assert.equal((await stat(join(ssh, WRITE_NAME))).mtimeMs, before.mtimeMs);
      assert.deepEqual(
        (await readdir(ssh)).sort(),
        [READ_NAME, WRITE_NAME, "only-outside.txt"].sort(),
      );
      // The tools kept working between swaps: the race was exercised, not merely refused.
      assert.ok(readsOk > 0 && writesOk > 0, `reads ${readsOk}, writes ${writesOk}`);
    } finally {
      await f.cleanup();
    }
  },
});
