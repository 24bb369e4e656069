import { formatElapsed } from "../../../platform/duration.ts";
import { failureText } from "../../../errors.ts";
import { basename } from "node:path";
import { DEFAULT_LIMITS } from "../../sandbox_limits.ts";
import type { ShellRunner } from "../sandbox/shell_runner.ts";
import { runShell } from "../sandbox/run_shell.ts";
import { maskedText, takeMaskedReport, watchFailures, withoutReport } from "./masked_failures.ts";
import { LiveOutput } from "./live_output.ts";
import { quarantineText } from "../../../guard/planted.ts";
import { displayPath } from "../../../guard/real_paths.ts";
import { BASH_KEEP_CHARS, type NativeTool, type ToolResult } from "./types.ts";

const DEFAULT_TIMEOUT_MS = 120_000;
const MAX_TIMEOUT_MS = 600_000;

/**
 * The shell tool. Every command is run by the server (in bubblewrap unless the user turned
 * the sandbox off) and recorded with its real exit code, whatever the model says later.
 */
export function bashTool(runner: ShellRunner): NativeTool {
  return {
    name: "Bash",
    readOnly: false,
    description: "Run a shell command in the working directory (sandboxed: no network, " +
      "only the project is writable). Returns exit code and output.",
    parameters: {
      type: "object",
      properties: {
        command: { type: "string" },
        timeout: { type: "number", description: "ms, max 600000" },
      },
      required: ["command"],
    },
    async run(input, ctx): Promise<ToolResult> {
      const command = input.command;
      if (typeof command !== "string" || command.trim() === "") {
        return { text: "Error: command must be a non-empty string", isError: true };
      }
      if (runner.kind === "refused") {
        const refused = failureText(runner.problem);
        ctx.commandRun({ command, exitCode: null, durationMs: 0, refused });
        return { text: refused, isError: true };
      }
      const timeoutMs = typeof input.timeout === "number" && input.timeout > 0
        ? Math.min(input.timeout, MAX_TIMEOUT_MS)
        : DEFAULT_TIMEOUT_MS;
      // Run by bash with traps that note failures a later command hides (masked_failures.ts).
      const watched = watchFailures(command);
      const live = ctx.output
        ? new LiveOutput(ctx.output, watched ? { clean: (t) => withoutReport(t, watched) } : {})
        : undefined;
      let result;
      try {
        result = await runShell(runner, {
          command: watched?.command ?? command,
          cwd: ctx.cwd,
          writable: ctx.roots,
          timeoutMs,
          signal: ctx.signal,
          keepChars: BASH_KEEP_CHARS,
          ...(ctx.protect ? { hide: ctx.protect } : {}),
          ...(ctx.processStarted ? { onSpawn: ctx.processStarted } : {}),
          ...(live ? { onOutput: (text: string) => live.push(text) } : {}),
        });
      } finally {
        live?.stop();
      }
      if (result.refused) {
        ctx.commandRun({ command, exitCode: null, durationMs: 0, refused: result.refused });
        return { text: result.refused, isError: true };
      }
      const report = watched
        ? takeMaskedReport(result.output, watched)
        : { output: result.output, masked: [], more: 0 };
      ctx.commandRun({
        command,
        exitCode: result.exitCode,
        signal: result.signal,
        durationMs: result.durationMs,
        ...(report.masked.length > 0 ? { masked: report.masked } : {}),
        ...(report.more > 0 ? { maskedMore: report.more } : {}),
      });
      const limits = runner.kind === "bwrap" ? runner.limits ?? DEFAULT_LIMITS : undefined;
      // A shell reports a child killed by a signal as 128 + its number; SIGXFSZ is 25 on Linux,
      // the only system with the sandbox.
      const tooBig = limits && (result.signal === "SIGXFSZ" || result.exitCode === 128 + 25)
        ? ` (SIGXFSZ: a file reached the sandbox's ${limits.maxFileMb} MiB size limit)`
        : "";
      const head =
        (result.timedOut
          ? `Timed out after ${timeoutMs / 1000}s and was killed`
          : result.aborted
          ? "Stopped: the job was cancelled"
          : result.exitCode !== null
          ? `exit code ${result.exitCode}`
          : `killed by ${result.signal}`) + tooBig;
      // The cgroup's count: forks the shell or a test runner saw fail with EAGAIN. The job's
      // warning leaves the count out, so that many such commands make one line.
      const hits = result.processLimitHits ?? 0;
      const forks = limits && hits > 0
        ? `the command reached the sandbox's process limit of ${limits.maxProcesses} ` +
          `(sandboxMaxProcesses) ${hits === 1 ? "once" : `${hits} times`}, so some of its ` +
          'forks failed ("Resource temporarily unavailable")'
        : "";
      if (limits && forks) {
        ctx.warning?.(
          `processes: a command reached the sandbox's process limit of ${limits.maxProcesses} ` +
            "(sandboxMaxProcesses), so some of its forks failed; ollama-delegate config " +
            "--sandbox-max-processes <n> raises it",
        );
      }
      const forksNote = forks ? `\n[${forks}]` : "";
      const protectedNote = result.protectedChanged.length > 0
        ? `\n[protected paths were created or replaced: ${
          result.protectedChanged.join(", ")
        }; the user should check them before running git or Claude Code there]`
        : "";
      const quarantine = result.quarantined
        ? quarantineText(result.quarantined, (p) => displayPath(p, ctx.cwd))
        : "";
      if (quarantine) ctx.warning?.(`planted: ${quarantine}`);
      const quarantineNote = quarantine ? `\n[${quarantine}]` : "";
      const cut = result.droppedChars > 0
        ? `[output cut: the first ${result.droppedChars} chars were dropped; last ${BASH_KEEP_CHARS} kept]\n`
        : "";
      const output = report.output === "" ? "(no output)" : report.output;
      const secrets = runner.kind === "bwrap"
        ? secretsNamed(command, runner.nested?.secrets ?? [], ctx.cwd)
        : [];
      // Masked as credential stores are: /dev/null bound without device access, so reading
      // fails with EACCES ("Permission denied"), which the model should not take for a bug.
      const secretNote = secrets.length > 0
        ? `\n[${secrets.join(", ")} ${
          secrets.length === 1 ? "is a secret file" : "are secret files"
        }` +
          ` (or a link to one): the sandbox hides ${secrets.length === 1 ? "it" : "them"}, so ` +
          "reading fails with Permission denied; what a delegate reads goes to its model's " +
          "provider. The user can allow names with `ollama-delegate config --allow-secret-file`]"
        : "";
      const masked = report.masked.length > 0 || report.more > 0
        ? `${output.endsWith("\n") ? "" : "\n"}[masked failures: ${
          maskedText(report.masked, report.more)
        } (these failed, but a later command set the exit code)]`
        : "";
      return {
        text: `${head} (${
          formatElapsed(result.durationMs)
        })\n${cut}${output}${masked}${forksNote}${protectedNote}${quarantineNote}${secretNote}`,
        isError: result.exitCode !== 0,
      };
    },
  };
}

/** Secret files shown empty that `command` names (by file name), as the model sees them. */
function secretsNamed(command: string, secrets: readonly string[], cwd: string): string[] {
  const named = secrets.filter((path) => {
    const name = basename(path).replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    return new RegExp(`(^|[\\s/'"=<>])${name}($|[\\s'";|&)<>])`).test(command);
  });
  return named.slice(0, 10).map((path) => displayPath(path, cwd));
}
