import { isDeno } from "./runtime.ts";
import type { SpawnedProcess, SpawnOptions } from "./spawn_contract.ts";
import { spawnWithDeno } from "./spawn_deno.ts";
import { spawnWithNode } from "./spawn_node.ts";

export {
  type ExitStatus,
  type SpawnedProcess,
  SpawnError,
  type SpawnOptions,
} from "./spawn_contract.ts";

/** Starts a child process with the runtime's native API. */
export function spawnProcess(options: SpawnOptions): Promise<SpawnedProcess> {
  return isDeno ? spawnWithDeno(options) : spawnWithNode(options);
}
