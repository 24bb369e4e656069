/**
 * A review run from the terminal (`ollama-delegate review`, and the Claude Code Stop hook's
 * `review --gate`): the same settings, job layer, agents and directory policy as the MCP
 * server in that directory, the same start (src/review/start.ts), then a wait until every
 * reviewer has ended. Its jobs are ordinary jobs in the state dir: the jobs console shows
 * them, usage counts them, and the shared lines hold them to maxConcurrent.
 */
import { homedir } from "node:os";
import { dirname } from "node:path";
import { DelegateError } from "../../errors.ts";
import { intakeHost } from "../../intake/host.ts";
import { judgeWorkdir, ruleName, type WorkdirPolicy } from "../../guard/workdirs.ts";
import { prepareStateDir } from "../../jobs/job_folder.ts";
import { isTerminal } from "../../jobs/record.ts";
import { type Runtime, runtimeLoader } from "../../jobs/runtime.ts";
import { type ReviewOutcome, reviewOutcome } from "../../review/outcome.ts";
import { type ReviewHost, type ReviewRequest, startReview } from "../../review/start.ts";
import type { ResolvedSettings } from "../../settings/load.ts";

/** The review's time ran out: its reviewers were stopped. */
export class ReviewTimeout extends Error {
  override name = "ReviewTimeout";
}

/** Checks a directory as delegate_review does: it exists and the workdir policy allows it. */
async function allowedDir(path: string, what: string, policy: WorkdirPolicy): Promise<string> {
  let verdict;
  try {
    verdict = await judgeWorkdir(path, policy);
  } catch (e) {
    throw new DelegateError(`Cannot review in ${what} "${path}": ${(e as Error).message}`);
  }
  const r = verdict.refusal;
  if (r) {
    throw new DelegateError(
      `Cannot review in ${what} "${r.path}": ${r.reason} (${ruleName(r.rule)}). Run it in a ` +
        "project directory, or change workspaceRoots with ollama-delegate config --workspace-root",
    );
  }
  return verdict.real;
}

/** The job layer for reviews run from `cwd`, as a server started there would have it. */
export async function reviewRuntime(
  resolved: ResolvedSettings,
  env: Record<string, string | undefined>,
  cwd: string,
  log: (line: string) => void,
): Promise<{ runtime: Runtime; host: ReviewHost }> {
  const s = resolved.settings;
  prepareStateDir(s.stateDir);
  const userConfigDir = dirname(resolved.locations.userFile);
  const workdirs: WorkdirPolicy = { home: homedir(), workspaceRoots: s.workspaceRoots };
  const runtime = await runtimeLoader(
    { settings: s, env, serverCwd: cwd, userConfigDir, workdirs },
    log,
  ).get();
  const host: ReviewHost = {
    ...intakeHost({
      resolved,
      runtime: () => Promise.resolve(runtime),
      baseDir: cwd,
      workdirs,
      places: { projectDir: cwd, userConfigDir },
    }),
    allowedDir: (path, what) => allowedDir(path, what, workdirs),
  };
  return { runtime, host };
}

/**
 * Starts the review and waits for every reviewer, at most `timeoutMs` (then, or when `signal`
 * aborts, the reviewers still running are stopped and ReviewTimeout or the abort is thrown).
 */
export async function runReview(
  host: ReviewHost,
  req: ReviewRequest,
  options: { timeoutMs: number; signal?: AbortSignal },
): Promise<ReviewOutcome> {
  const { manager, store } = await host.runtime();
  const cwd = await allowedDir(req.cwd, "the directory", host.workdirs);
  const started = await startReview(host, { ...req, cwd });
  const deadline = Date.now() + options.timeoutMs;
  let views = started.views;
  while (views.some((v) => !isTerminal(v.record.state))) {
    const left = deadline - Date.now();
    if (left <= 0 || options.signal?.aborted) {
      const why = options.signal?.aborted
        ? "the review was interrupted"
        : `the review's time limit of ${Math.round(options.timeoutMs / 1000)} s`;
      const late = views.filter((v) => !isTerminal(v.record.state)).length;
      await manager.shutdown(why);
      if (options.signal?.aborted) throw options.signal.reason;
      throw new ReviewTimeout(
        `${late} of ${views.length} reviewers had not answered within ` +
          `${Math.round(options.timeoutMs / 1000)} s`,
      );
    }
    const seconds = Math.max(0.5, Math.min(left / 1000, 600));
    views = await Promise.all(
      views.map((v) =>
        isTerminal(v.record.state)
          ? v
          : manager.wait(v.record.id, seconds, options.signal ? { signal: options.signal } : {})
      ),
    );
  }
  return await reviewOutcome({ get: (id) => manager.get(id), store }, started.record, views);
}
