/**
 * The entry tree_cost_bench.ts bundles and runs under Node: the same turn (tree_turn.ts) as the
 * npm package's server does it there (its journal through the Python helper, or the walk).
 *
 *   node <bundle> <root> <turns>   prints {"first": TurnTime, "next": [TurnTime, ...]}
 */
import process from "node:process";
import { treeTurn, type TurnTime } from "./tree_turn.ts";

const [root, turns] = process.argv.slice(2);
if (!root || !turns) throw new Error("usage: node <bundle> <root> <turns>");
const first = await treeTurn(root);
const next: TurnTime[] = [];
for (let i = 0; i < Number(turns); i++) next.push(await treeTurn(root));
console.log(JSON.stringify({ first, next }));
