/**
 * `ollama-delegate review`: delegate_review from a terminal. It reviews the uncommitted
 * changes (or base...HEAD) of the repository it is run in, with one reviewer or a panel, waits
 * for every reviewer and prints the findings, or as JSON. `--gate` is the Claude Code Stop
 * hook (cli/hooks/review_gate.ts).
 */
import process from "node:process";
import { parseArgs } from "node:util";
import { errorMessage, isDelegateError } from "../../errors.ts";
import { isJobError } from "../../jobs/errors.ts";
import { escapeLine } from "../../platform/plain_text.ts";
import { currentEnv, isTty } from "../../platform/runtime.ts";
import { outcomeJson, type ReviewOutcome } from "../../review/outcome.ts";
import { renderPanel } from "../../review/panel_render.ts";
import { readReply, renderReview } from "../../review/review_file.ts";
import { formatProblems, loadSettings } from "../../settings/load.ts";
import { type EngineName, ENGINES } from "../../settings/types.ts";
import { jobProblemText } from "../jobs/common.ts";
import { gateMain } from "../hooks/review_gate.ts";
import { readStdin } from "../hooks/hook_input.ts";
import { reviewRuntime, ReviewTimeout, runReview } from "./run.ts";

export const REVIEW_HELP = `Usage: ollama-delegate review [options]

Reviews the uncommitted changes of the git repository you are in (or base...HEAD) with a
read-only reviewer, or a panel of 2-5 reviewers that cannot see each other's answers, and
prints the findings that point into the diff: by agreement, then severity, with who found
each. The reviewers are jobs like any other (ollama-delegate jobs shows them).

Options:
  --base <ref>             review <ref>...HEAD instead of the uncommitted changes
  --focus <text>           what to look for (e.g. security, tests)
  --model <model>          the reviewer's model (default: the default model)
  --models <m1,m2,...>     a panel: one reviewer per model (2-5)
  --agent <name>           the reviewer agent (default: reviewer)
  --agents <a1,a2,...>     a panel: one reviewer per agent
  --engine <claude|native> the engine the reviewers run on (default: the default engine)
  --min-agreement <n>      a panel lists only findings at least n reviewers found
  --timeout <seconds>      stop the reviewers after this long (default: jobTimeoutMs)
  --json                   print the outcome as JSON
  --gate                   run as Claude Code's Stop hook: read its input on stdin and
                           answer it (the plugin's hook; see docs/jobs.md, "Review gate")
  -h, --help               show this help

Exit status: 0 when the review ran (whatever it found), 1 when it could not, 2 for bad
options.`;

const list = (text: string | undefined) =>
  text === undefined ? undefined : text.split(",").map((s) => s.trim()).filter(Boolean);

const log = (line: string) => process.stderr.write(`ollama-delegate: ${line}\n`);

export async function reviewMain(argv: string[]): Promise<number> {
  let values;
  try {
    values = parseArgs({
      args: argv,
      allowPositionals: false,
      options: {
        base: { type: "string" },
        focus: { type: "string" },
        model: { type: "string" },
        models: { type: "string" },
        agent: { type: "string" },
        agents: { type: "string" },
        engine: { type: "string" },
        "min-agreement": { type: "string" },
        timeout: { type: "string" },
        json: { type: "boolean" },
        gate: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    }).values;
  } catch (e) {
    console.error(`ollama-delegate review: ${errorMessage(e)}. See ollama-delegate review --help`);
    return 2;
  }
  if (values.help) {
    console.log(REVIEW_HELP);
    return 0;
  }
  if (values.gate) {
    if (isTty("stdin")) {
      console.error(
        "ollama-delegate review --gate reads Claude Code's Stop hook input on stdin; it is " +
          "run by the plugin's hook. For a review by hand run ollama-delegate review",
      );
      return 2;
    }
    const stop = new AbortController();
    const onSignal = () => stop.abort(new Error("the hook was stopped"));
    process.once("SIGINT", onSignal);
    process.once("SIGTERM", onSignal);
    try {
      return await gateMain({
        readInput: readStdin,
        out: (line) => void process.stdout.write(`${line}\n`),
        err: log,
        env: currentEnv(),
        signal: stop.signal,
      });
    } finally {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
    }
  }
  const usage = (message: string) => {
    console.error(`ollama-delegate review: ${message}. See ollama-delegate review --help`);
    return 2;
  };
  const engine = values.engine;
  if (engine !== undefined && !(ENGINES as readonly string[]).includes(engine)) {
    return usage(`--engine "${escapeLine(engine)}" is not one of ${ENGINES.join(", ")}`);
  }
  const numberOf = (text: string | undefined, max: number) => {
    if (text === undefined) return undefined;
    const n = Number(text);
    return Number.isInteger(n) && n >= 1 && n <= max ? n : NaN;
  };
  const minAgreement = numberOf(values["min-agreement"], 5);
  if (Number.isNaN(minAgreement)) return usage("--min-agreement is a whole number from 1 to 5");
  const timeout = numberOf(values.timeout, 7 * 24 * 3600);
  if (Number.isNaN(timeout)) return usage("--timeout is a whole number of seconds");
  if (values.base !== undefined && (values.base.startsWith("-") || values.base.includes(".."))) {
    return usage("--base is a git ref (a branch, tag or commit), without a leading '-' or '..'");
  }

  const env = currentEnv();
  const cwd = process.cwd();
  const resolved = loadSettings({ env, cwd });
  for (const line of formatProblems(resolved.problems)) log(line);
  const stop = new AbortController();
  const onSignal = () => stop.abort(new Error("interrupted"));
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    const { runtime, host } = await reviewRuntime(resolved, env, cwd, log);
    if (!values.json && isTty("stderr")) log("reviewing; Ctrl-C stops the reviewers");
    const outcome = await runReview(host, {
      cwd,
      base: values.base,
      focus: values.focus,
      model: values.model,
      models: list(values.models),
      agent: values.agent,
      agents: list(values.agents),
      engine: engine as EngineName | undefined,
      minAgreement,
    }, {
      timeoutMs: (timeout ?? resolved.settings.jobTimeoutMs / 1000) * 1000,
      signal: stop.signal,
    });
    if (values.json) console.log(JSON.stringify(outcomeJson(outcome), null, 2));
    else {console.log(
        await outcomeText(outcome, runtime.store.resultPath.bind(runtime.store)),
      );}
    return outcome.answered > 0 ? 0 : 1;
  } catch (e) {
    if (stop.signal.aborted) {
      console.error("ollama-delegate review: interrupted; the reviewers were stopped");
      return 130;
    }
    const text = isJobError(e)
      ? jobProblemText(e.problem)
      : isDelegateError(e) || e instanceof ReviewTimeout
      ? e.message
      : `Internal error: ${errorMessage(e)}`;
    console.error(`ollama-delegate review: ${text}`);
    return 1;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}

/** The outcome as the MCP tool words it: one reviewer's section, or the panel's. */
async function outcomeText(o: ReviewOutcome, resultPath: (id: string) => string): Promise<string> {
  const max = Number.MAX_SAFE_INTEGER;
  if (o.views.length > 1) return renderPanel(o, max).text;
  const job = o.views[0]!.record;
  if (job.state !== "completed") {
    return `job ${job.id} (${escapeLine(job.model)}) ${job.state}: ${
      escapeLine(job.errorText ?? "no reason recorded")
    }`;
  }
  const path = resultPath(job.id);
  return `job_id:     ${job.id}\nmodel:      ${escapeLine(job.model)}\n` +
    renderReview(o.record, await readReply(path), path, max).text;
}
