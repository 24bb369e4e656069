import { spawn } from "node:child_process";
import { Readable } from "node:stream";
import type { ExitStatus, SpawnedProcess, SpawnOptions } from "./spawn.ts";
import { SpawnError } from "./spawn.ts";

/** node:child_process with a complete env object (Node replaces, never merges, `env`). */
export function spawnWithNode(options: SpawnOptions): Promise<SpawnedProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(options.command, [...options.args], {
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
