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
 *   node <bundle> race <base> <runs>
 *     on a file system that gives no entry types (ext2 without `filetype`), mounted at `base`:
 *     a folder renamed while a link in it is made and removed in a loop, then written in, and
 *     a folder walked while that goes on; what each run's turns missed:
 *     `{ runs, missed: [{ run, turn, what }] }`
 * Each prints one JSON line.
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
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

/**
 * The start of a Python program that makes and removes the link `zz` in `dir` in a thread of
 * its own, until the rest of the program says `stop = True; th.join()`.
 */
const CHURN = (dir: string) => `
import os, threading, time
dfd = os.open(${JSON.stringify(dir)}, os.O_RDONLY)
stop = False
def churn():
    while not stop:
        try:
            os.symlink('x', 'zz', dir_fd=dfd); os.unlink('zz', dir_fd=dfd)
        except OSError:
            pass
th = threading.Thread(target=churn); th.start()
print("go", flush=True)
`;

/**
 * Runs `script` (Python) in `cwd`: `ended` when it has, `going` once it prints "go" (the churn is
 * on) or ends; `done()` closes its stdin (a script may wait for that: STOP_WHEN_TOLD).
 */
function pythonRun(
  script: string,
  cwd: string,
): { going: Promise<void>; ended: Promise<void>; done(): void } {
  const child = spawn("python3", ["-c", script], { cwd, stdio: ["pipe", "pipe", "inherit"] });
  const ended = new Promise<void>((resolve, reject) => {
    child.on("error", reject);
    child.on("exit", () => resolve());
  });
  const going = new Promise<void>((resolve) => {
    child.stdout.on("data", (chunk: Buffer) => {
      if (chunk.includes("go")) resolve();
    });
    void ended.then(resolve, resolve);
  });
  return { going, ended, done: () => child.stdin.end() };
}

/** The end of a CHURN program that churns until its stdin closes (pythonRun's `done`). */
const STOP_WHEN_TOLD = "import sys\nsys.stdin.read()\nstop = True; th.join()\n";

async function race(base: string, runs: number) {
  const missed: Array<{ run: number; turn: string; what: string }> = [];
  for (let run = 0; run < runs; run++) {
    const dir = realpathSync(mkdtempSync(join(base, "r-")));
    const miss = (turn: string, what: string) => missed.push({ run, turn, what });
    mkdirSync(join(dir, "stage", "sub"), { recursive: true });
    mkdirSync(join(dir, "stage", ".git", "hooks"), { recursive: true });
    mkdirSync(join(dir, "stage", ".aws"));
    writeFileSync(join(dir, "stage", ".aws", "credentials"), "secret");
    for (let i = 0; i < 300; i++) writeFileSync(join(dir, "stage", `f${i}`), "x");
    // The journal is set up by a first turn; the race is in the second.
    const first = await beginTurnChanges([dir], { walk: true });
    await first.end();
    first.release();
    const second = await beginTurnChanges([dir], { walk: true });
    await pythonRun(
      CHURN("stage") +
        "time.sleep(0.03)\nos.rename('stage', 'final')\ntime.sleep(0.2)\nstop = True; th.join()\n" +
        "open('final/sub/evil.js', 'w').write('evil')\n",
      dir,
    ).ended;
    const files = (await second.end()).files.map((f) => relative(dir, f));
    second.release();
    // (The files the folder held before it was renamed are listed by the journal; where it
    // stops and the turn walks instead, not: a rename leaves their change times as they were.)
    if (!files.includes("final/sub/evil.js")) miss("journal", "final/sub/evil.js");
    const third = await beginTurnChanges([dir], { walk: true });
    const nested = third.nested;
    if (!nested?.nestedGit.includes(join(dir, "final", ".git"))) miss("next", "final/.git");
    if (!nested?.credentials.includes(join(dir, "final", ".aws"))) miss("next", "final/.aws");
    third.release();
    // Node's walk (no journal), while the link comes and goes in the folder it lists.
    const walked = await beginTurnChanges([dir], { walk: true, fs: null });
    writeFileSync(join(dir, "final", "late.js"), "x");
    // The link churns for as long as the walk takes, and stops when it has ended.
    const churning = pythonRun(CHURN("final") + STOP_WHEN_TOLD, dir);
    await churning.going;
    const late = (await walked.end()).files.map((f) => relative(dir, f));
    churning.done();
    await churning.ended;
    if (!late.includes("final/late.js")) miss("walk", "final/late.js");
    rmSync(dir, { recursive: true, force: true });
  }
  return { runs, missed };
}

if (mode === "race") {
  console.log(JSON.stringify(await race(root, Number(process.argv[4] ?? "10"))));
} else if (mode === "turns") {
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
