/**
 * The `doctor` report as text for a terminal and as JSON for scripts. A check's words carry
 * what backends and programs said (model names, versions, error bodies): the text report
 * escapes every summary, line and hint onto its line (platform/plain_text.ts), so that no
 * backend can drive the terminal or add a line of the report; the checks that align columns
 * of such names escape them first.
 */
import { type ColourFormat, paint } from "../../platform/colour.ts";
import { escapeLine } from "../../platform/plain_text.ts";
import type { Check, CheckStatus } from "./check.ts";

/** A check as reported: `required` says whether the default engine needs it. */
export interface ReportedCheck extends Check {
  required: boolean;
}

export interface DoctorReport {
  ok: boolean;
  defaultEngine: string;
  checks: ReportedCheck[];
}

const LABEL: Record<CheckStatus, string> = { pass: "PASS", fail: "FAIL", warn: "WARN" };
const COLOUR: Record<CheckStatus, ColourFormat> = { pass: "green", fail: "red", warn: "yellow" };

/** The JSON shape: lines are for people only. */
export function renderJson(report: DoctorReport): string {
  return JSON.stringify(
    {
      ok: report.ok,
      defaultEngine: report.defaultEngine,
      checks: report.checks.map((c) => ({
        id: c.id,
        status: c.status,
        required: c.required,
        summary: c.summary,
        ...(c.hint ? { hint: c.hint } : {}),
        ...(c.details ? { details: c.details } : {}),
      })),
    },
    null,
    2,
  );
}

/** One line per check, its extra lines and its fix hint, then the verdict. */
export function renderText(report: DoctorReport, colour: boolean): string {
  const width = Math.max(...report.checks.map((c) => escapeLine(c.title).length));
  const indent = " ".repeat(width + 10);
  const out = [`ollama-delegate doctor (default engine: ${report.defaultEngine})`, ""];
  for (const c of report.checks) {
    out.push(
      `  ${paint(COLOUR[c.status], LABEL[c.status], colour)}  ${
        escapeLine(c.title).padEnd(width)
      }  ${escapeLine(c.summary)}`,
    );
    for (const line of c.lines ?? []) out.push(`${indent}${escapeLine(line)}`);
    if (c.hint && c.status !== "pass") {
      out.push(`${indent}${paint("dim", `fix: ${escapeLine(c.hint)}`, colour)}`);
    }
  }
  const failed = report.checks.filter((c) => c.status === "fail");
  const warned = report.checks.filter((c) => c.status === "warn").length;
  const warnings = warned > 0 ? ` ${warned} warning(s) above.` : "";
  out.push("");
  if (report.ok) {
    out.push(`Ready: everything the ${report.defaultEngine} engine needs works.${warnings}`);
  } else {
    out.push(
      `Not ready: ${failed.length} check(s) the ${report.defaultEngine} engine needs failed ` +
        `(${failed.map((c) => escapeLine(c.title)).join(", ")}).${warnings}`,
    );
  }
  return out.join("\n");
}
