/**
 * `ollama-delegate unread`: the delegations of a project that ended without their result
 * reaching the orchestrator (jobs/unread.ts). `--hook` is the plugin's UserPromptSubmit hook
 * (plugins/ollama-delegate/hooks/unread_results.cjs starts it only when the project's folder
 * of markers names a job): it tells Claude Code, once each, one line per such delegation as
 * context for the prompt being submitted, and says nothing when there is nothing to tell.
 *
 * What it hands Claude Code is the server's own words (state, verdict, counts) and the start
 * of the orchestrator's own prompt, escaped; never a delegate's output, which the orchestrator
 * reads with delegate_result when it chooses to.
 */
import { parseArgs } from "node:util";
import { errorMessage } from "../../errors.ts";
import { isErrorState, type JobRecord } from "../../jobs/record.ts";
import { JobStore } from "../../jobs/store.ts";
import { claimUntold, forgetMissing, unreadOf } from "../../jobs/unread.ts";
import { stateWithVerdict } from "../../jobs/checks/verify_words.ts";
import { flattenLine } from "../../platform/plain_text.ts";
import { formatProblems, loadSettings } from "../../settings/load.ts";
import { type CliIo, JobsUsageError, processIo } from "../jobs/common.ts";
import { readStdin } from "./hook_input.ts";

export const UNREAD_HELP = `Usage: ollama-delegate unread [--hook]

The delegations started from this project's Claude Code sessions that ended without their
result reaching the session: a background task it did not collect, a delegate_start whose job
was never fetched, a job interrupted when its session ended. Read one with delegate_result, or
ollama-delegate jobs show <id>.

Options:
  --hook   run as the plugin's UserPromptSubmit hook: read Claude Code's hook input on stdin,
           and tell the session, once each, the ones it was not told of yet`;

/** Lines told at one prompt; the rest wait for the next one. */
const MAX_TOLD = 10;

/** One line for a delegation that ended unread: what it was, how it ended, what to call. */
export function unreadLine(r: JobRecord): string {
  const id = r.id.slice(0, 8);
  const prompt = flattenLine(r.promptPreview);
  const shown = prompt.length > 60 ? `${prompt.slice(0, 60)}…` : prompt;
  const why = isErrorState(r.state) && r.errorText
    ? `: ${flattenLine(r.errorText).slice(0, 160)}`
    : "";
  const files = r.changedFiles?.length
    ? `, ${r.changedFiles.length + (r.changedFilesMore ?? 0)} file(s) changed`
    : "";
  const next = r.state === "interrupted"
    ? `delegate_followup({ job_id: "${id}", prompt }) continues its session; ` +
      `delegate_result({ job_id: "${id}" }) shows what it did`
    : `delegate_result({ job_id: "${id}" }) reads it`;
  return `- job ${id} "${shown}" ${stateWithVerdict(r, r.state)}${files}${why}. ${next}`;
}

/** What the hook tells: a head line and one line per delegation; empty for none. */
export function unreadText(records: readonly JobRecord[], more: number): string {
  if (records.length === 0) return "";
  const n = records.length + more;
  return [
    `ollama-delegate: ${n} delegation${n === 1 ? "" : "s"} ended since your last message ` +
    "without the result reaching you:",
    ...records.map(unreadLine),
    ...(more > 0 ? [`(+${more} more: delegate_list marks them [unread])`] : []),
  ].join("\n");
}

interface HookOptions {
  /** The hook's input, as Claude Code writes it on stdin. */
  readInput(): Promise<string>;
}

export async function unreadMain(
  argv: string[],
  io: CliIo = processIo(),
  hook: HookOptions = { readInput: readStdin },
): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: { hook: { type: "boolean" }, help: { type: "boolean", short: "h" } },
      strict: true,
      allowPositionals: false,
    }));
  } catch (e) {
    io.err(`ollama-delegate unread: ${errorMessage(e)}. See ollama-delegate unread --help`);
    return 2;
  }
  if (values.help) {
    io.out(UNREAD_HELP);
    return 0;
  }
  try {
    return values.hook ? await tell(io, hook) : await list(io);
  } catch (e) {
    // A hook that fails must not stand between the user and their prompt: it says why, once.
    io.err(`ollama-delegate unread: ${errorMessage(e)}`);
    return e instanceof JobsUsageError ? e.exitCode : values.hook ? 0 : 1;
  }
}

/** The project the hook runs for: Claude Code's project dir, else the input's cwd. */
function projectOf(io: CliIo, input: Record<string, unknown>): string {
  const dir = io.env.CLAUDE_PROJECT_DIR?.trim();
  if (dir) return dir;
  return typeof input.cwd === "string" && input.cwd !== "" ? input.cwd : io.cwd;
}

async function tell(io: CliIo, hook: HookOptions): Promise<number> {
  let input: Record<string, unknown> = {};
  try {
    const raw = JSON.parse(await hook.readInput());
    if (typeof raw === "object" && raw !== null && !Array.isArray(raw)) input = raw;
  } catch {
    // Without its input the project is still Claude Code's (CLAUDE_PROJECT_DIR) or the cwd.
  }
  const project = projectOf(io, input);
  const store = storeOf(io, project);
  const { untold } = await unreadOf(store.stateDir, project);
  if (untold.length === 0) return 0;
  await forgetMissing(store.stateDir, project, untold);
  const records: JobRecord[] = [];
  for (const id of untold) {
    const read = await store.read(id).catch(() => undefined);
    if (read?.kind === "ok") records.push(read.record);
  }
  records.sort((a, b) => (a.endedAt ?? a.createdAt) - (b.endedAt ?? b.createdAt));
  const told: JobRecord[] = [];
  for (const r of records.slice(0, MAX_TOLD)) {
    if (await claimUntold(store.stateDir, project, r.id.toLowerCase())) told.push(r);
  }
  const text = unreadText(told, Math.max(0, records.length - MAX_TOLD));
  if (text === "") return 0;
  io.out(JSON.stringify({
    hookSpecificOutput: { hookEventName: "UserPromptSubmit", additionalContext: text },
  }));
  return 0;
}

async function list(io: CliIo): Promise<number> {
  const store = storeOf(io, io.cwd);
  const { untold, told } = await unreadOf(store.stateDir, io.cwd);
  const records: JobRecord[] = [];
  for (const id of [...untold, ...told]) {
    const read = await store.read(id).catch(() => undefined);
    if (read?.kind === "ok") records.push(read.record);
  }
  if (records.length === 0) {
    io.out("No delegation of this project ended unread.");
    return 0;
  }
  records.sort((a, b) => (a.endedAt ?? a.createdAt) - (b.endedAt ?? b.createdAt));
  io.out(`${records.length} delegation(s) of this project ended unread:`);
  for (const r of records) io.out(unreadLine(r));
  return 0;
}

function storeOf(io: CliIo, project: string): JobStore {
  const resolved = loadSettings({ env: io.env, cwd: project, home: io.home });
  for (const line of formatProblems(resolved.problems)) io.err(`ollama-delegate: ${line}`);
  return new JobStore(resolved.settings.stateDir);
}
