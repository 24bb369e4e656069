import { parseArgs } from "node:util";
import { costOf, jobCostText } from "../../jobs/spend/cost.ts";
import { isJobError } from "../../jobs/errors.ts";
import { JOB_STATES, type JobRecord, type JobState } from "../../jobs/record.ts";
import { elapsedMs, jobTotalTokens } from "../../jobs/job_figures.ts";
import { escapeLine, quotePath } from "../../platform/plain_text.ts";
import { listPage } from "../../jobs/list_page.ts";
import {
  type CliIo,
  compactCount,
  humanDuration,
  jobProblemExitCode,
  jobProblemText,
  type JobsContext,
  JobsUsageError,
  oneLine,
  openContext,
  parseCount,
  processIo,
  styleFor,
} from "./common.ts";

export const JOBS_HELP = `Usage: ollama-delegate jobs [command] [options]

See and manage delegated jobs from a terminal. Jobs live in the state dir (stateDir,
OLLAMA_MCP_STATE_DIR); every server process of this user shares it.

Commands:
  (none)                 table of jobs, newest conversation first
      --all                  every job (default: the newest 20)
      --limit <n>            the newest n jobs
      --state <state>        only queued, running, completed, failed, cancelled or interrupted
      --by endpoint          one row per endpoint that served the jobs: how many ran there,
                             how they ended, tokens, busy time, and how many follow-up turns
                             kept their session's endpoint or moved to it
  show <id>              one job: its record, prompt, the head of its result, its files
  tail <id>              follow a job's activity until it ends, then print its result
      -n, --lines <n>        earlier activity lines to show first (default 10)
      --no-status            no live status line (only a terminal gets one)
  cancel <id>            stop a job, also one another server process runs
      --wait <seconds>       how long to wait for it to stop (default 15)
      --no-status            no live "waiting" line
  prune                  remove finished jobs and Claude Code's transcripts of them (their
                         usage stays counted by usage)
      --older-than <age>     90m, 12h, 7d, 2w... (default: retainDays from settings)
      --dry-run              only say what would be removed
  usage                  tokens and cost per model and per day
      --days <n>             the last n days, today included (default 30; 0 = all)

Options for every command:
  --json                 machine-readable output (not for tail)
  -h, --help             show this help

<id> is a job id, or a unique prefix of it of at least 4 characters (the ID column shows
8). Colour appears only on a terminal, and never when NO_COLOR is set (FORCE_COLOR overrides
both); live status lines appear only on a terminal, and never with --no-status.`;

const SUBCOMMANDS = ["list", "show", "tail", "cancel", "prune", "usage"] as const;

/** `ollama-delegate jobs ...`; returns the exit code. */
export async function jobsMain(argv: string[], io: CliIo = processIo()): Promise<number> {
  const first = argv[0];
  const sub = first !== undefined && (SUBCOMMANDS as readonly string[]).includes(first)
    ? first
    : "list";
  const rest = sub === "list" && first !== "list" ? argv : argv.slice(1);
  try {
    if (rest.includes("--help") || rest.includes("-h")) {
      io.out(JOBS_HELP);
      return 0;
    }
    if (first !== undefined && !first.startsWith("-") && sub === "list" && first !== "list") {
      // `jobs 1a2b3c4d` is most likely a wish to see that job.
      const hint = /^[0-9a-f-]{4,36}$/i.test(first)
        ? `to see a job, run ollama-delegate jobs show ${first}`
        : "run ollama-delegate jobs --help";
      throw new JobsUsageError(`Unknown jobs command "${first}": ${hint}`);
    }
    const ctx = openContext(io);
    // Each command's modules load when it runs: the table, the most used, loads the fewest.
    // Static specifiers, so that `deno compile` and the Node bundle include them.
    switch (sub) {
      case "show":
        return await (await import("./show.ts")).jobsShow(ctx, rest, io);
      case "tail":
        return await (await import("./tail.ts")).jobsTail(ctx, rest, io);
      case "cancel":
        return await (await import("./cancel.ts")).jobsCancel(ctx, rest, io);
      case "prune":
        return await (await import("./prune.ts")).jobsPrune(ctx, rest, io);
      case "usage":
        return await (await import("./prune.ts")).jobsUsage(ctx, rest, io);
      default:
        return await jobsList(ctx, rest, io);
    }
  } catch (e) {
    if (e instanceof JobsUsageError) {
      io.err(`ollama-delegate jobs: ${e.message}`);
      return e.exitCode;
    }
    if (isJobError(e)) {
      io.err(`ollama-delegate jobs: ${jobProblemText(e.problem)}`);
      return jobProblemExitCode(e.problem);
    }
    if (e instanceof TypeError && (e as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
      io.err(`ollama-delegate jobs: ${e.message}. Run ollama-delegate jobs --help`);
      return 2;
    }
    io.err(`ollama-delegate jobs: ${(e as Error).message}`);
    return 1;
  }
}

async function jobsList(ctx: JobsContext, argv: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      all: { type: "boolean" },
      limit: { type: "string" },
      state: { type: "string" },
      by: { type: "string" },
      json: { type: "boolean" },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.by !== undefined && values.by !== "endpoint") {
    throw new JobsUsageError(`Cannot group by "${values.by}": jobs --by takes endpoint`);
  }
  const state = values.state as JobState | undefined;
  if (state !== undefined && !JOB_STATES.includes(state)) {
    throw new JobsUsageError(`Unknown state "${state}": use one of ${JOB_STATES.join(", ")}`);
  }
  const limit = values.all ? Infinity : parseCount("limit", values.limit) ?? 20;
  const pricing = ctx.settings.pricing;
  if (values.by === "endpoint") {
    // Figures cover every matching job unless --limit says otherwise.
    const [{ listRecords }, { renderEndpointTable }] = await Promise.all([
      import("../../jobs/job_reads.ts"),
      import("./endpoints.ts"),
    ]);
    const { records } = await listRecords(ctx.recovery);
    const matching = records.filter((r) => state === undefined || r.state === state);
    const counted = values.limit === undefined ? matching : matching.slice(0, limit);
    io.out(renderEndpointTable(ctx.store.stateDir, counted, io, values.json === true));
    return 0;
  }
  // Only the rows shown are read from their folders (jobs/list_page.ts).
  const { records: picked, total, corrupt } = await listPage(ctx.recovery, {
    ...(state !== undefined ? { state } : {}),
    limit,
  });
  if (values.json) {
    io.out(JSON.stringify(
      {
        stateDir: ctx.store.stateDir,
        total,
        jobs: picked.map((r) => ({ ...r, cost: costOf(r, pricing) })),
        corrupt,
      },
      null,
      2,
    ));
    return 0;
  }
  io.out(renderJobsTable(ctx.store.stateDir, picked, total, corrupt, io, pricing));
  return 0;
}

const HEAD = ["ID", "STATE", "ENGINE", "MODEL", "TURN", "ELAPSED", "TOKENS", "COST"] as const;

/**
 * The `jobs` table: conversations newest first, each headed by its session id, its turns in
 * order. Plain text with fixed columns unless the output is a terminal. ID is the first 8
 * characters of the job id, which every `jobs` command accepts.
 */
export function renderJobsTable(
  stateDir: string,
  picked: readonly JobRecord[],
  total: number,
  corrupt: ReadonlyArray<{ id: string; reason: string }>,
  io: CliIo,
  pricing: Parameters<typeof jobCostText>[1],
  now = Date.now(),
): string {
  const style = styleFor(io);
  const out: string[] = [];
  if (picked.length === 0) {
    out.push(`No jobs in ${stateDir}.`);
  } else {
    const sessions = new Map<string, JobRecord[]>();
    for (const r of picked) {
      const turns = sessions.get(r.sessionId) ?? [];
      turns.push(r);
      sessions.set(r.sessionId, turns);
    }
    const groups = [...sessions.values()].map((turns) =>
      [...turns].sort((a, b) => a.turn - b.turn).map((r) => ({
        record: r,
        cells: [
          r.id.slice(0, 8),
          r.state,
          r.engine,
          escapeLine(r.model),
          String(r.turn),
          humanDuration(elapsedMs(r, now)),
          r.usage ? compactCount(jobTotalTokens(r)) : "-",
          jobCostText(r, pricing),
        ],
      }))
    );
    const widths = HEAD.map((h, i) =>
      Math.max(h.length, ...groups.flat().map((row) => row.cells[i]!.length))
    );
    const fixed = widths.reduce((a, w) => a + w + 2, 2);
    // Piped output keeps a fixed prompt width, so scripts see the same text on any terminal.
    const promptWidth = io.columns === undefined ? 60 : Math.max(20, io.columns - fixed - 1);
    const pad = (cells: readonly string[]) => cells.map((c, i) => c.padEnd(widths[i]!));
    out.push(style.bold(`  ${pad(HEAD).join("  ")}  PROMPT`));
    for (const rows of groups) {
      const first = rows[0]!.record;
      const wt = rows.at(-1)!.record.worktree;
      const isolated = wt
        ? `  branch ${escapeLine(wt.branch)}  worktree ${quotePath(wt.path)}`
        : "";
      out.push(style.dim(`session ${first.sessionId}  cwd ${quotePath(first.cwd)}${isolated}`));
      for (const { record, cells } of rows) {
        const padded = pad(cells);
        // Colour the padded state cell only, so the columns stay aligned.
        padded[1] = style.state(record.state, padded[1]!);
        out.push(`  ${padded.join("  ")}  ${oneLine(record.promptPreview, promptWidth)}`.trimEnd());
      }
    }
    out.push(
      "",
      `${picked.length} of ${total} job${total === 1 ? "" : "s"} in ${sessions.size} ` +
        `conversation${sessions.size === 1 ? "" : "s"}, newest first. State dir: ${stateDir}`,
    );
    const more = total - picked.length;
    if (more > 0) {
      out.push(
        `${more} older job${more === 1 ? "" : "s"} not shown: --limit <n> or --all shows ` +
          `${more === 1 ? "it" : "them"}.`,
      );
    }
  }
  if (corrupt.length > 0) {
    out.push("", "Unreadable job records (skipped):");
    for (const c of corrupt) out.push(`  ${c.id}: ${escapeLine(c.reason)}`);
  }
  return out.join("\n");
}
