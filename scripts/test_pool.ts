/**
 * Runs the test suite's jobs (a `deno test` of one file or of a few small ones, the type check,
 * the npm package's install) as child processes, a fixed number at once, longest expected first.
 *
 * Why not `deno test --parallel` over the whole tree: it starts files in path order, so a file
 * that takes 40 s could start last and run alone while the other slots sat idle; the Node pass
 * then waited for all of it. Here every job of both passes is in one pool, ordered by the time
 * its files took before (tests/durations.json), so the long ones start first and the short ones
 * fill the gaps. Each job's output is held and printed whole when it ends, so the log reads file
 * by file even with four running at once.
 */
import { spawn } from "node:child_process";
import process from "node:process";

/** One unit of work in the pool. */
export interface PoolJob {
  /** Shown in the log: a file, or what the job does. */
  label: string;
  /** The pass the job belongs to; a failure fails that pass. */
  pass: string;
  /** Seconds the job is expected to take, for ordering (longest first). */
  cost: number;
  /**
   * The share of one core the job is expected to keep busy (its CPU time over its wall time),
   * for `Slots.cores`; unknown is taken as 0.5.
   */
  load?: number;
  /**
   * Runs with no other job beside it, for a test that measures against a bound it does not own,
   * such as Claude Code's few seconds for a server's first answer. It starts before every other
   * job once its needs have passed: waiting for the pool to empty at the end of a run left a
   * core idle while the last other jobs drained (7 s of 560 in one run), then the job ran
   * alone on top of that.
   */
  exclusive?: boolean;
  /**
   * May run beside an exclusive job: a short job of one process that the pool would otherwise
   * start right after it (the npm package's build and install), or one that mostly waits
   * (scripts/test.ts BESIDE_EXCLUSIVE_LOAD), so that the exclusive job's seconds do not leave
   * the other core idle (11.6 s at the start of a run). Still held to `slots`.
   */
  besideExclusive?: boolean;
  /** Jobs that must pass before this one starts; if one fails, this one is skipped. */
  needs?: PoolJob[];
  /** The command to run, asked for when the job starts (so it can use what a need produced). */
  command(): { argv: string[]; env?: Record<string, string>; cwd?: string };
  /** Called with the job's output once it passed (e.g. to read a path it printed). */
  done?(output: string): void;
}

export interface PoolResult {
  job: PoolJob;
  status: "ok" | "failed" | "skipped";
  seconds: number;
  /** CPU seconds of the job's processes (with `measureCpu`, on POSIX). */
  cpuSeconds?: number;
  output: string;
  /** Why a skipped job did not run. */
  reason?: string;
}

/** At most this much of a job's output is kept, its end (where failures are summarised). */
const KEEP_OUTPUT = 4 * 1024 * 1024;

/** What a job needs before it, and the longest chain of work that waits on it. */
function priorities(jobs: PoolJob[]): Map<PoolJob, number> {
  const after = new Map<PoolJob, PoolJob[]>();
  for (const job of jobs) {
    for (const need of job.needs ?? []) after.set(need, [...(after.get(need) ?? []), job]);
  }
  const memo = new Map<PoolJob, number>();
  const chain = (job: PoolJob): number => {
    const known = memo.get(job);
    if (known !== undefined) return known;
    const rest = Math.max(0, ...(after.get(job) ?? []).map(chain));
    memo.set(job, job.cost + rest);
    return job.cost + rest;
  };
  for (const job of jobs) chain(job);
  return memo;
}

/** Kills a job's whole process group: its `deno test` and every server and delegate under it. */
function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // Already gone.
  }
}

/**
 * The command run under `sh`, whose `times` prints the CPU time of everything the command
 * waited for once it ends (Node gives no child's resource use).
 */
const TIMED = ["sh", "-c", '"$@"; s=$?; times; exit $s', "sh"];
const TIMES_LINES = /(?:^|\n)\d+m[\d.]+s \d+m[\d.]+s\n(\d+)m([\d.]+)s (\d+)m([\d.]+)s\n?$/;

function runOne(job: PoolJob, running: Set<number>, measureCpu: boolean): Promise<PoolResult> {
  const t0 = performance.now();
  const { argv: plain, env, cwd } = job.command();
  const timed = measureCpu && process.platform !== "win32";
  const [command, ...args] = timed ? [...TIMED, ...plain] : plain;
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let kept = 0;
    const keep = (chunk: Buffer) => {
      chunks.push(chunk);
      kept += chunk.length;
      while (kept > KEEP_OUTPUT && chunks.length > 1) kept -= chunks.shift()!.length;
    };
    const child = spawn(command!, args, {
      cwd,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
      // A group of its own, so that an interrupted run can stop everything the job started.
      detached: true,
    });
    if (child.pid !== undefined) running.add(child.pid);
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    const finish = (ok: boolean, extra = "") => {
      if (child.pid !== undefined) running.delete(child.pid);
      let output = Buffer.concat(chunks).toString("utf8");
      let cpuSeconds: number | undefined;
      const times = timed ? TIMES_LINES.exec(output) : null;
      if (times) {
        const [m1, s1, m2, s2] = times.slice(1).map(Number) as [number, number, number, number];
        cpuSeconds = m1 * 60 + s1 + m2 * 60 + s2;
        output = output.slice(0, times.index) + (times[0].startsWith("\n") ? "\n" : "");
      }
      resolve({
        job,
        status: ok ? "ok" : "failed",
        seconds: (performance.now() - t0) / 1000,
        ...(cpuSeconds !== undefined ? { cpuSeconds } : {}),
        output: output + extra,
      });
    };
    child.on("error", (e) => finish(false, `\ncould not start ${command}: ${e.message}\n`));
    child.on("close", (code, signal) => {
      finish(code === 0, code === 0 ? "" : `\n(${command} exited with ${signal ?? code})\n`);
    });
  });
}

/**
 * How many jobs run at once: a number, or by load: at least `min`, at most `max`, and beyond
 * `min` only while the expected loads of those running leave room on `cores`. Many of the
 * longest test files mostly wait (on a backend that is down on purpose, a lease, a timer), so
 * a fixed number either leaves the cores idle while those run or crowds them while the busy
 * ones do.
 */
export type Slots = number | { min: number; max: number; cores: number };

/** The load of a job that has no figure yet. */
const UNKNOWN_LOAD = 0.5;

function roomFor(slots: Slots, running: PoolJob[], job: PoolJob): boolean {
  if (job.exclusive) return running.every((j) => j.besideExclusive === true);
  if (running.some((j) => j.exclusive) && job.besideExclusive !== true) return false;
  if (typeof slots === "number") return running.length < slots;
  if (running.length < slots.min) return true;
  if (running.length >= slots.max) return false;
  const load = (j: PoolJob) => j.load ?? UNKNOWN_LOAD;
  return running.reduce((sum, j) => sum + load(j), 0) + load(job) <= slots.cores;
}

/**
 * Runs every job, as many at once as `slots` allows, and returns their results in the order
 * they ended. `report` is called as each one ends (or is skipped).
 */
export async function runPool(
  jobs: PoolJob[],
  slots: Slots,
  report: (result: PoolResult, left: number) => void,
  measureCpu = false,
): Promise<PoolResult[]> {
  const rank = priorities(jobs);
  const waiting = [...jobs].sort((a, b) =>
    Number(b.exclusive === true) - Number(a.exclusive === true) ||
    rank.get(b)! - rank.get(a)! || a.label.localeCompare(b.label)
  );
  const results = new Map<PoolJob, PoolResult>();
  const ended: PoolResult[] = [];
  const active = new Map<PoolJob, Promise<PoolResult>>();
  const pids = new Set<number>();
  const stop = () => {
    for (const pid of pids) killGroup(pid);
    process.exit(130);
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  const end = (result: PoolResult) => {
    results.set(result.job, result);
    ended.push(result);
    report(result, jobs.length - ended.length);
  };
  try {
    while (waiting.length > 0 || active.size > 0) {
      // Skip what can no longer run; start what can, best first.
      for (let i = 0; i < waiting.length;) {
        const job = waiting[i]!;
        const failed = (job.needs ?? []).find((n) => {
          const r = results.get(n);
          return r !== undefined && r.status !== "ok";
        });
        if (failed) {
          waiting.splice(i, 1);
          end({ job, status: "skipped", seconds: 0, output: "", reason: `${failed.label} failed` });
          continue;
        }
        const ready = (job.needs ?? []).every((n) => results.get(n)?.status === "ok");
        if (ready && roomFor(slots, [...active.keys()], job)) {
          waiting.splice(i, 1);
          active.set(job, runOne(job, pids, measureCpu));
          continue;
        }
        i++;
      }
      if (active.size === 0) break;
      const result = await Promise.race(active.values());
      active.delete(result.job);
      if (result.status === "ok") {
        try {
          result.job.done?.(result.output);
        } catch (e) {
          result.status = "failed";
          result.output += `\n${(e as Error).message}\n`;
        }
      }
      end(result);
    }
  } finally {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
  }
  return ended;
}

/**
 * The ERRORS part of a failed `deno test` run (each failed test's assertion and where), without
 * colour and at most `maxLines` lines: printed again at the run's end, so a log read from its
 * tail (a CI page) shows why a job failed, not only that it did.
 */
export function failureDigest(output: string, maxLines = 40): string {
  // deno-lint-ignore no-control-regex
  const plain = output.replace(/\x1b\[[0-9;]*m/g, "");
  const from = plain.indexOf(" ERRORS \n");
  const to = plain.indexOf(" FAILURES \n", from);
  const part = from < 0
    ? plain.trimEnd().split("\n").slice(-maxLines).join("\n")
    : plain.slice(from + " ERRORS \n".length, to < 0 ? undefined : to).trim();
  const lines = part.split("\n");
  return lines.length <= maxLines
    ? part
    : [...lines.slice(0, maxLines), `... (${lines.length - maxLines} more lines above in the log)`]
      .join("\n");
}

/** What one `deno test` run printed as its total, read from its summary line. */
export interface TestCounts {
  passed: number;
  failed: number;
  ignored: number;
}

/** The counts in a `deno test` run's last summary line (`ok | 12 passed | 0 failed ...`). */
export function testCounts(output: string): TestCounts | undefined {
  // deno colours its summary; the codes would split the numbers from their words.
  // deno-lint-ignore no-control-regex
  const plain = output.replace(/\x1b\[[0-9;]*m/g, "");
  const lines = [
    ...plain.matchAll(
      /^(?:ok|FAILED) \| (\d+) passed[^|]*\| (\d+) failed[^|\n]*(?:\| (\d+) ignored)?/gm,
    ),
  ];
  const last = lines.at(-1);
  if (!last) return undefined;
  return { passed: Number(last[1]), failed: Number(last[2]), ignored: Number(last[3] ?? 0) };
}
