import { cutTo } from "../platform/text_cut.ts";
import { formatElapsed } from "../platform/duration.ts";
import { engineTraits } from "../engines/registry.ts";
import type { Activity } from "../engines/types.ts";
import type { JobView } from "../jobs/manager.ts";
import { elapsedMs, jobTokensText, turnsText } from "../jobs/job_figures.ts";
import { isTerminal, type JobRecord } from "../jobs/record.ts";
import { stateWithVerdict, verifyLines } from "../jobs/verify_words.ts";
import { budgetText } from "../jobs/budget.ts";
import type { Price } from "../settings/types.ts";
import { worktreeText } from "../jobs/worktree/text.ts";
import { escapeBlock, escapeLine, flattenLine, quotePath } from "../platform/plain_text.ts";
import { commandsText, filesText } from "../jobs/evidence_words.ts";
import { askedText } from "../jobs/permission_asks.ts";
import { endpointLines, queueLines } from "./queue_lines.ts";
import { recordPlaceText } from "../jobs/residency.ts";

const LABEL = 12;
/**
 * One line of the block. Values carry a delegate's file names and commands, a backend's error
 * texts and model names: escaped here, so that no value can add a line of its own.
 */
const line = (label: string, value: string) => `${label.padEnd(LABEL)}${escapeLine(value)}`;

/**
 * The summary block shared by every job reply. Orchestrators, hooks and scripts read its
 * `label: value` lines, so a line keeps its label and its place, and new facts come as lines
 * of their own.
 */
export function summary(
  view: JobView,
  now = Date.now(),
  /** The pricing table, for the spend against a `budget_usd`. */
  pricing: Readonly<Record<string, Price>> = {},
): string {
  const r = view.record;
  const lines = [
    line("job_id:", r.id),
    line("session_id:", `${r.sessionId}   (turn ${r.turn})`),
    line(
      "state:",
      r.state === "queued" && view.queuePosition > 0
        ? `queued (${view.queuePosition} in line)`
        : stateWithVerdict(r, r.state),
    ),
    ...(r.state === "queued" && view.queue ? queueLines(view.queue, line) : []),
    line("model:", r.modelChoice ? `${r.model} (${r.modelChoice})` : r.model),
    ...(r.fallbacks ?? []).map((f) => line("fallback:", `${f.from} -> ${f.to} (${f.reason})`)),
    ...(r.agent !== undefined ? [line("agent:", r.agent)] : []),
    line(
      "engine:",
      engineLine(r.engine, r.backend),
    ),
    ...endpointLines(r, line),
    ...whereLines(r),
    line("cwd:", quotePath(r.cwd)),
    ...worktreeText(r, LABEL, (l) => `${l}:`),
    line("elapsed:", formatElapsed(elapsedMs(r, now))),
  ];
  if (r.usage) {
    lines.push(line("tokens:", `${jobTokensText(r)}  (${turnsText(r.usage.numTurns)})`));
  }
  const budget = budgetText(r.checks, r.model, r.usage, pricing);
  if (budget) lines.push(line("budget:", budget));
  if (isTerminal(r.state)) {
    const note = r.state === "completed" && r.toolCalls === 0
      ? "   <- answered without using any tools; treat factual claims as unverified"
      : "";
    const recovered = r.toolCallsRecovered ? ` (${r.toolCallsRecovered} recovered from text)` : "";
    lines.push(line("tool calls:", `${r.toolCalls}${recovered}${note}`));
  }
  if (r.contextElisions) {
    lines.push(line(
      "context:",
      `${r.contextElisions} older tool output${
        r.contextElisions === 1 ? "" : "s"
      } shortened to fit the model's context`,
    ));
  }
  if (r.sandbox) lines.push(line("sandbox:", r.sandbox));
  for (const warning of r.warnings ?? []) lines.push(line("warning:", warning));
  lines.push(line("permission:", permissionText(r)));
  if (r.permissionDenials.length > 0) {
    const shown = r.permissionDenials.slice(0, 5).map((d) =>
      d.detail ? `${d.tool}(${cut(d.detail, 80)})` : d.tool
    );
    const more = r.permissionDenials.length > 5 ? `, +${r.permissionDenials.length - 5} more` : "";
    lines.push(line("denied:", `${r.permissionDenials.length}: ${shown.join(", ")}${more}`));
  }
  // Every question put to the person and its answer (issue 31, item 3).
  const asked = askedText(r);
  if (asked) lines.push(line("asked:", asked));
  if (isTerminal(r.state) && (r.exitCode !== undefined || r.signal)) {
    if (r.signal) lines.push(line("exit:", `signal ${r.signal}`));
    else if (r.exitCode !== null && r.exitCode !== undefined) {
      lines.push(line("exit:", `code ${r.exitCode}`));
    }
  }
  if (r.commands && r.commands.length > 0) lines.push(line("commands:", commandsText(r.commands)));
  for (const [label, value] of verifyLines(r)) lines.push(line(label, value));
  if (r.claims && r.claims.length > 0) {
    const shown = r.claims.map((c) => `"${c.claim}" (${c.reason})`).join("; ");
    lines.push(line("claims:", `${r.claims.length} not backed by the evidence: ${shown}`));
  }
  const files = filesText(r);
  if (files) lines.push(line("files:", files));
  if (r.errorText && r.state !== "completed") lines.push(line("error:", r.errorText));
  return lines.join("\n");
}

/** Where the turn ran: this machine, a private network, Ollama's cloud or a remote host. */
function whereLines(r: JobRecord): string[] {
  const where = recordPlaceText(r);
  return where === undefined ? [] : [line("where:", where)];
}

function permissionText(r: JobRecord): string {
  const requested = r.options.permissionMode;
  const effective = r.effectivePermissionMode;
  if (!effective) return requested;
  const same = effective === requested ||
    (requested === "manual" && effective === "default");
  return same ? requested : `${effective} (requested ${requested})`;
}

/** A command or a path, escaped on one line (its line breaks shown), then cut to `max`. */
function cut(text: string, max: number): string {
  return cutTo(escapeLine(text.trim()), max);
}

/** Prose (the model's words, an error), flattened to one line, then cut to `max`. */
function cutProse(text: string, max: number): string {
  return cutTo(flattenLine(text), max);
}

/** `  [tool] Bash: ls` lines: one activity a line, its kind in brackets first, to scan or grep. */
export function activityLines(activities: readonly Activity[], limit: number): string[] {
  return activities.slice(-limit).map((a) => {
    switch (a.kind) {
      case "tool":
        return `  [tool] ${cut(a.name, 80)}${a.detail ? `: ${cutProse(a.detail, 160)}` : ""}`;
      case "text":
        return `  [text] ${cutProse(a.text, 400)}`;
      case "error":
        return `  [error] ${cutProse(a.text, 400)}`;
    }
  });
}

/**
 * The output body: the text, cut at `max` with the path of the whole. Given the job's id, the
 * cut note also points at delegate_transcript, where the orchestrator can check the tool
 * calls behind the text without reading the whole file into its context. The model's lines
 * stay lines (it comes after the block's `--- output ---` line, so it cannot extend the
 * block); terminal controls, lone CRs and line separators in it are escaped.
 */
export function outputBody(
  text: string,
  fullLength: number,
  max: number,
  resultPath: string,
  jobId?: string,
): string {
  if (fullLength === 0 || text.trim() === "") return "(delegated session produced no text output)";
  if (fullLength <= max) return escapeBlock(text);
  const shown = escapeBlock(text.slice(0, max));
  if (jobId === undefined) {
    return `${shown}\n\n... [truncated at ${max} chars; full output: ${resultPath}]`;
  }
  return `${shown}\n\n... [truncated at ${max} of ${fullLength} chars; full output: ` +
    `${resultPath}. To check the tool calls and results behind it, page through ` +
    `delegate_transcript({ job_id: "${jobId}" })]`;
}

/** What to do about a job still running: wait on it, not poll in a tight loop. */
export function pollHint(id: string): string {
  return `Still running. Wait for it with delegate_status({ job_id: "${id}", wait_seconds: 60 }) ` +
    "(up to 600) rather than polling in a loop.";
}

export function followupHint(id: string): string {
  return `Continue this conversation with delegate_followup({ job_id: "${id}", prompt: "..." }).`;
}

/**
 * The engine and its backend. An engine that runs on any kind of backend (native) always names
 * it; one that speaks one API (claude) names it when the job is not on the default Ollama, so
 * its replies read as before backends could be named for it.
 */
function engineLine(engine: string, backend: string | undefined): string {
  const traits = engineTraits(engine);
  if (!traits.backends) return engine;
  if (backend === undefined && traits.backendApi !== undefined) return engine;
  return `${engine} (backend ${backend ?? "ollama"})`;
}
