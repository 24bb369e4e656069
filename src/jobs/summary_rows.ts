/**
 * A job's summary as labelled rows, computed once for both front ends (issue 33, item 2): the
 * MCP replies print them as `label:  text` lines (server/render.ts), `jobs show` as
 * `label  text` lines (cli/jobs_show.ts). A new evidence line is a row here, its test in
 * tests/jobs/summary_rows_test.ts and its words in docs/jobs.md; neither front end changes.
 *
 * Orchestrators, hooks and scripts read the reply's lines, so a row keeps its label and its
 * place, and a new fact comes as a row of its own. A row marked `only` is for one reader: the
 * terminal's timestamps and cost, and the few rows whose terminal words tests and docs keep
 * (`job`, `model  (auto ...)`, `claim`, `changed`).
 */
import { engineTraits } from "../engines/registry.ts";
import { formatElapsed } from "../platform/duration.ts";
import { cutTo } from "../platform/text_cut.ts";
import { escapeLine, quotePath } from "../platform/plain_text.ts";
import { displayPath } from "../guard/real_paths.ts";
import type { Price } from "../settings/types.ts";
import { budgetText } from "./spend/budget.ts";
import { costOf, formatCost, priceOf } from "./spend/cost.ts";
import { commandsText, filesText } from "./evidence_words.ts";
import { elapsedMs, jobTokensText, turnsText } from "./job_figures.ts";
import type { JobView } from "./live_job.ts";
import { askedText } from "./permission_asks.ts";
import { endpointLines, queueLines } from "./queue_words.ts";
import { isTerminal, type JobRecord } from "./record.ts";
import { recordPlaceText } from "./residency.ts";
import { stateWithVerdict, verifyLines } from "./checks/verify_words.ts";
import { worktreeRows } from "./worktree/text.ts";

export interface SummaryRow {
  /** The label without its colon: `files`, `tool calls`. */
  readonly label: string;
  /** The value; the delegate's and the backend's text in it is escaped when printed. */
  readonly text: string;
  /** Lines under the first (a worktree's diff stat, its take-it commands), indented. */
  readonly more?: readonly string[];
  /** For one reader only; both when absent. */
  readonly only?: Reader;
}

/** Who prints the rows: the MCP replies or `jobs show`. */
export type Reader = "reply" | "terminal";

/** Labels and their values start at this column. */
export const LABEL_WIDTH = 12;

/** The job as the manager sees it: its record, and its place in line while queued. */
export type SummarySource =
  & Pick<JobView, "record">
  & Partial<Pick<JobView, "queuePosition" | "queue">>;

/** The job's rows, in the order the reply has always printed them. */
export function summaryRows(
  view: SummarySource,
  now = Date.now(),
  /** The pricing table, for the spend against a `budget_usd` and the terminal's cost. */
  pricing: Readonly<Record<string, Price>> = {},
): SummaryRow[] {
  const r = view.record;
  const row = (label: string, text: string, only?: Reader): SummaryRow =>
    only ? { label, text, only } : { label, text };
  const when = (ms: number | undefined) => (ms === undefined ? "-" : new Date(ms).toISOString());
  const rows: SummaryRow[] = [
    row("job_id", r.id, "reply"),
    row("job", r.id, "terminal"),
    row("session_id", `${r.sessionId}   (turn ${r.turn})`),
    row(
      "state",
      r.state === "queued" && (view.queuePosition ?? 0) > 0
        ? `queued (${view.queuePosition} in line)`
        : stateWithVerdict(r, r.state),
    ),
    ...(r.state === "queued" && view.queue ? queueLines(view.queue, row) : []),
    row("model", r.modelChoice ? `${r.model} (${r.modelChoice})` : r.model, "reply"),
    row("model", r.modelChoice ? `${r.model}  (${r.modelChoice})` : r.model, "terminal"),
    ...(r.fallbacks ?? []).map((f) => row("fallback", `${f.from} -> ${f.to} (${f.reason})`)),
    ...(r.agent !== undefined ? [row("agent", r.agent)] : []),
    row("engine", engineText(r.engine, r.backend)),
    ...endpointLines(r, row),
    ...optional("where", recordPlaceText(r)),
    row("cwd", quotePath(r.cwd)),
    ...worktreeRows(r).map(([label, value]) => {
      const [first = "", ...more] = value.split("\n");
      return more.length > 0 ? { label, text: first, more } : row(label, first);
    }),
    row("created", when(r.createdAt), "terminal"),
    row("started", when(r.startedAt), "terminal"),
    row("ended", when(r.endedAt), "terminal"),
    row("elapsed", formatElapsed(elapsedMs(r, now))),
  ];
  if (r.usage) rows.push(row("tokens", `${jobTokensText(r)}  (${turnsText(r.usage.numTurns)})`));
  rows.push(...optional("budget", budgetText(r.checks, r.model, r.usage, pricing)));
  rows.push(row("cost", costText(r, pricing), "terminal"));
  if (isTerminal(r.state)) {
    const note = r.state === "completed" && r.toolCalls === 0
      ? "   <- answered without using any tools; treat factual claims as unverified"
      : "";
    const recovered = r.toolCallsRecovered ? ` (${r.toolCallsRecovered} recovered from text)` : "";
    rows.push(row("tool calls", `${r.toolCalls}${recovered}${note}`));
  }
  if (r.contextElisions) {
    const s = r.contextElisions === 1 ? "" : "s";
    rows.push(
      row(
        "context",
        `${r.contextElisions} older tool output${s} shortened to fit the model's context`,
      ),
    );
  }
  if (r.sandbox) rows.push(row("sandbox", r.sandbox));
  rows.push(...optional("hidden", hiddenText(r)));
  for (const warning of r.warnings ?? []) rows.push(row("warning", warning));
  rows.push(row("permission", permissionText(r)));
  if (r.permissionDenials.length > 0) {
    const shown = r.permissionDenials.slice(0, 5).map((d) =>
      d.detail ? `${d.tool}(${cutTo(escapeLine(d.detail.trim()), 80)})` : d.tool
    );
    const more = r.permissionDenials.length > 5 ? `, +${r.permissionDenials.length - 5} more` : "";
    rows.push(row("denied", `${r.permissionDenials.length}: ${shown.join(", ")}${more}`));
  }
  // Every question put to the person and its answer (issue 31, item 3).
  rows.push(...optional("asked", askedText(r)));
  if (isTerminal(r.state)) {
    if (r.signal) rows.push(row("exit", `signal ${r.signal}`));
    else if (r.exitCode !== null && r.exitCode !== undefined) {
      rows.push(row("exit", `code ${r.exitCode}`));
    }
  }
  if (r.commands && r.commands.length > 0) rows.push(row("commands", commandsText(r.commands)));
  for (const [label, value] of verifyLines(r)) rows.push(row(label, value));
  if (r.claims && r.claims.length > 0) {
    const shown = r.claims.map((c) => `"${c.claim}" (${c.reason})`).join("; ");
    rows.push(row("claims", `${r.claims.length} not backed by the evidence: ${shown}`, "reply"));
    for (const c of r.claims) rows.push(row("claim", `"${c.claim}": ${c.reason}`, "terminal"));
  }
  rows.push(...optional("files", filesText(r), "reply"));
  rows.push(...optional("changed", changedText(r), "terminal"));
  if (r.owner && (r.state === "running" || r.state === "queued")) {
    rows.push(row("server pid", String(r.owner.pid), "terminal"));
  }
  if (r.errorText && r.state !== "completed") rows.push(row("error", r.errorText));
  return rows;
}

/**
 * The rows as lines for one reader: the reply's labels end in a colon, and every value line is
 * escaped (platform/plain_text.ts), so that no file name, command or backend error can add a
 * line of its own. `decorate` may dress a row's escaped text for a terminal (colour).
 */
export function summaryLines(
  rows: readonly SummaryRow[],
  reader: Reader,
  decorate: (row: SummaryRow, escaped: string) => string = (_, escaped) => escaped,
): string[] {
  const indent = " ".repeat(LABEL_WIDTH);
  return rows.filter((r) => r.only === undefined || r.only === reader).map((r) => {
    const label = reader === "reply" ? `${r.label}:` : r.label;
    const first = `${label.padEnd(LABEL_WIDTH)}${decorate(r, escapeLine(r.text))}`;
    return [first, ...(r.more ?? []).map((m) => indent + escapeLine(m))].join("\n");
  });
}

/** The cost of one job, saying why when it is unknown. */
export function costText(record: JobRecord, pricing: Readonly<Record<string, Price>>): string {
  const cost = costOf(record, pricing);
  switch (cost.kind) {
    case "known":
      return `${formatCost(cost.amount)}  (pricing: ${cost.price.inputPerMillion} in / ` +
        `${cost.price.outputPerMillion} out per million tokens)`;
    case "unpriced":
      return `unknown  (no price for "${record.model}" in the pricing setting)`;
    case "no-usage":
      return priceOf(record.model, pricing)
        ? "unknown  (no token usage recorded)"
        : `unknown  (no token usage recorded, and no price for "${record.model}")`;
  }
}

function optional(label: string, text: string | undefined, only?: Reader): SummaryRow[] {
  if (text === undefined) return [];
  return [only ? { label, text, only } : { label, text }];
}

function permissionText(r: JobRecord): string {
  const requested = r.options.permissionMode;
  const effective = r.effectivePermissionMode;
  if (!effective) return requested;
  const same = effective === requested ||
    (requested === "manual" && effective === "default");
  return same ? requested : `${effective} (requested ${requested})`;
}

/**
 * The engine and its backend. An engine that runs on any kind of backend (native) always names
 * it; one that speaks one API (claude) names it when the job is not on the default Ollama, so
 * its replies read as before backends could be named for it.
 */
function engineText(engine: string, backend: string | undefined): string {
  const traits = engineTraits(engine);
  if (!traits.backends) return engine;
  if (backend === undefined && traits.backendApi !== undefined) return engine;
  return `${engine} (backend ${backend ?? "ollama"})`;
}

/**
 * The `hidden` row: what the last turn's sandbox kept from the delegate in the job's
 * directories, by path from its cwd, so that a read of one that failed is not taken for a
 * missing file.
 */
function hiddenText(r: JobRecord): string | undefined {
  const hidden = r.hidden ?? [];
  const total = hidden.length + (r.hiddenMore ?? 0);
  if (total === 0) return undefined;
  const named = hidden.slice(0, 10).map((p) => quotePath(displayPath(p, r.cwd))).join(", ");
  const more = total > 10 ? `, +${total - 10} more` : "";
  return `${named}${more} (credential stores and secret files, kept from the delegate)`;
}

/**
 * `jobs show`'s `changed` row: the files by their full paths (a person at a terminal may be
 * anywhere), `none seen` with why the list may be incomplete, `none` when the server looked.
 */
function changedText(r: JobRecord): string | undefined {
  const changed = r.changedFiles ?? [];
  const total = changed.length + (r.changedFilesMore ?? 0);
  if (total === 0 && !r.changedFilesPartial) return r.changesTracked ? "none" : undefined;
  const named = total === 0 ? "none seen" : changed.slice(0, 10).map(quotePath).join(", ") +
    (total > 10 ? `, +${total - 10} more` : "");
  return named + (r.changedFilesPartial ? `; incomplete: ${r.changedFilesPartial}` : "");
}
