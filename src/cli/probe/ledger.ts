/**
 * What past jobs showed of models that write tool calls as text, from the quality ledger: the
 * probe's one task catches a model that does it every time; the ledger catches one that does
 * it now and then, over real work. Per model and engine: the jobs, how many ended on calls
 * written as text that nothing ran (`tool_call_unparsed:`), and the calls the native engine
 * recovered from text.
 */
import { readQualityLedger } from "../../jobs/ledger/ledger.ts";

export interface TextCallHistory {
  model: string;
  engine: string;
  jobs: number;
  /** Jobs that ended on calls written as text that nothing ran. */
  unrun: number;
  /** Calls the native engine recovered from text and ran. */
  recovered: number;
}

/** Models whose jobs wrote calls as text, most unrun first; empty when the ledger has none. */
export async function textCallHistory(stateDir: string): Promise<TextCallHistory[]> {
  const { entries } = await readQualityLedger(stateDir).catch(() => ({ entries: [] }));
  const by = new Map<string, TextCallHistory>();
  for (const e of entries) {
    const key = `${e.model}\u0000${e.engine}`;
    const row = by.get(key) ??
      { model: e.model, engine: e.engine, jobs: 0, unrun: 0, recovered: 0 };
    row.jobs++;
    if (e.unrunCall) row.unrun++;
    row.recovered += e.recovered ?? 0;
    by.set(key, row);
  }
  return [...by.values()]
    .filter((r) => r.unrun > 0 || r.recovered > 0)
    .sort((a, b) =>
      b.unrun - a.unrun || b.recovered - a.recovered || a.model.localeCompare(b.model)
    );
}

/** One line of the history, for the probe's table. */
export function historyLine(r: TextCallHistory): string {
  const parts: string[] = [];
  if (r.unrun > 0) {
    parts.push(
      `${r.unrun} of ${r.jobs} ${r.engine} job${r.jobs === 1 ? "" : "s"} ended on a tool call ` +
        `written as text that did not run`,
    );
  }
  if (r.recovered > 0) {
    parts.push(`${r.recovered} call${r.recovered === 1 ? "" : "s"} recovered from text and run`);
  }
  if (r.unrun === 0) parts.unshift(`${r.engine}, ${r.jobs} job${r.jobs === 1 ? "" : "s"}`);
  return parts.join("; ");
}
