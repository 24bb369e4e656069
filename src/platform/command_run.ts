/**
 * Runs one command to its end under a deadline: output kept as a bounded tail (or, asked,
 * stdout and stderr apart as bytes under a cap), input given at the start, a timeout and an
 * abort that stop the whole process tree, and a sweep of the command's session for whatever
 * still holds its pipes. The one home of spawn, wait, time out and kill: the sandbox, git and
 * the doctor's probes decide what to run; this knows how.
 */
import process from "node:process";
import { concatBytes } from "./bytes.ts";
import { SpawnError, spawnProcess } from "./spawn.ts";
import { isWindows } from "./runtime.ts";
import { settleWithin } from "./sleep.ts";
import { killSession, killTree } from "./tree_kill.ts";

const KILL_GRACE_MS = 1000;

export interface CommandSpec {
  command: string;
  args: string[];
  cwd: string;
  /** The complete environment of the child. */
  env: Record<string, string>;
  /** Stopped (with everything it started) after this long; none when absent. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Output kept: the last this many characters (0: none, the output is not decoded). */
  keepChars: number;
  /** Bytes written to the command's stdin, which is then closed; absent = no input. */
  stdin?: Uint8Array;
  /**
   * Keeps stdout and stderr apart, as bytes, each up to this many: a command that writes more
   * is stopped, and the result says `overCap` (its stdout then undefined).
   */
  maxBytes?: number;
  /** Exit codes that are answers rather than failures (default: 0 alone); see `accepted`. */
  okCodes?: readonly number[];
  /**
   * The command leads a session of its own (the default; POSIX): a timeout, an abort or the
   * cap stops everything it started, and whatever still holds its pipes after it ends is swept.
   * `false` for short commands run often whose stragglers need no sweep (git without a
   * deadline): Deno starts a child in a session of its own by forking the whole runtime, which
   * cost a server about 7 ms a command more than a plain start (platform/spawn_deno.ts).
   */
  ownSession?: boolean;

  onSpawn?: (pid: number) => void;
  /**
   * Each piece of stdout and stderr as it arrives, decoded, in arrival order, also what the
   * tail later drops: for showing a running command's output as it comes.
   */
  onOutput?: (text: string) => void;
}

export interface CommandResult {
  exitCode: number | null;
  signal: string | null;
  durationMs: number;
  /** stdout and stderr as they arrived, the last `keepChars` characters. */
  output: string;
  /** Characters that were dropped from the front. */
  droppedChars: number;
  timedOut: boolean;
  aborted: boolean;
  /** With `maxBytes`: stdout as bytes, undefined when it went over the cap. */
  stdout?: Uint8Array;
  /** With `maxBytes`: stderr as bytes, undefined when it went over the cap. */
  stderr?: Uint8Array;
  /** With `maxBytes`: the command wrote more than the cap on stdout or stderr and was stopped. */
  overCap?: boolean;
  /** It exited by itself with a code of `okCodes` (default 0). */
  accepted?: boolean;
  /** The spawn error's code (ENOENT, EACCES...) when the command could not start. */
  notStarted?: string;
}

/** The system shell running `script`: `/bin/sh -c`, or `cmd.exe /d /s /c` on Windows. */
export function shellCommand(script: string): { command: string; args: string[] } {
  return isWindows
    ? { command: process.env.COMSPEC ?? "cmd.exe", args: ["/d", "/s", "/c", script] }
    : { command: "/bin/sh", args: ["-c", script] };
}

/** Runs `spec` to its end; never throws for the command's own failure or a failed spawn. */
export async function runCommand(spec: CommandSpec): Promise<CommandResult> {
  const started = performance.now();
  const early = (output: string, aborted: boolean, notStarted?: string): CommandResult => ({
    exitCode: null,
    signal: null,
    durationMs: Math.round(performance.now() - started),
    output,
    droppedChars: 0,
    timedOut: false,
    aborted,
    overCap: false,
    accepted: false,
    ...(notStarted !== undefined ? { notStarted } : {}),
  });
  if (spec.signal?.aborted) return early("(not started: the job was stopped)", true);
  const ownSession = !isWindows && (spec.ownSession ?? true);
  let child;
  try {
    child = await spawnProcess({
      command: spec.command,
      args: spec.args,
      cwd: spec.cwd,
      env: spec.env,
      ...(spec.stdin ? { stdin: spec.stdin } : {}),
      detached: ownSession,
    });
  } catch (e) {
    const code = e instanceof SpawnError ? e.code : String(e);
    return early(e instanceof SpawnError ? e.message : String(e), false, code);
  }
  spec.onSpawn?.(child.pid);
  const tail = new TailBuffer(spec.keepChars);
  const decode = spec.keepChars > 0 || spec.onOutput !== undefined;
  const take = (text: string) => {
    tail.push(text);
    if (text !== "") spec.onOutput?.(text);
  };
  let overCap = false;
  const pump = async (stream: ReadableStream<Uint8Array>): Promise<Uint8Array | undefined> => {
    const decoder = new TextDecoder();
    const parts: Uint8Array[] = [];
    let size = 0;
    for await (const chunk of stream) {
      if (decode) take(decoder.decode(chunk, { stream: true }));
      if (spec.maxBytes === undefined || size > spec.maxBytes) continue;
      size += chunk.length;
      if (size > spec.maxBytes) {
        overCap = true;
        stop();
      } else parts.push(chunk);
    }
    if (decode) take(decoder.decode());
    return spec.maxBytes === undefined || size > spec.maxBytes
      ? undefined
      : concatBytes(parts, size);
  };
  let timedOut = false;
  let aborted = false;
  let stopping: Promise<unknown> | undefined;
  const stop = () => {
    stopping ??= killTree(child.pid, { graceMs: KILL_GRACE_MS }).catch(() => {
      child.kill("SIGKILL");
    });
  };
  const timer = spec.timeoutMs === undefined ? undefined : setTimeout(() => {
    timedOut = true;
    stop();
  }, spec.timeoutMs);
  const onAbort = () => {
    aborted = true;
    stop();
  };
  if (spec.signal?.aborted) onAbort();
  else spec.signal?.addEventListener("abort", onAbort, { once: true });
  const pumps = Promise.all([pump(child.stdout), pump(child.stderr)]);
  // A read error must not become an unhandled rejection while we wait for the exit.
  pumps.catch(() => {});
  const status = await child.status;
  clearTimeout(timer);
  spec.signal?.removeEventListener("abort", onAbort);
  await stopping;
  // Something still holding our pipes after the command ended belongs to its session: a
  // process forked while the command was being stopped, or a daemon it left behind.
  const read = pumps.catch(() => []);
  let outputs = await settleWithin(read, stopping ? 300 : 2000, undefined);
  if (outputs === undefined && ownSession) {
    killSession(child.pid);
    outputs = await settleWithin(read, 1000, undefined);
  }
  const [stdout, stderr] = outputs ?? [];
  const stopped = timedOut || aborted || overCap;
  return {
    exitCode: status.code,
    signal: status.signal,
    durationMs: Math.round(performance.now() - started),
    output: tail.text(),
    droppedChars: tail.dropped,
    timedOut,
    aborted,
    ...(stdout !== undefined ? { stdout } : {}),
    ...(stderr !== undefined ? { stderr } : {}),
    overCap,
    accepted: !stopped && status.code !== null && (spec.okCodes ?? [0]).includes(status.code),
  };
}

/** Keeps the last `keep` characters of a stream of text, in bounded memory. */
export class TailBuffer {
  #parts: string[] = [];
  #length = 0;
  dropped = 0;

  constructor(readonly keep: number) {}

  push(text: string): void {
    if (text === "") return;
    this.#parts.push(text);
    this.#length += text.length;
    if (this.#length > this.keep * 2) this.#compact();
  }

  #compact(): void {
    const joined = this.#parts.join("");
    const cut = Math.max(0, joined.length - this.keep);
    this.dropped += cut;
    this.#parts = [joined.slice(cut)];
    this.#length = joined.length - cut;
  }

  text(): string {
    this.#compact();
    return this.#parts.join("");
  }
}
