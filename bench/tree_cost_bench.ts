/**
 * What a turn and a Bash command cost in a large tree, on each engine: the evidence (which
 * files changed) and the protection (secret files, host-run paths) the server gathers around
 * them. Two measures:
 *
 * - the server's own work around a turn (bench/support/tree_turn.ts): at its start the identity
 *   scan and the view of changes, at its end the list of changed files; by the walks (before:
 *   what main did, the claude engine only its scan) and by the change journal (after), for the
 *   first turn in a folder and the next ones; on Deno in this process, and under Node (the npx
 *   route, whose journal goes through a Python helper: platform/posix/inotify_helper.ts) in a
 *   Node process running the same code, bundled as the npm package is;
 * - with `--e2e`, jobs' wall time from `delegate_start` with `wait_seconds` to the answer,
 *   through the real server against the Ollama emulator, minus the same job in an empty git
 *   repository run beside it: two servers, their jobs alternating, each tree's figure the
 *   median of `--turns` pairs with their range (Claude Code's own time varies by tenths of a
 *   second between jobs and drifts over a run; measured one after the other, the same tree read
 *   +0.48 s in one run and -0.03 s in the next); the server on Deno and the Node bundle
 *   (`deno task build:node`), each of `--runtimes`.
 *
 *   deno run -A bench/tree_cost_bench.ts [--sizes 1000,10000,100000] [--e2e | --only-e2e]
 *     [--engines native,claude] [--runtimes deno,node] [--turns 3] [--before <checkout>]
 *     [--server <checkout>] [--node-bundle <file>] [--nested-only]
 *
 * `--before` takes the in-process figures before a change from another checkout's walks
 * (a checkout from before the change journal: its `src/engines/native/changes.ts` and
 * `guard_identities.ts`); `--server` runs another
 * checkout's server (its `src/main.ts`) for the e2e figures before a change, and
 * `--node-bundle` another Node bundle (built from that checkout by its `deno task build:node`).
 * Without `node` on the PATH the Node figures are left out, saying so. Trees are made under the
 * system's temporary folder and removed.
 */
import "./support/help.ts";
import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { parseArgs } from "node:util";
import { field, startServer, tempDir, type TestServer } from "../tests/support/harness.ts";
import { startOllamaEmulator } from "../tests/support/emulator/emulator.ts";
import { makeTree, type TreeShape } from "../tests/support/trees.ts";
import { median, QUICK } from "./support/common.ts";
import { collectGuardIdentities } from "../src/guard/identities.ts";
import { beginTurnChanges, closeJournals } from "../src/engines/tree/turn_changes.ts";
import { appendFileSync, realpathSync } from "node:fs";
import { buildNode, bundleForNode } from "../scripts/build_node.ts";
import { treeTurn, type TurnTime } from "./support/tree_turn.ts";
import { protectedMounts } from "../src/engines/native/sandbox/mounts.ts";
import { type HostRunWatch, movedPaths, watchMounts } from "../src/engines/native/sandbox/watch.ts";

const { values } = parseArgs({
  options: {
    sizes: { type: "string", default: QUICK ? "1000" : "1000,10000,100000" },
    engines: { type: "string", default: "native,claude" },
    turns: { type: "string", default: QUICK ? "2" : "3" },
    runtimes: { type: "string", default: "deno,node" },
    "node-bundle": { type: "string" },
    server: { type: "string" },
    e2e: { type: "boolean", default: false },
    /** Only the e2e figures (for `--server`: the in-process ones are this checkout's). */
    "only-e2e": { type: "boolean", default: false },
    /** A checkout whose walks give the in-process figures before the change. */
    before: { type: "string" },
    /** Only the tree of 100 nested projects (its figures depend most on the bubblewrap). */
    "nested-only": { type: "boolean", default: false },
  },
});
const DENO_SERVER = values.server
  ? JSON.stringify([
    "deno",
    "run",
    "-A",
    "--v8-flags=--enable-experimental-regexp-engine-on-excessive-backtracks",
    "--config",
    join(values.server, "deno.json"),
    join(values.server, "src", "main.ts"),
    "serve",
  ])
  : undefined;
const sizes = values.sizes.split(",").map(Number);
const engines = values.engines.split(",") as Array<"native" | "claude">;
const turns = Number(values.turns);
const runtimes = values.runtimes.split(",") as Array<"deno" | "node">;
/** Node, when it is on the PATH and asked for. */
const node = runtimes.includes("node") ? which("node") : undefined;
if (runtimes.includes("node") && !node) console.log("node is not on the PATH: no Node figures");

function which(command: string): string | undefined {
  try {
    return execFileSync("which", [command], { encoding: "utf8" }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** A folder of this run's own, removed at the end. */
const scratch = tempDir("od-bench-tree-node-");
let turnBundle: string | undefined;

/**
 * The turns (tree_turn.ts) under Node, in a process of their own: bundled once as the npm
 * package is (esbuild through `deno bundle`), then run per tree.
 */
function nodeTurns(root: string): { first: TurnTime; next: TurnTime[] } {
  if (!turnBundle) {
    turnBundle = join(scratch, "tree_turn.mjs");
    bundleForNode(join(import.meta.dirname!, "support", "tree_turn_node.ts"), turnBundle);
  }
  const out = execFileSync(node!, [turnBundle, root, String(turns)], { encoding: "utf8" });
  return JSON.parse(out.trim().split("\n").at(-1)!);
}
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
  try {
    before = {
      ...(await import(join(src, "native", "changes.ts"))),
      ...(await import(join(src, "guard_identities.ts"))),
    } as Before;
  } catch (e) {
    // Those walks are the ones the change journal replaced (the change journal); later checkouts have
    // the journal's own "without a journal" route, which this bench measures anyway.
    console.error(
      `--before ${values.before}: not a checkout from before the change journal (it has no ` +
        `src/engines/native/changes.ts or src/engines/guard_identities.ts: ${
          (e as Error).message
        }); for a later checkout use --server for the end-to-end figures`,
    );
    process.exit(2);
  }
}

async function walkedTurn(root: string, claude: boolean): Promise<TurnTime> {
  const old = before!;
  const t0 = performance.now();
  const snap = claude ? undefined : await old.snapshot([root]);
  await old.collectGuardIdentities([root]);
  appendFileSync(join(root, "src", "m0", "p0", "f0.js"), "+");
  if (snap) old.changedBetween(snap, await old.snapshot([root]));
  return { wall: performance.now() - t0 };
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
      /** CPU time of the next turns, by route (see TurnTime). */
      const cpu: string[] = [];
      const text = (first: TurnTime, next: TurnTime[], route?: string) => {
        const cpus = next.flatMap((t) => t.cpu ?? []);
        if (route && cpus.length > 0) cpu.push(`${route}${ms(median(cpus))}`);
        return `${ms(first.wall)} /${ms(median(next.map((t) => t.wall)))}`;
      };
      const series = async (f: () => Promise<TurnTime>, route?: string) => {
        const first = await f();
        const next: TurnTime[] = [];
        for (let i = 0; i < turns; i++) next.push(await f());
        return text(first, next, route);
      };
      const old = before
        ? `before: native ${await series(() => walkedTurn(root, false))}, claude ${await series(
          () => walkedTurn(root, true),
        )}; `
        : "";
      closeJournals();
      const journal = await series(() => treeTurn(root), "journal");
      closeJournals();
      const walk = await series(() => treeTurn(root, null), "walk");
      const onNode = node ? nodeTurns(root) : undefined;
      const nodeText = onNode ? `; under Node ${text(onNode.first, onNode.next, "Node")}` : "";
      console.log(
        `${label} ${old}after (both engines): ${journal}; without a journal ${walk}${nodeText}` +
          ` (CPU of a next turn: ${cpu.join(", ").replaceAll(/ {2,}/g, " ")})`,
      );
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
    // What a claude turn looks at before its jail is planned, with the git stores of the
    // nested repositories (each with a secret .envrc), as turn_confinement.ts asks for it.
    const identities: number[] = [];
    for (let i = 0; i < (QUICK ? 2 : 7); i++) {
      const t0 = performance.now();
      await collectGuardIdentities([root], {
        ...(changes.list ? { list: changes.list } : {}),
        gitObjects: {},
      });
      identities.push(performance.now() - t0);
    }
    console.log(
      `a claude turn's protected files and git stores, 120 nested projects: ` +
        `${median(identities.slice(1)).toFixed(0)} ms a turn (the first ${
          identities[0]!.toFixed(0)
        } ms)`,
    );
    changes.release();
    closeJournals();
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
if (!values.e2e && !values["only-e2e"]) {
  rmSync(scratch, { recursive: true, force: true });
  Deno.exit(0);
}

const emu = await startOllamaEmulator();

/** What the tree adds over an empty repository, each figure from interleaved pairs of jobs. */
interface Figures {
  /** The first job in the folder (each server's first turn, in a folder of its own). */
  first: number;
  /** The next jobs: the median of the pairs' differences. */
  next: number;
  /** The smallest and largest of those differences. */
  nextRange: [number, number];
  /**
   * ms per Bash command: the long job minus the short one, per extra command (on the claude
   * engine Claude Code's sandbox looks for names below the folder before each command).
   */
  perCommand: number;
}

/** A job of `commands` Bash commands on `server` in `cwd`: its wall time, ms. */
async function job(server: TestServer, cwd: string, engine: string, commands: number) {
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
}

/**
 * The same jobs in `root` and in an empty repository, side by side: a server for each, their
 * jobs alternating (which goes first alternates too), so that the machine's drift over a run,
 * and Claude Code's, fall on both alike. Returns the empty repository's own figures and the
 * differences.
 */
async function measurePair(
  root: string,
  engine: "native" | "claude",
): Promise<{ base: { first: number; next: number; perCommand: number }; diff: Figures }> {
  const empty = tempDir("od-bench-tree-");
  try {
    makeTree(empty, { files: 0, nodeModules: false });
    await using a = await startServer({ baseUrl: emu.url, cwd: empty });
    await using b = await startServer({ baseUrl: emu.url, cwd: root });
    const both = async (commands: number, i: number) => {
      if (i % 2 === 0) {
        const ta = await job(a, empty, engine, commands);
        return [ta, await job(b, root, engine, commands)] as const;
      }
      const tb = await job(b, root, engine, commands);
      return [await job(a, empty, engine, commands), tb] as const;
    };
    const [firstA, firstB] = await both(1, 0);
    const nextA: number[] = [];
    const nextD: number[] = [];
    for (let i = 0; i < turns; i++) {
      const [ta, tb] = await both(1, i + 1);
      nextA.push(ta);
      nextD.push(tb - ta);
    }
    const [longA, longB] = await both(COMMANDS, 0);
    const [shortA, shortB] = await both(1, 1);
    const perA = (longA - shortA) / (COMMANDS - 1);
    const perB = (longB - shortB) / (COMMANDS - 1);
    return {
      base: { first: firstA, next: median(nextA), perCommand: perA },
      diff: {
        first: firstB - firstA,
        next: median(nextD),
        nextRange: [Math.min(...nextD), Math.max(...nextD)],
        perCommand: perB - perA,
      },
    };
  } finally {
    rmSync(empty, { recursive: true, force: true });
  }
}

const fmt = (ms: number) => `${ms >= 0 ? " " : ""}${(ms / 1000).toFixed(2)} s`;

/** The server each runtime runs: on Deno as the tests start it, under Node the bundle. */
const servers = new Map<string, string | undefined>();
if (runtimes.includes("deno")) servers.set("deno", DENO_SERVER);
if (node) {
  const bundle = values["node-bundle"] ?? join(scratch, "ollama-delegate.mjs");
  if (!values["node-bundle"]) buildNode(bundle);
  servers.set("node", JSON.stringify([node, bundle]));
}
/** Runs `f` with the runtime's server as the one the harness starts. */
async function on<T>(runtime: string, f: () => Promise<T>): Promise<T> {
  const server = servers.get(runtime);
  if (server) process.env.OLLAMA_DELEGATE_TEST_SERVER = server;
  else delete process.env.OLLAMA_DELEGATE_TEST_SERVER;
  return await f();
}
/** What each runtime and engine is measured as: `deno native`, `node claude`... */
const runs = [...servers.keys()].flatMap((runtime) =>
  engines.map((engine) => ({ runtime, engine, key: `${runtime} ${engine}` }))
);

console.log(`server on Deno: ${values.server ?? "this checkout"}`);
if (servers.has("node")) {
  console.log(`server on Node: ${values["node-bundle"] ?? "this checkout, bundled"}`);
}
console.log(
  `\nwhat the tree adds over an empty repository, jobs in pairs (${turns} next turns each):` +
    " the first job in the folder, the median of the next ones [their range], per Bash command",
);
const shapes: Array<TreeShape & { label: string }> = [
  ...(values["nested-only"] ? [] : sizes).flatMap((files) =>
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
    for (const { runtime, engine, key } of runs) {
      const { base, diff } = await on(runtime, () => measurePair(root, engine));
      const [low, high] = diff.nextRange;
      console.log(
        `${label.padEnd(38)} ${key.padEnd(12)} first ${fmt(diff.first)}  next ${fmt(diff.next)} [${
          fmt(low).trim()
        } to ${fmt(high).trim()}]  command ${fmt(diff.perCommand)}` +
          `   (empty: ${fmt(base.first).trim()}, ${fmt(base.next).trim()}, ${
            fmt(base.perCommand).trim()
          })`,
      );
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
await emu.close();
rmSync(scratch, { recursive: true, force: true });
