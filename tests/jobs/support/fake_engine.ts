/**
 * A stand-in Engine for the job layer's own tests: each turn waits until the test ends it
 * (or the job layer stops it), and reports through the sink whatever the test says. The
 * engines themselves are tested against the real Claude Code CLI and the real loop.
 */
import { tempDir } from "../../support/temp_dir.ts";
import { join } from "node:path";
import type {
  Activity,
  CheckResult,
  Engine,
  RunningTurn,
  TurnFacts,
  TurnOutcome,
  TurnSink,
  TurnSpec,
  VerifySpec,
} from "../../../src/engines/types.ts";
import { JobManager, type ManagerConfig } from "../../../src/jobs/manager.ts";
import { JobStore } from "../../../src/jobs/store.ts";

/** One turn the fake engine runs: the test ends it, or the job layer stops it. */
export interface FakeTurn {
  spec: TurnSpec;
  sink: TurnSink;
  /** Ends the turn as the engine would see it. */
  end(outcome?: Partial<TurnOutcome>): void;
  /** Whether the job layer asked the turn to stop. */
  stopped: boolean;
}

export const OK: TurnOutcome = {
  ok: true,
  resultText: "done",
  exitCode: 0,
  signal: null,
  permissionDenials: [],
};

export class FakeEngine implements Engine {
  readonly turns: FakeTurn[] = [];
  /** What `turnFacts` and `recentActivity` read back from a job folder. */
  facts_: TurnFacts = { toolCalls: 0, sessionCreated: false };
  activities: Activity[] = [];
  #waiters: Array<() => void> = [];

  constructor(readonly name: "claude" | "native" = "claude") {}

  start(spec: TurnSpec, sink: TurnSink): Promise<RunningTurn> {
    let finish!: (o: TurnOutcome) => void;
    const done = new Promise<TurnOutcome>((r) => (finish = r));
    const turn: FakeTurn = {
      spec,
      sink,
      stopped: false,
      end: (outcome = {}) => finish({ ...OK, ...outcome }),
    };
    this.turns.push(turn);
    for (const wake of this.#waiters.splice(0)) wake();
    return Promise.resolve({
      done,
      stop: () => {
        turn.stopped = true;
        finish({ ...OK, ok: false, resultText: "partial", exitCode: null, signal: "SIGTERM" });
        return done.then(() => {});
      },
    });
  }

  /** Resolves with turn `n` (0-based) once it has started. */
  async turn(n: number): Promise<FakeTurn> {
    while (this.turns.length <= n) await new Promise<void>((r) => this.#waiters.push(r));
    return this.turns[n]!;
  }

  recentActivity(_dir: string, limit: number): Promise<Activity[]> {
    return Promise.resolve(this.activities.slice(-limit));
  }

  turnFacts(_dir: string): Promise<TurnFacts> {
    return Promise.resolve(this.facts_);
  }

  /** What each verification returns, in order; a pass once they are used up. */
  checks: Array<CheckResult | ((spec: VerifySpec) => Promise<CheckResult>)> = [];
  readonly verified: VerifySpec[] = [];

  verify(spec: VerifySpec): Promise<CheckResult> {
    this.verified.push(spec);
    const next = this.checks.shift();
    if (typeof next === "function") return next(spec);
    return Promise.resolve(next ?? { passed: true, runs: [] });
  }
}

/** A check whose one command failed with `output` (exit 1). */
export function failedCheck(command: string, output: string, exitCode = 1): CheckResult {
  return {
    passed: false,
    runs: [{
      command,
      exitCode,
      signal: null,
      durationMs: 1200,
      timedOut: false,
      output,
      droppedChars: 0,
    }],
  };
}

/** A check whose one command passed. */
export function passedCheck(command: string): CheckResult {
  return {
    passed: true,
    runs: [{
      command,
      exitCode: 0,
      signal: null,
      durationMs: 800,
      timedOut: false,
      output: "ok",
      droppedChars: 0,
    }],
  };
}

/** A fresh state dir with a manager over one fake engine (claude). */
export function managerWith(
  engine: FakeEngine,
  config: Partial<ManagerConfig> = {},
): { manager: JobManager; store: JobStore; engine: FakeEngine } {
  const store = new JobStore(join(tempDir("od-jobs-"), "state"));
  store.init();
  const manager = new JobManager(store, { [engine.name]: engine }, {
    jobTimeoutMs: 60_000,
    maxConcurrent: 4,
    ...config,
  });
  return { manager, store, engine };
}

/** A new turn's request, in a throwaway working directory. */
export function newTurn(
  prompt = "do it",
  extra: {
    backend?: string;
    checks?: import("../../../src/jobs/record.ts").JobChecks;
    fallback?: string[];
  } = {},
) {
  return {
    prompt,
    engine: "claude" as const,
    model: "qwen3:8b",
    cwd: tempDir("od-cwd-"),
    options: { permissionMode: "acceptEdits" as const, addDirs: [] },
    ...extra,
  };
}
