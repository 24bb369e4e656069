/**
 * The rounds of one job: the delegate's turn, then, when the job has `verify`, the server's
 * own check of the work and, while it fails, repair rounds that continue the conversation with
 * the failing output, up to `verifyRounds`. Every loop is bounded: by the cap, and earlier when
 * a round changes no file, the same failure comes back, or the backend fails (the job then
 * ends with the evidence so far and says why).
 */
import { join } from "node:path";
import { errorMessage } from "../errors.ts";
import type {
  CheckResult,
  Engine,
  RunningTurn,
  TurnOutcome,
  TurnSink,
  TurnSpec,
  Usage,
} from "../engines/types.ts";
import { writeFileAtomic } from "../platform/atomic_write.ts";
import { KILL_GRACE_MS, type LiveJob, type ManagerConfig } from "./live_job.ts";
import type { JobRecord } from "./record.ts";
import type { JobStore } from "./store.ts";
import { addSpent, budgetExceeded, type Spent } from "./spend/budget.ts";
import { treeFingerprint } from "./tree_fingerprint.ts";
import { CheckWatch } from "./checks/check_watch.ts";
import { combineOutcomes, runTurn } from "./turn_attempts.ts";
import { checkLine, checkLog, failureKey, keptRound, repairPrompt } from "./checks/verify_text.ts";

/** Repair rounds when `verify` is given without `verify_rounds`. */
export const DEFAULT_VERIFY_ROUNDS = 2;
/** The most repair rounds a job may ask for. */
export const MAX_VERIFY_ROUNDS = 5;
/** The time limit of one verification command (the job's own limit still covers all). */
export const VERIFY_COMMAND_TIMEOUT_MS = 600_000;

export interface RoundDeps {
  store: JobStore;
  config: ManagerConfig;
  /** The earlier turns of the job's session: what they changed is under the check too. */
  earlier?: readonly JobRecord[];
}

type Verification = NonNullable<JobRecord["verification"]>;

/** Runs the job's rounds; the outcome is the job's, its usage summed over every round. */
export async function runRounds(
  live: LiveJob,
  engine: Engine,
  first: TurnSpec,
  sink: TurnSink,
  deps: RoundDeps,
): Promise<TurnOutcome> {
  const record = live.record;
  const pricing = deps.config.pricing ?? {};
  // Tokens of the rounds that ended; the running one adds its own as it reports them.
  let before: Usage | undefined;
  const overBudget = (spent: Spent) => {
    const over = budgetExceeded(record.checks, record.model, spent, pricing);
    if (over && !live.stopReason) {
      live.stopReason = "budget";
      live.budgetExhausted = over;
      void live.turn?.stop(KILL_GRACE_MS);
    }
    return over !== undefined;
  };
  const budgets = record.checks?.budgetTokens !== undefined ||
    record.checks?.budgetUsd !== undefined;
  // The safe point: after a model response, before the tools it asks for run.
  const spent = budgets ? (soFar: Spent) => void overBudget(addSpent(before, soFar)) : undefined;
  const commands = record.checks?.verify ?? [];
  // Read before the delegate's turn: the manifests the check reads in part, as they were.
  const watch = commands.length > 0
    ? await CheckWatch.start(commands, first.cwd, first.options.addDirs)
    : undefined;
  if (watch) sink = watch.sink(sink);
  let outcome = await runTurn(live, engine, first, sink, deps.store, spent);
  before = outcome.usage;
  if (!watch) return outcome;
  const maxRepairs = Math.min(
    record.checks?.verifyRounds ?? DEFAULT_VERIFY_ROUNDS,
    MAX_VERIFY_ROUNDS,
  );
  const v: Verification = (record.verification = { rounds: [], verdict: "not-run" });
  const dir = deps.store.dirOf(record.id);
  const roots = [first.cwd, ...first.options.addDirs];
  // Inlined files are in the conversation already; a repair round does not send them again.
  const { files: _sent, ...options } = first.options;
  let repairs = 0;
  let previousKey: string | undefined;
  while (true) {
    if (!outcome.ok) {
      v.stopped = repairs === 0
        ? "the delegate's turn did not complete, so nothing was checked"
        : `repair round ${repairs} did not complete (${outcome.errorText ?? "no reason given"})`;
      break;
    }
    if (live.stopReason) break;
    const number = v.rounds.length + 1;
    const check = live.trace
      ? await live.trace.verify(number, () => runCheck(live, engine, first, commands, number, sink))
      : await runCheck(live, engine, first, commands, number, sink);
    const kept = keptRound(check);
    v.rounds.push(kept);
    if (check.confinement) v.confinement = check.confinement;
    v.verdict = check.passed ? "passed" : "failed";
    Object.assign(v, await watch.report(deps.earlier ?? []));
    sink.activity({ kind: "text", text: `[server] verification ${number}: ${checkLine(kept)}` });
    await writeFileAtomic(join(dir, `verify-${number}.log`), checkLog(number, check))
      .catch(() => {});
    await deps.store.write(record).catch(() => {});
    if (check.passed || live.stopReason) break;
    const key = failureKey(kept);
    if (repairs >= maxRepairs) {
      if (maxRepairs > 0) v.stopped = `all ${maxRepairs} repair rounds used`;
      break;
    }
    if (key === previousKey) {
      v.stopped = `the same failure came back after repair round ${repairs}`;
      break;
    }
    previousKey = key;
    // A repair round costs tokens: none starts once a budget is passed.
    if (budgets && overBudget(addSpent(outcome.usage, undefined))) break;
    const unchanged = await treeFingerprint(roots);
    repairs++;
    const promptPath = join(dir, `repair-${repairs}.txt`);
    await writeFileAtomic(promptPath, repairPrompt(check, repairs, maxRepairs));
    sink.activity({
      kind: "text",
      text: `[server] repair round ${repairs} of ${maxRepairs} starts with the failing output`,
    });
    const next = await runTurn(
      live,
      engine,
      {
        ...first,
        // The model the job moved to, when an earlier round fell back.
        model: record.model,
        options,
        resume: record.sessionCreated,
        previousDir: dir,
        promptPath,
      },
      sink,
      deps.store,
      spent,
    );
    outcome = combineOutcomes(outcome, next);
    before = outcome.usage;
    if (!next.ok || live.stopReason) continue;
    const after = await treeFingerprint(roots);
    if (unchanged !== undefined && unchanged === after) {
      v.stopped = `repair round ${repairs} changed no file`;
      break;
    }
  }
  // The last round may have changed files after the last check (a repair that failed).
  Object.assign(v, await watch.report(deps.earlier ?? []));
  await deps.store.write(record).catch(() => {});
  if (v.verdict !== "failed") return outcome;
  return { ...outcome, ok: false, errorText: verifyFailedText(v, outcome) };
}

/** The job's check, stoppable through `live.turn` like a turn (cancel, timeout, shutdown). */
async function runCheck(
  live: LiveJob,
  engine: Engine,
  spec: TurnSpec,
  commands: readonly string[],
  round: number,
  sink: TurnSink,
): Promise<CheckResult> {
  const controller = new AbortController();
  const done = engine.verify({
    jobId: spec.jobId,
    cwd: spec.cwd,
    ...(spec.worktree ? { worktree: spec.worktree } : {}),
    addDirs: spec.options.addDirs,
    commands,
    timeoutMs: VERIFY_COMMAND_TIMEOUT_MS,
    signal: controller.signal,
    dir: spec.dir,
    round,
    onSpawn: (pid) => sink.childStarted(pid),
  }).catch((e): CheckResult => ({
    passed: false,
    runs: [{
      command: commands[0] ?? "",
      exitCode: null,
      signal: null,
      durationMs: 0,
      timedOut: false,
      refused: `Cannot verify: ${errorMessage(e)}`,
      output: "",
      droppedChars: 0,
    }],
  }));
  const running: RunningTurn = {
    done: done.then(() => ({
      ok: true,
      resultText: "",
      exitCode: 0,
      signal: null,
      permissionDenials: [],
    })),
    async stop() {
      controller.abort();
      await done;
    },
  };
  live.turn = running;
  if (live.stopReason) controller.abort();
  try {
    return await done;
  } finally {
    if (live.turn === running) delete live.turn;
  }
}

/** The job's error when its verification failed: `verify_failed:` and the evidence. */
function verifyFailedText(v: Verification, outcome: TurnOutcome): string {
  const last = v.rounds.at(-1);
  const repairs = v.rounds.length - 1;
  const line = last ? checkLine(last) : "failed";
  const after = repairs > 0 ? ` after ${repairs} repair round${repairs === 1 ? "" : "s"}` : "";
  const stopped = v.stopped ? `; ${v.stopped}` : "";
  const backend = outcome.ok ? "" : `; ${outcome.errorText ?? ""}`;
  return `verify_failed: ${line}${after}${stopped}${stopped ? "" : backend}. The work does not ` +
    "pass its check: read the verify output, then follow up or fix it yourself";
}
