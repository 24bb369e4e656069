import { formatElapsed } from "../../platform/duration.ts";
import { parseArgs } from "node:util";
import { setTimeout as delay } from "node:timers/promises";
import { escapeLine } from "../../platform/plain_text.ts";
import { selfIdentity } from "../../platform/process_identity.ts";
import { isTerminal, type JobRecord } from "../../jobs/record.ts";
import {
  type CliIo,
  type JobsContext,
  JobsUsageError,
  noMoreArguments,
  parseCount,
  resolveJobId,
  styleFor,
} from "./common.ts";

/** The owning server checks for a request every 0.5 s and gives a delegate 3 s to stop. */
const DEFAULT_WAIT_S = 15;

export interface CancelOutcome {
  id: string;
  /** What the record said before anything was done. */
  before: JobRecord["state"];
  after: JobRecord["state"];
  /**
   * already-finished: nothing to do; owner-gone: its server had died, so reading it marked it
   * interrupted; cancelled: the owning server stopped it; still-running: no answer in time.
   */
  outcome: "already-finished" | "owner-gone" | "cancelled" | "ended-otherwise" | "still-running";
  ownerPid?: number;
  waitedMs: number;
}

/**
 * `jobs cancel ID`: asks the server process that runs the job to stop it, through the
 * job's folder (`cancel.request`), and waits until the record says it ended.
 */
export async function jobsCancel(ctx: JobsContext, argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      json: { type: "boolean" },
      wait: { type: "string" },
      "no-status": { type: "boolean" },
    },
    strict: true,
    allowPositionals: true,
  });
  const waitS = parseCount("wait", values.wait, 0) ?? DEFAULT_WAIT_S;
  const id = await resolveJobId(ctx.store, positionals[0], "jobs cancel <id>");
  noMoreArguments("jobs cancel", positionals.slice(1));
  const live = io.live && values["no-status"] !== true && values.json !== true;
  const raw = await ctx.store.read(id);
  if (raw.kind === "missing") throw new JobsUsageError(`No job ${id} in ${ctx.store.stateDir}`, 1);
  if (raw.kind === "corrupt") throw new Error(`Cannot read job ${id}: ${raw.reason}`);
  const before = raw.record.state;
  const ownerPid = raw.record.owner?.pid;
  const started = Date.now();
  const done = (outcome: CancelOutcome["outcome"], record: JobRecord): CancelOutcome => ({
    id,
    before,
    after: record.state,
    outcome,
    ...(ownerPid !== undefined ? { ownerPid } : {}),
    waitedMs: Date.now() - started,
  });

  // Reading through the manager marks a job whose server died as interrupted.
  const manager = await ctx.manager();
  let record = (await manager.get(id)).record;
  let result: CancelOutcome;
  if (isTerminal(before)) result = done("already-finished", record);
  else if (isTerminal(record.state)) result = done("owner-gone", record);
  else {
    await ctx.store.requestCancel(id, await selfIdentity(), "terminal");
    const deadline = started + waitS * 1000;
    const style = styleFor(io);
    while (!isTerminal(record.state) && Date.now() < deadline) {
      if (live) {
        io.write(`\r\x1b[2K${style.dim(`waiting for pid ${ownerPid ?? "?"} to stop the job…`)}`);
      }
      await delay(250);
      record = (await manager.get(id)).record;
    }
    if (live) io.write("\r\x1b[2K");
    result = !isTerminal(record.state) ? done("still-running", record) : done(
      record.state === "cancelled" ? "cancelled" : record.state === "interrupted" &&
          /stopped before it finished/.test(record.errorText ?? "")
        ? "owner-gone"
        : "ended-otherwise",
      record,
    );
  }

  if (values.json) io.out(JSON.stringify(result, null, 2));
  else io.out(cancelMessage(result, record));
  return result.outcome === "still-running" ? 1 : 0;
}

function cancelMessage(r: CancelOutcome, record: JobRecord): string {
  const seconds = formatElapsed(r.waitedMs);
  switch (r.outcome) {
    case "already-finished":
      return `Job ${r.id} had already ended (${r.before}); nothing to cancel.`;
    case "owner-gone":
      return `Job ${r.id}: the server that ran it (pid ${r.ownerPid ?? "?"}) is gone, so it is ` +
        `now recorded as interrupted and any delegate it left was stopped.`;
    case "cancelled":
      return `Job ${r.id} cancelled in ${seconds} by its server (pid ${r.ownerPid ?? "?"}); ` +
        `its delegate processes are stopped.`;
    case "ended-otherwise":
      return `Job ${r.id} ended as ${record.state} before the cancel took effect` +
        (record.errorText ? `: ${escapeLine(record.errorText)}` : ".");
    case "still-running":
      return `Asked server pid ${r.ownerPid ?? "?"} to cancel job ${r.id}, but it is still ` +
        `${record.state} after ${seconds}. The request stays in place; check again with ` +
        `ollama-delegate jobs show ${r.id.slice(0, 8)}`;
  }
}
