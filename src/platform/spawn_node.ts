import { spawn } from "node:child_process";
import { Readable } from "node:stream";
import {
  type ExitStatus,
  type SpawnedProcess,
  SpawnError,
  type SpawnOptions,
} from "./spawn_contract.ts";
import { isWindows } from "./runtime.ts";
import { windowsLaunch } from "./windows/launch.ts";

/** node:child_process with a complete env object (Node replaces, never merges, `env`). */
export function spawnWithNode(options: SpawnOptions): Promise<SpawnedProcess> {
  return new Promise((resolve, reject) => {
    // Windows: batch files go through cmd.exe with our own escaping (see windows/launch.ts);
    // verbatim arguments keep Node from quoting that finished line a second time.
    let launch;
    try {
      launch = isWindows
        ? windowsLaunch(options.command, options.args, options.env)
        : { command: options.command, args: [...options.args], verbatim: false };
    } catch (cause) {
      reject(new SpawnError(options.command, (cause as Error).message, { cause }));
      return;
    }
    const child = spawn(launch.command, launch.args, {
      windowsVerbatimArguments: launch.verbatim,
      cwd: options.cwd,
      env: options.env,
      stdio: [options.stdin ? "pipe" : "ignore", "pipe", "pipe"],
      detached: options.detached ?? false,
      windowsHide: true,
    });
    const status = new Promise<ExitStatus>((done) => {
      child.once("close", (code, signal) => done({ code, signal }));
    });
    child.once("error", (cause: NodeJS.ErrnoException) => {
      if (child.pid === undefined) {
        reject(new SpawnError(options.command, cause.code ?? cause.message, { cause }));
      }
    });
    child.once("spawn", () => {
      if (options.stdin && child.stdin) {
        child.stdin.on("error", () => {});
        child.stdin.end(options.stdin);
      }
      resolve({
        pid: child.pid!,
        stdout: Readable.toWeb(child.stdout!) as ReadableStream<Uint8Array>,
        stderr: Readable.toWeb(child.stderr!) as ReadableStream<Uint8Array>,
        status,
        kill(signal) {
          try {
            child.kill(signal);
          } catch {
            // Already exited.
          }
        },
      });
    });
  });
}
