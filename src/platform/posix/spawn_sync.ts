/**
 * A child run to its end, synchronously, whose environment is exactly the one given, on Deno as
 * on Node. Deno's node:child_process gives a synchronous child (`spawnSync`, `execFileSync`,
 * `execSync`) the parent's whole environment with `env` laid over it, where Node gives it `env`
 * alone (Deno 2.9.6; its asynchronous `spawn` no longer does, denoland/deno#27343): a server's
 * credentials would reach a child meant to see none. So the child starts through `env -i`, which
 * clears what it was handed and sets `env`, on both runtimes alike. POSIX only; everything else
 * in src/ uses this instead of those three (scripts/import_rules.ts checks).
 */
import { spawnSync, type SpawnSyncOptions, type SpawnSyncReturns } from "node:child_process";

/** Where `env` is on Linux and macOS. */
const ENV_BIN = "/usr/bin/env";

export type ExactSyncOptions = Omit<SpawnSyncOptions, "env" | "shell"> & {
  env: Record<string, string>;
};

/**
 * spawnSync of `command` with exactly `options.env`. A command that is not there ends with
 * status 127 (126 if it cannot run), as `env` reports it, instead of an `error`.
 */
export function spawnSyncExact(
  command: string,
  args: readonly string[],
  options: ExactSyncOptions & { encoding: BufferEncoding },
): SpawnSyncReturns<string>;
export function spawnSyncExact(
  command: string,
  args: readonly string[],
  options: ExactSyncOptions,
): SpawnSyncReturns<string | Buffer>;
export function spawnSyncExact(
  command: string,
  args: readonly string[],
  options: ExactSyncOptions,
): SpawnSyncReturns<string | Buffer> {
  // env would read a command named with "=" as one more variable.
  if (command.includes("=")) throw new TypeError(`cannot start "${command}" through env`);
  const assignments = Object.entries(options.env).map(([key, value]) => {
    if (key === "" || key.includes("=")) throw new TypeError(`not a variable name: "${key}"`);
    return `${key}=${value}`;
  });
  // `--` ends env's options, so no name is read as one; what follows the last NAME=VALUE is
  // the command, found on the PATH given in `env`.
  return spawnSync(ENV_BIN, ["-i", "--", ...assignments, command, ...args], {
    ...options,
    env: options.env,
  });
}
