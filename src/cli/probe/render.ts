/**
 * The `doctor --probe` report as a table for people and as JSON for scripts. Model names, the
 * model's own words and the backend's errors are escaped onto their line in the table
 * (platform/plain_text.ts), before its columns are sized.
 */
import { escapeLine } from "../../platform/plain_text.ts";
import type { PathOutcome } from "./task.ts";
import { type Attempt, isFailedAttempt, type ProbeReport } from "./probe.ts";
import { historyLine } from "./ledger.ts";

export function renderProbeJson(report: ProbeReport): string {
  return JSON.stringify(report, null, 2);
}

/** Past jobs' tool calls written as text, from the quality ledger; nothing when none. */
function historyLines(report: ProbeReport): string[] {
  if (report.textCallsInJobs.length === 0) return [];
  return [
    "",
    "Tool calls written as text in past jobs (quality ledger; the native engine runs them, " +
    "Claude Code does not):",
    ...report.textCallsInJobs.map((r) => `  ${escapeLine(r.model)}: ${escapeLine(historyLine(r))}`),
  ];
}

function callCell(o: Attempt<PathOutcome>, engine: "native" | "claude"): string {
  if (isFailedAttempt(o)) return "error";
  if (o.argumentsError) return "bad arguments";
  switch (o.call) {
    case "structured":
      return "tool call";
    case "text":
      // The native engine runs a call it recovered from text; Claude Code does not.
      return engine === "native" ? `from text (${o.format})` : "as text, not run";
    case "none":
      return "no call";
  }
}

const num = (n: number | undefined, digits = 0) => n === undefined ? "-" : n.toFixed(digits);

export function renderProbeText(report: ProbeReport): string {
  const out = [
    `ollama-delegate doctor --probe: one tiny tool-use task per model at ${report.baseUrl}`,
    `(native engine: /api/chat; claude engine: /v1/messages, as Claude Code sends it)`,
    "",
  ];
  if (report.error) {
    out.push(`Cannot probe: ${escapeLine(report.error)}`, ...historyLines(report));
    return out.join("\n");
  }
  const head = [
    "MODEL",
    "NATIVE",
    "CLAUDE",
    "PROMPT tok/s",
    "GEN tok/s",
    "s/turn NATIVE",
    "s/turn CLAUDE",
    "USE WITH",
  ];
  const rows = report.models.map((m) => [
    escapeLine(m.model),
    callCell(m.native, "native"),
    callCell(m.claude, "claude"),
    num(m.promptTokensPerSecond),
    num(m.generationTokensPerSecond),
    num(m.secondsPerTurn.native, 1),
    num(m.secondsPerTurn.claude, 1),
    m.usableWith.length > 0 ? m.usableWith.join(", ") : "none",
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    ("  " + cells.map((c, i) => c.padEnd(widths[i]!)).join("  ")).trimEnd();
  out.push(line(head), ...rows.map(line));
  const notes = report.models.flatMap((m) =>
    m.notes.map((n) => `  ${escapeLine(m.model)}: ${escapeLine(n)}`)
  );
  if (notes.length > 0) out.push("", ...notes);
  out.push(...historyLines(report));
  const a = report.assumptions;
  out.push(
    "",
    `s/turn: the engine's prompt per request (native about ${a.promptTokens.native}, claude ` +
      `about ${a.promptTokens.claude} tokens) at the`,
    `measured prompt speed, plus a ${a.replyTokens}-token reply at the generation speed. ` +
      `Ollama reuses a cached`,
    "prompt prefix, so later turns of one job are often faster; longer jobs carry more.",
    report.ok
      ? `Use a model with an engine it works on: ollama-delegate config --default-model <model> ` +
        `--engine <engine>`
      : `No probed model made a usable tool call. Pull a model with tool support ` +
        `(ollama.com/search?c=tools) and probe it: ollama-delegate doctor --probe <model>`,
  );
  return out.join("\n");
}
