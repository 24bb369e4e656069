/**
 * One turn's Claude Code child, from spawn to end: its stream-json stdout kept in the job
 * folder and parsed as it comes, a tail of its stderr for the error text, and everything it
 * started ended with it. Each process of a turn carries the turn's marker in its environment
 * and the child leads a session of its own, so what left the process tree (setsid -f, a
 * double fork) is still found and ended (platform/tree_kill.ts).
 */
import { open } from "node:fs/promises";
import { join } from "node:path";
import { settleWithin } from "../../platform/sleep.ts";
import { isWindows } from "../../platform/runtime.ts";
import { type SpawnedProcess, SpawnError, spawnProcess } from "../../platform/spawn.ts";
import { type JobScope, killTree, startTicks, sweepJob } from "../../platform/tree_kill.ts";
import { LineSplitter } from "../../platform/line_splitter.ts";
import type { RunningTurn, TurnOutcome, TurnSink } from "../types.ts";
import { STDERR_FILE, STREAM_FILE } from "./folder.ts";
import { failedStart, outcomeOf } from "./outcome.ts";
import { BackendWatch, type WatchedEndpoint } from "./backend_watch.ts";
import { readStreamEvent, type ResultEvent, streamItems } from "./stream.ts";
import { BashEvidence } from "./bash_evidence.ts";
import { StreamResponses } from "./stream_responses.ts";
import { RequestSizes, type RequestTokens } from "./request_sizes.ts";

/** Longest stdout line we parse (bigger ones stay on disk unparsed). */
const MAX_PARSED_LINE = 32 * 1024 * 1024;
/**
 * How long Claude Code itself may take to exit once everything it started is gone: it exits
 * 0.2-0.4 s after SIGTERM (bench/claude_process_bench.ts), and it writes each message of its
 * session file as it goes, so a follow-up still resumes if it has to be killed.
 */
const ROOT_GRACE_MS = 500;
/** stderr kept for the error text of a failed job. */
const STDERR_TAIL = 20_000;
/**
 * How long what a turn left running gets between SIGTERM and SIGKILL once Claude Code has
 * exited: nothing a delegate started may outlive its turn.
 */
const LEFTOVER_GRACE_MS = 1000;
/**
 * The grace of a turn ended because its backend is gone: Claude Code is only waiting for its
 * next retry, and what it started has had the whole failed request's time to finish.
 */
const BACKEND_GONE_GRACE_MS = 2000;
/** The environment entry that marks every process of a turn (see platform/posix/job_sweep.ts). */
export const TURN_MARKER = "OLLAMA_DELEGATE_TURN";

/**
 * The marker of one turn. It is derived, not random, so that a server that starts after
 * another died can still find what that one's delegates left. Forging it gains a delegate
 * nothing: a process carrying another turn's marker is only ended with that turn.
 */
export function turnMarker(jobId: string, turn: number): { name: string; value: string } {
  return { name: TURN_MARKER, value: `${jobId}.${turn}` };
}

/** How one turn's Claude Code is started. */
export interface ChildLaunch {
  /** An absolute path, resolved once: the OS must not look the name up again. */
  command: string;
  args: readonly string[];
  cwd: string;
  env: Record<string, string>;
  /** The task, written to stdin. */
  stdin: Uint8Array;
  /** The job folder: the stream and stderr are appended to its files. */
  dir: string;
  /** The turn's marker (turnMarker), also set in `env`. */
  marker: { name: string; value: string };
  /**
   * The endpoint Claude Code talks to: when it reports failed requests and this does not
   * answer either, the turn ends (backend_watch.ts).
   */
  backend: WatchedEndpoint;
  /** Told why, when the watch found the endpoint gone. */
  backendGone?: (reason: string) => void;
  /** Claude Code's prompt of the turn's first request, estimated (context_check.ts). */
  promptTokens: number;
  /** The turn resumes a session (its requests carry turns this stream does not show). */
  resumed: boolean;
}

/**
 * Starts Claude Code for a turn. `settle` gets the outcome read from the stream and the exit
 * status once the child and everything it started are gone, with the turn's requests as the
 * stream showed them, and gives the turn's outcome.
 */
export async function startChild(
  launch: ChildLaunch,
  sink: TurnSink,
  settle: (outcome: TurnOutcome, requests: readonly RequestTokens[]) => Promise<TurnOutcome>,
): Promise<RunningTurn> {
  const { command, marker } = launch;
  let child: SpawnedProcess;
  try {
    child = await spawnProcess({
      command,
      args: launch.args,
      cwd: launch.cwd,
      env: launch.env,
      stdin: launch.stdin,
      detached: true,
    });
  } catch (e) {
    const why = e instanceof SpawnError ? e.code : (e as Error).message;
    return failedStart(`Cannot start Claude Code "${command}": ${why}`);
  }
  sink.childStarted(child.pid);
  // The child leads a session of its own (detached); its pid is that session's id.
  const rootStart = await startTicks(child.pid).catch(() => undefined);
  const scope: JobScope = {
    ...(isWindows ? {} : { sessionId: child.pid }),
    marker,
    ...(rootStart !== undefined ? { notBeforeTicks: rootStart } : {}),
  };
  let swept: Promise<void> | undefined;
  const sweep = (graceMs: number) =>
    swept ??= sweepJob(scope, { graceMs }).then(() => {}, () => {});
  const streamFile = await open(join(launch.dir, STREAM_FILE), "a");
  const stderrFile = await open(join(launch.dir, STDERR_FILE), "a");
  let result: ResultEvent | undefined;
  // Set when the backend stopped answering and the turn was ended for it: the job's error.
  let backendGone: string | undefined;
  const watch = new BackendWatch(launch.backend, (errorText, reason) => {
    backendGone = errorText;
    launch.backendGone?.(reason);
    void turn.stop(BACKEND_GONE_GRACE_MS).catch(() => {});
  });
  const responses = new StreamResponses(launch.promptTokens, launch.resumed);
  const commands = new BashEvidence(sink);
  const sizes = new RequestSizes();
  const splitter = new LineSplitter(MAX_PARSED_LINE, (line) => {
    const event = readStreamEvent(line);
    if (event === undefined) return;
    if (event.type === "notice" && event.retry) watch.retried();
    const response = responses.see(event);
    if (response) sink.response?.(response);
    commands.see(event);
    sizes.see(event);
    for (const item of streamItems(event)) {
      if (item.type === "init") {
        sink.sessionStarted({
          ...(item.permissionMode ? { permissionMode: item.permissionMode } : {}),
          ...(item.model ? { model: item.model } : {}),
        });
      } else if (item.type === "activity") {
        if (item.toolCall) sink.toolCall();
        sink.activity(item.activity);
      } else {
        result = item.result;
      }
    }
  });
  const pumpStdout = (async () => {
    for await (const chunk of child.stdout) {
      await streamFile.write(chunk);
      splitter.push(chunk);
    }
    splitter.end();
  })();
  let stderrTail = "";
  const pumpStderr = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of child.stderr) {
      await stderrFile.write(chunk);
      stderrTail = (stderrTail + decoder.decode(chunk, { stream: true })).slice(-STDERR_TAIL);
    }
  })();
  const done = (async (): Promise<TurnOutcome> => {
    const status = await child.status;
    await watch.close();
    // Nothing the delegate started outlives its turn: what left the tree (setsid -f, a
    // double fork) is found by session and marker.
    await sweep(LEFTOVER_GRACE_MS);
    // A grandchild can keep the pipes open after claude exits; its output is not ours.
    await settleWithin(Promise.allSettled([pumpStdout, pumpStderr]), 2000, undefined);
    await streamFile.close();
    await stderrFile.close();
    commands.finish();
    const outcome = outcomeOf(result, status.code, status.signal, stderrTail);
    // A result that came in while the turn was being ended still stands.
    return await settle(
      backendGone && !outcome.ok
        ? { ...outcome, errorText: backendGone, failure: "backend_unreachable" }
        : outcome,
      sizes.requests,
    );
  })();
  const turn: RunningTurn = {
    done,
    async stop(graceMs: number) {
      await killTree(child.pid, { graceMs, rootGraceMs: Math.min(graceMs, ROOT_GRACE_MS) });
      await child.status;
      await sweep(Math.min(graceMs, LEFTOVER_GRACE_MS));
    },
  };
  return turn;
}
