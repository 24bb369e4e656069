/**
 * Deno's cache folder, where the npm packages the server imports are. Servers and CLI runs in the
 * tests get a HOME of their own, from which Deno would pick another cache, so they are given this
 * one. A module of its own, without the harness's MCP client, for scripts/test.ts, which asks it
 * once for the whole run and passes it to every job as DENO_DIR.
 */
import { execFileSync } from "node:child_process";
import process from "node:process";

let denoDir: string | undefined;

/** DENO_DIR when set, else what `deno info --json` says (asked once per process). */
export function realDenoDir(): string {
  if (process.env.DENO_DIR) return process.env.DENO_DIR;
  denoDir ??= (JSON.parse(execFileSync("deno", ["info", "--json"], { encoding: "utf8" })) as {
    denoDir: string;
  }).denoDir;
  return denoDir;
}
