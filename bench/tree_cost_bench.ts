/**
 * What a turn and a Bash command cost in a large tree, on each engine: the evidence (which
 * files changed) and the protection (secret files, host-run paths) the server gathers around
 * them. Two measures:
 *
 * - the server's own work around a turn, in this process: at its start the identity scan and
 *   the view of changes, at its end the list of changed files; by the walks (before: what
 *   main did, the claude engine only its scan) and by the change journal (after), for the
 *   first turn in a folder and the next ones;
 * - with `--e2e`, jobs' wall time from `delegate_start` with `wait_seconds` to the answer,
 *   through the real server against the Ollama emulator, minus the same job in an empty git
 *   repository (claude's figures carry Claude Code's own second-long variance).
 *
 *   deno run -A bench/tree_cost_bench.ts [--sizes 1000,10000,100000] [--e2e | --only-e2e]
 *     [--engines native,claude] [--turns 3] [--before <checkout>] [--server <checkout>]
 *
 * `--before` takes the in-process figures before a change from another checkout's walks
 * (main's `src/engines/native/changes.ts` and `guard_identities.ts`); `--server` runs another
 * checkout's server (its `src/main.ts`) for the e2e figures before a change. Trees are made
 * under the system's temporary folder and removed.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { parseArgs } from "node:util";
import { field, startServer, tempDir } from "../tests/support/harness.ts";
import { startOllamaEmulator } from "../tests/support/emulator/emulator.ts";
import { makeTree, type TreeShape } from "../tests/support/trees.ts";
import { median, QUICK } from "./support/common.ts";
import { collectGuardIdentities } from "../src/guard/identities.ts";
import { beginTurnChanges, closeJournals } from "../src/engines/tree/turn_changes.ts";
import { appendFileSync, realpathSync } from "node:fs";
import { protectedMounts } from "../src/engines/native/sandbox/mounts.ts";
import { type HostRunWatch, movedPaths, watchMounts } from "../src/engines/native/sandbox/watch.ts";

const { values } = parseArgs({
  options: {
    sizes: { type: "string", default: QUICK ? "1000" : "1000,10000,100000" },
    engines: { type: "string", default: "native,claude" },
    turns: { type: "string", default: QUICK ? "2" : "3" },
    server: { type: "string" },
    e2e: { type: "boolean", default: false },
    /** Only the e2e figures (for `--server`: the in-process ones are this checkout's). */
    "only-e2e": { type: "boolean", default: false },
    /** A checkout whose walks give the in-process figures before the change. */
    before: { type: "string" },
  },
});
if (values.server) {
  process.env.OLLAMA_DELEGATE_TEST_SERVER = JSON.stringify([
    "deno",
    "run",
    "-A",
    "--v8-flags=--enable-experimental-regexp-engine-on-excessive-backtracks",
    "--config",
    join(values.server, "deno.json"),
    join(values.server, "src", "main.ts"),
    "serve",
  ]);
}
const sizes = values.sizes.split(",").map(Number);
const engines = values.engines.split(",") as Array<"native" | "claude">;
const turns = Number(values.turns);
/** Commands of the long job; the short one runs 1. */
const COMMANDS = 11;

/**
 * One turn's server-side work in `root` as another checkout (`--before`, main's) does it: the
 * native engine walks the tree, scans it and walks again; the claude engine only scans.
 */
interface Before {
  snapshot(roots: string[]): Promise<unknown>;
  changedBetween(a: unknown, b: unknown): string[];
  collectGuardIdentities(roots: string[]): Promise<unknown>;
}
let before: Before | undefined;
if (values.before) {
  const src = join(realpathSync(values.before), "src", "engines");
  before = {
    ...(await import(join(src, "native", "changes.ts"))),
    ...(await import(join(src, "guard_identities.ts"))),
  } as Before;
}

async function walkedTurn(root: string, claude: boolean): Promise<number> {
  const old = before!;
  const t0 = performance.now();
  const snap = claude ? undefined : await old.snapshot([root]);
  await old.collectGuardIdentities([root]);
  appendFileSync(join(root, "src", "m0", "p0", "f0.js"), "+");
  if (snap) old.changedBetween(snap, await old.snapshot([root]));
  return performance.now() - t0;
}

/**
 * The same with the turn's view of changes: a journal where one can be kept, or with `fs`
 * null the walk that replaces it (the Node package, macOS, Windows).
 */
async function journalTurn(root: string, fs?: null): Promise<number> {
  const t0 = performance.now();
  const changes = await beginTurnChanges([root], { walk: true, ...(fs === null ? { fs } : {}) });
  await collectGuardIdentities([root], changes.list ? { list: changes.list } : {});
  appendFileSync(join(root, "src", "m0", "p0", "f0.js"), "+");
  const report = await changes.end();
  if (!report.files.includes(join(root, "src", "m0", "p0", "f0.js"))) {
    throw new Error(`the change was missed: ${JSON.stringify(report)}`);
  }
  return performance.now() - t0;
}

const ms = (t: number) => `${t.toFixed(0)} ms`.padStart(8);

if (!values["only-e2e"]) {
  console.log("server-side work per turn (first turn in the folder / median of the next ones):");
}
for (const files of values["only-e2e"] ? [] : sizes) {
  for (const nodeModules of [false, true]) {
    const root = realpathSync(tempDir("od-bench-tree-"));
    try {
      makeTree(root, { files, nodeModules });
      const label = `${files.toLocaleString("en-US")} files${
        nodeModules ? " (half in node_modules)" : ""
      }`.padEnd(38);
      const series = async (f: () => Promise<number>) => {
        const first = await f();
        const next: number[] = [];
        for (let i = 0; i < turns; i++) next.push(await f());
        return `${ms(first)} /${ms(median(next))}`;
      };
      const old = before
        ? `before: native ${await series(() => walkedTurn(root, false))}, claude ${await series(
          () => walkedTurn(root, true),
        )}; `
        : "";
      closeJournals();
      const journal = await series(() => journalTurn(root));
      closeJournals();
      const walk = await series(() => journalTurn(root, null));
      console.log(`${label} ${old}after (both engines): ${journal}; without a journal ${walk}`);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }
}
if (!values["only-e2e"]) {
  // The native sandbox's check, before and after each command, that no protected path moved:
  // every path's signature (before), or the journal's sentinel first (after).
  const root = realpathSync(tempDir("od-bench-tree-"));
  try {
    makeTree(root, { files: 1000, nodeModules: false, nested: 120 });
    const changes = await beginTurnChanges([root], { walk: true });
    const guard = await collectGuardIdentities([root], changes.list ? { list: changes.list } : {});
    const mounts = protectedMounts([root], {
      readOnly: [...(changes.nested?.nestedGit ?? []), ...guard.scan.paths],
      secrets: guard.secretPaths,
    });
    const per = async (sentinel: boolean) => {
      const watch: HostRunWatch = {
        key: root,
        scan: guard.scan,
        ...(sentinel && changes.sentinel ? { sentinel: changes.sentinel } : {}),
      };
      await watchMounts(watch, mounts, [root]);
      const times: number[] = [];
      for (let i = 0; i < 10; i++) {
        const t0 = performance.now();
        if ((await movedPaths(watch)).length > 0) throw new Error("a path moved");
        times.push(performance.now() - t0);
      }
      return median(times);
    };
    const paths = mounts.readOnly.length + mounts.masks.length;
    console.log(
      `\nwatch of ${paths} protected paths per command check (twice a command): ` +
        `before ${(await per(false)).toFixed(1)} ms, after ${(await per(true)).toFixed(2)} ms`,
    );
    changes.release();
    closeJournals();
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
if (!values.e2e && !values["only-e2e"]) Deno.exit(0);

const emu = await startOllamaEmulator();

interface Figures {
  first: number;
  next: number;
  /**
   * ms per Bash command: the long job minus the short one, per extra command (on the claude
   * engine Claude Code's sandbox looks for names below the folder before each command).
   */
  perCommand?: number;
}

/** Jobs in `cwd` on a fresh server: the first turn there, the next ones, a command's cost. */
async function measure(cwd: string, engine: "native" | "claude"): Promise<Figures> {
  await using server = await startServer({ baseUrl: emu.url, cwd });
  const job = async (commands: number) => {
    const prompt = [...Array(commands)].map((_, i) => `@bash echo hi ${i}`).join("\n") +
      "\n@reply ok";
    const t0 = performance.now();
    const reply = await server.call("delegate_start", {
      prompt,
      model: "qwen3:8b",
      engine,
      cwd,
      wait_seconds: 600,
    }, { timeoutMs: 700_000 });
    const ms = performance.now() - t0;
    if (field(reply.text, "state") !== "completed") throw new Error(reply.text);
    return ms;
  };
  const first = await job(1);
  const next: number[] = [];
  for (let i = 0; i < turns; i++) next.push(await job(1));
  const long = await job(COMMANDS);
  const short = await job(1);
  return { first, next: median(next), perCommand: (long - short) / (COMMANDS - 1) };
}

const fmt = (ms: number) => `${ms >= 0 ? " " : ""}${(ms / 1000).toFixed(2)} s`;

const empty = tempDir("od-bench-tree-");
makeTree(empty, { files: 0, nodeModules: false });
const base = new Map<string, Figures>();
for (const engine of engines) base.set(engine, await measure(empty, engine));
rmSync(empty, { recursive: true, force: true });
console.log(`server: ${values.server ?? "this checkout"}`);
for (const [engine, f] of base) {
  console.log(
    `empty repository, ${engine}: first turn ${fmt(f.first)}, next turns ${fmt(f.next)}` +
      (f.perCommand !== undefined ? `, a Bash command ${fmt(f.perCommand)}` : ""),
  );
}
console.log(
  "\nwhat the tree adds, per turn (first in the folder / next ones) and per Bash command:",
);
const shapes: Array<TreeShape & { label: string }> = [
  ...sizes.flatMap((files) =>
    [false, true].map((nodeModules) => ({
      files,
      nodeModules,
      label: `${files.toLocaleString("en-US")} files${
        nodeModules ? " (half in node_modules)" : ""
      }`,
    }))
  ),
  { files: 1000, nodeModules: false, nested: 100, label: "1,000 files, 100 nested projects" },
];
for (const { label, ...shape } of shapes) {
  const root = tempDir("od-bench-tree-");
  try {
    makeTree(root, shape);
    for (const engine of engines) {
      const f = await measure(root, engine);
      const b = base.get(engine)!;
      console.log(
        `${label.padEnd(38)} ${engine.padEnd(7)} first ${fmt(f.first - b.first)}  next ${
          fmt(f.next - b.next)
        }` + (f.perCommand !== undefined && b.perCommand !== undefined
          ? `  command ${fmt(f.perCommand - b.perCommand)}`
          : ""),
      );
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
await emu.close();
