/**
 * `ollama-delegate doctor --try "<command>"`: runs a command in the current project exactly as
 * each engine runs a job's `verify` there (the same sandbox as the delegate's Bash: the native
 * engine's bubblewrap, the claude engine's jail with what Claude Code's sandbox adds), and
 * prints its output and exit code per engine, with what of the user's toolchains it could
 * read. The user's one-line answer to "can my delegates run my tests?".
 */
import { formatElapsed } from "../../platform/duration.ts";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createEngines, engineNames } from "../../engines/registry.ts";
import type { CheckRun } from "../../engines/types.ts";
import { judgeWorkdir, ruleName, type WorkdirPolicy } from "../../guard/workdirs.ts";
import { escapeLine, quoteBlock } from "../../platform/plain_text.ts";
import { removeTree } from "../../platform/remove_tree.ts";
import type { ResolvedSettings } from "../../settings/load.ts";
import { doctorView, viewLines } from "./toolchains.ts";
import type { CliIo } from "../jobs/common.ts";

/** How long the command may run on each engine. */
export const TRY_TIMEOUT_MS = 120_000;

/** What each engine's run is, in words (its Bash and its verify share the sandbox). */
const HOW: Record<string, string> = {
  native: "as its Bash and verify run it (bubblewrap)",
  claude: "as its verify runs it (the jail, no network), where its Bash runs inside " +
    "Claude Code's sandbox",
};

function runText(run: CheckRun): string {
  if (run.refused) return `not run: ${escapeLine(run.refused)}`;
  const seconds = formatElapsed(run.durationMs);
  const how = run.timedOut
    ? `timed out after ${TRY_TIMEOUT_MS / 1000} s`
    : run.exitCode === null
    ? `killed by ${run.signal ?? "a signal"}`
    : `exit ${run.exitCode}`;
  return `${how} after ${seconds}`;
}

/** Runs `command` on every engine in `cwd`; 0 when it exits 0 on each, 1 otherwise. */
export async function doctorTry(
  command: string,
  resolved: ResolvedSettings,
  io: CliIo,
): Promise<number> {
  const s = resolved.settings;
  const userConfigDir = dirname(resolved.locations.userFile);
  const workdirs: WorkdirPolicy = { home: io.home ?? io.cwd, workspaceRoots: s.workspaceRoots };
  let verdict;
  try {
    verdict = await judgeWorkdir(io.cwd, workdirs);
  } catch (e) {
    io.err(`ollama-delegate doctor: Cannot try a command in "${io.cwd}": ${(e as Error).message}`);
    return 2;
  }
  if (verdict.refusal) {
    io.err(
      `ollama-delegate doctor: Cannot try a command in "${verdict.refusal.path}": ` +
        `${verdict.refusal.reason} (${ruleName(verdict.refusal.rule)}), so no job could ` +
        "work there. Run it in a project directory",
    );
    return 2;
  }
  const engines = createEngines({
    settings: s,
    env: io.env,
    serverCwd: io.cwd,
    userConfigDir,
    workdirs,
  });
  const { view, roots } = await doctorView(s, io.env, io.cwd, io.home, userConfigDir);
  io.out(`ollama-delegate doctor --try ${escapeLine(JSON.stringify(command))} in ${verdict.real}`);
  io.out("");
  io.out("What the command can read of your toolchains (both engines):");
  for (const line of await viewLines(view, roots)) io.out(`  ${escapeLine(line)}`);
  let ok = true;
  for (const name of engineNames()) {
    const dir = mkdtempSync(join(tmpdir(), "ollama-delegate-try-"));
    try {
      const result = await engines[name]!.verify({
        jobId: "doctor-try",
        cwd: verdict.real,
        addDirs: [],
        commands: [command],
        timeoutMs: TRY_TIMEOUT_MS,
        signal: AbortSignal.timeout(TRY_TIMEOUT_MS + 10_000),
        dir,
        round: 1,
      });
      const run = result.runs[0];
      ok &&= result.passed;
      io.out("");
      io.out(
        `${name} engine, ${HOW[name] ?? "as its verify runs it"}: ${
          run ? runText(run) : "nothing ran"
        }${result.confinement ? ` [${escapeLine(result.confinement)}]` : ""}`,
      );
      if (run && run.output !== "") {
        const cut = run.droppedChars > 0 ? `(the first ${run.droppedChars} characters cut)\n` : "";
        io.out(quoteBlock(cut + run.output.replace(/\n$/, "")));
      }
    } finally {
      await removeTree(dir);
    }
  }
  io.out("");
  io.out(ok ? "It runs on every engine." : "It does not pass on every engine (see above).");
  return ok ? 0 : 1;
}
