/**
 * One turn's server-side work in a tree, as tree_cost_bench.ts measures it on Deno and, bundled
 * by it (tree_turn_node.ts), under Node: the turn's view of changes (a journal where one can be
 * kept, or the walk that replaces it), the identity scan, one file written by "the delegate",
 * and the list of changed files, which must name it.
 */
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { collectGuardIdentities } from "../../src/guard/identities.ts";
import { beginTurnChanges } from "../../src/engines/tree/turn_changes.ts";

/** The file the turn writes, relative to the tree's root (tests/support/trees.ts). */
export const WRITTEN = join("src", "m0", "p0", "f0.js");

/**
 * What a turn took: wall time, and the CPU time of this process meanwhile (on a loaded
 * machine the wall time is mostly waiting for a core), in ms.
 */
export interface TurnTime {
  wall: number;
  cpu?: number;
}

/**
 * One turn. `fs` null: no journal, the walk (as on Node, macOS, Windows); undefined: whatever
 * the runtime has (Deno on Linux: the journal; Node: the walk).
 */
export async function treeTurn(root: string, fs?: null): Promise<TurnTime> {
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const changes = await beginTurnChanges([root], { walk: true, ...(fs === null ? { fs } : {}) });
  await collectGuardIdentities([root], changes.list ? { list: changes.list } : {});
  appendFileSync(join(root, WRITTEN), "+");
  const report = await changes.end();
  if (!report.files.includes(join(root, WRITTEN))) {
    throw new Error(`the change was missed: ${JSON.stringify(report).slice(0, 500)}`);
  }
  const cpu = process.cpuUsage(cpu0);
  return { wall: performance.now() - t0, cpu: (cpu.user + cpu.system) / 1000 };
}
