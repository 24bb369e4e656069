/** What the server checks after a turn (verify) and a job's budgets, from a request and its agent. */
import { DelegateError } from "../errors.ts";
import type { JobChecks } from "../jobs/record.ts";

/**
 * The request's checks and budgets, else the agent's; `inherited` are a session's, which a
 * follow-up keeps unless it sets its own (so `verifyRounds` alone is fine there).
 */
export function requestChecks(
  req: {
    verify?: string | readonly string[] | undefined;
    verifyRounds?: number | undefined;
    budgetTokens?: number | undefined;
    budgetUsd?: number | undefined;
  },
  agent?: { verify?: string[]; verifyRounds?: number },
  inherited?: JobChecks,
): JobChecks {
  const verify = req.verify === undefined
    ? agent?.verify
    : typeof req.verify === "string"
    ? [req.verify]
    : [...(req.verify as readonly string[])];
  if (req.verifyRounds !== undefined && !verify?.length && !inherited?.verify?.length) {
    throw new DelegateError(
      "Cannot use verify_rounds without verify: give the command(s) the server should run " +
        'after the turn, e.g. verify: "npm test"',
    );
  }
  const rounds = req.verifyRounds ??
    (req.verify === undefined ? agent?.verifyRounds : undefined);
  return {
    ...(verify?.length ? { verify } : {}),
    ...(rounds !== undefined ? { verifyRounds: rounds } : {}),
    ...(req.budgetTokens !== undefined ? { budgetTokens: req.budgetTokens } : {}),
    ...(req.budgetUsd !== undefined ? { budgetUsd: req.budgetUsd } : {}),
  };
}
