/**
 * The spawn contract: what starting a child takes and gives, whichever runtime starts it.
 * spawn.ts picks the implementation (spawn_deno.ts, spawn_node.ts); both implement this.
 */

/** How a child is started. The environment is complete: nothing is inherited. */
export interface SpawnOptions {
  /** An absolute path (resolve names with `which` against the child's PATH first). */
  command: string;
  args: readonly string[];
  cwd: string;
  env: Record<string, string>;
  /** Bytes written to the child's stdin, which is then closed; omitted = /dev/null. */
  stdin?: Uint8Array;
  /**
   * POSIX: start a new session (setsid) so signals meant for our process group do not
   * reach the child and we decide how it ends.
   */
  detached?: boolean;
}

export interface ExitStatus {
  /** Exit code, or null when a signal ended the process. */
  code: number | null;
  signal: string | null;
}

export interface SpawnedProcess {
  pid: number;
  stdout: ReadableStream<Uint8Array>;
  stderr: ReadableStream<Uint8Array>;
  /** Resolves when the process has exited; never rejects. */
  status: Promise<ExitStatus>;
  /** Signals the direct child only; see tree_kill.ts for the whole tree. */
  kill(signal: "SIGTERM" | "SIGKILL"): void;
}

/** Thrown when the OS refuses to start the program, with the OS error as cause. */
export class SpawnError extends Error {
  override name = "SpawnError";
  constructor(readonly command: string, readonly code: string, options: { cause: unknown }) {
    super(`Cannot start "${command}": ${code}`, options);
  }
}
