/**
 * `model: "auto"`: which allowed model a job runs on, chosen by the verified record of each in
 * the quality ledger for the same agent, engine and repository.
 *
 * The rule, Beta-UCB with a cost weight: a model whose checks passed s times and failed f times
 * has the posterior Beta(1 + s, 1 + f) for its pass rate; its score is that posterior's mean
 * plus one standard deviation (optimism where the record is thin), divided by a cost weight,
 * the square root of its cost per job over the cheapest candidate's (1 when a cost is unknown).
 * The highest score wins; ties go to the model with fewer passes of a check its delegate
 * changed (each counts as a check not passed, ledger.ts), then to more records, then to the
 * earlier one in the allowed list. A model without a record scores 0.79 (mean 0.5 plus 0.29),
 * so it is tried when the best known model's record is weak, and not while one has earned
 * trust (9 of 10 scores 0.94). Without a verified record for any candidate the job gets the
 * default model.
 */
import { canonicalModelName, sameModel } from "../settings/model_names.ts";
import type { LedgerEntry } from "./ledger/ledger.ts";

export interface RouteInput {
  /** The models that may be chosen, in the user's order (the allowed list). */
  candidates: readonly string[];
  /** The ledger's entries for this agent, engine and repository. */
  entries: readonly LedgerEntry[];
  /** The agent's name as the ledger has it (`adhoc` for none), for the reason. */
  agent: string;
}

export interface Route {
  /** undefined: no record to go by, the default model. */
  model?: string;
  /** The backend the chosen model's newest job used (native), when it has one. */
  backend?: string;
  /** Why, for the reply: `auto: 9 of 10 verified for "tester" here; llama3.2:3b 2 of 6`. */
  reason: string;
}

interface Scored {
  model: string;
  passed: number;
  checked: number;
  /** Checks passed only after the delegate changed them (counted as not passed). */
  changed: number;
  costPerJob: number | null;
  backend?: string;
  score: number;
}

/** Beta(a, b)'s mean plus one standard deviation. */
export function optimisticRate(passed: number, failed: number): number {
  const a = 1 + passed;
  const b = 1 + failed;
  const mean = a / (a + b);
  const sd = Math.sqrt((a * b) / ((a + b) ** 2 * (a + b + 1)));
  return mean + sd;
}

export function routeByRecord(input: RouteInput): Route {
  const scored: Scored[] = [];
  for (const model of input.candidates) {
    const own = input.entries.filter((e) => sameModel(e.model, model));
    const checked = own.filter((e) => e.verified !== null);
    const passed = checked.filter((e) => e.verified === true).length;
    const priced = own.length > 0 && own.every((e) => e.cost !== null);
    const newest = own.reduce<LedgerEntry | undefined>(
      (a, e) => (!a || e.at > a.at ? e : a),
      undefined,
    );
    scored.push({
      model,
      passed,
      checked: checked.length,
      changed: own.filter((e) => e.checkChanged === "passed").length,
      costPerJob: priced ? own.reduce((n, e) => n + (e.cost ?? 0), 0) / own.length : null,
      ...(newest ? { backend: newest.backend } : {}),
      score: 0,
    });
  }
  const agent = `"${input.agent}"`;
  if (!scored.some((s) => s.checked > 0)) {
    return { reason: `auto: no verified record for ${agent} here yet, so the default model` };
  }
  const costs = scored.map((s) => s.costPerJob).filter((c): c is number => c !== null && c > 0);
  const cheapest = costs.length > 0 ? Math.min(...costs) : undefined;
  for (const s of scored) {
    const weight = cheapest !== undefined && s.costPerJob !== null && s.costPerJob > 0
      ? Math.sqrt(s.costPerJob / cheapest)
      : 1;
    s.score = optimisticRate(s.passed, s.checked - s.passed) / weight;
  }
  const order = [...scored].sort((a, b) =>
    b.score - a.score || a.changed - b.changed || b.checked - a.checked ||
    scored.indexOf(a) - scored.indexOf(b)
  );
  const best = order[0]!;
  const record = (s: Scored) =>
    s.checked === 0
      ? "untried"
      : `${s.passed} of ${s.checked}${
        s.changed > 0 ? ` (${s.changed} passed a check it changed, not counted)` : ""
      }`;
  const why = best.checked > 0
    ? `${record(best)} verified for ${agent} here`
    : `exploring, no verified record for ${agent} here yet`;
  const others = order.slice(1, 4).map((s) => `${canonicalModelName(s.model)} ${record(s)}`);
  const more = order.length > 4 ? `, +${order.length - 4} more` : "";
  return {
    model: best.model,
    ...(best.backend ? { backend: best.backend } : {}),
    reason: `auto: ${why}${others.length > 0 ? `; ${others.join(", ")}${more}` : ""}`,
  };
}
