/**
 * Run under Node by tests/engines/tree/node_journal_test.ts (bundled as the npm package is).
 *
 *   node <bundle> turns <root>
 *     two turns' changes in `root`, made by a Python program as a delegate's command would make
 *     them, and what each turn reported: `{ helper, turns: [{ how, files, burst, partial }] }`,
 *     files relative to the root except the burst's, which are counted
 *   node <bundle> failures <root>
 *     turns whose helper cannot start, or is killed during a turn and before the next:
 *     `{ broken: { init, ms, how, files }, killed: { how, files }, next: { how, files } }`
 * Each prints one JSON line.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import process from "node:process";
import { beginTurnChanges } from "../../src/engines/tree/turn_changes.ts";
import type { LinuxFs } from "../../src/platform/posix/inotify.ts";
import {
  helperFs,
  helperFsWith,
  PYTHON_CANDIDATES,
} from "../../src/platform/posix/inotify_helper.ts";

/** What the first turn's command does: each is a change the journal must see by its event. */
const QUIET = [
  "import mmap, os",
  // A write through a shared memory map raises no IN_MODIFY; only IN_CLOSE_WRITE shows it.
  "fd = os.open('mapped.bin', os.O_RDWR); m = mmap.mmap(fd, 4); os.close(fd)",
  "m[0:4] = b'ZZZZ'; m.flush(); m.close()",
  "os.makedirs('lib/.ssh'); open('lib/.ssh/payload.js', 'w').write('x')",
  "open(b'caf\\xe9.txt', 'w').write('x')",
  "os.mkdir('stage'); open('stage/a.js', 'w').write('x'); os.rename('stage', 'final')",
].join("\n");

/** The second's: more files at once than the kernel queues events for (the overflow). */
const BURST = [
  "import os",
  "n = int(open('/proc/sys/fs/inotify/max_queued_events').read()) + 1",
  "os.mkdir('burst')",
  "[open('burst/f%d' % i, 'w').close() for i in range(n)]",
].join("\n");

const [mode, root] = process.argv.slice(2);
if (!root) throw new Error("usage: node <bundle> turns|failures <root>");

/** One turn in `dir` in which `act` makes the changes; what it reported. */
async function turn(act: () => void, fs?: LinuxFs, dir = root!) {
  const changes = await beginTurnChanges([dir], { walk: true, ...(fs ? { fs } : {}) });
  act();
  const report = await changes.end();
  changes.release();
  return {
    how: changes.how,
    files: report.files.map((f) => relative(dir, f)),
    partial: report.partial,
  };
}

// Synchronous, as a sandboxed command is to the events: none is read while it runs.
const python = (script: string) => () => execFileSync("python3", ["-c", script], { cwd: root });

if (mode === "turns") {
  const quiet = await turn(python(QUIET));
  const burst = await turn(python(BURST));
  // A burst's thousands of names are counted, not printed.
  const counted = {
    ...burst,
    files: burst.files.filter((f) => !f.startsWith("burst/f")),
    burst: burst.files.filter((f) => f.startsWith("burst/f")).length,
  };
  console.log(JSON.stringify({ helper: helperFs() !== undefined, turns: [quiet, counted] }));
} else {
  // Each in a folder of its own: a root whose journal could not be set up is not tried again
  // for a while.
  const [first, second] = ["broken", "killed"].map((name) => join(root, name));
  for (const dir of [first!, second!]) mkdirSync(dir);
  const broken = helperFsWith("/bin/false");
  const t0 = performance.now();
  const init = broken.inotifyInit();
  const ms = performance.now() - t0;
  const walked = await turn(() => writeFileSync(join(first!, "a.txt"), "a"), broken, first);
  const fs = helperFsWith(PYTHON_CANDIDATES.find((p) => existsSync(p))!);
  const killed = await turn(
    () => {
      writeFileSync(join(second!, "b.txt"), "b");
      execFileSync("kill", ["-9", String(fs.pid())]);
    },
    fs,
    second,
  );
  const next = await turn(() => writeFileSync(join(second!, "c.txt"), "c"), fs, second);
  console.log(JSON.stringify({ broken: { init, ms, ...walked }, killed, next }));
}
process.exit(0);
