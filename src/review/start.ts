/**
 * Starting a review, for both front ends (delegate_review and `ollama-delegate review`): the
 * server computes the diff once, fits it to the smallest context among the reviewers, and
 * starts each reviewer as a read-only job of its own on that same diff. Reviewers of a panel
 * are separate sessions given the same prompt: none can see another's answer. Each job takes
 * its turn in the shared lines like any other, and the panel itself holds no slot,
 * so a panel larger than maxConcurrent waits rather than deadlocks.
 */
import type { Agent } from "../agents/agent.ts";
import { DEFAULT_FILES_BUDGET } from "../models/prompt_sizes.ts";
import { DelegateError } from "../errors.ts";
import { reviewerTurn } from "../intake/reviewer_turn.ts";
import type { IntakeHost } from "../intake/turn_request.ts";
import type { JobView } from "../jobs/manager.ts";
import type { Runtime } from "../jobs/runtime.ts";
import { sameModel } from "../settings/model_names.ts";
import { permissionRank } from "../settings/narrow.ts";
import type { EngineName, PermissionMode } from "../settings/types.ts";
import { computeDiff, fitDiff, type ReviewDiff } from "./diff.ts";
import {
  type PanelInfo,
  reviewPrompt,
  type ReviewRecord,
  reviewRecord,
  writeReview,
} from "./review_file.ts";

/**
 * What a front end lends a review: the intake's host (settings, job layer, agents, the
 * project that asked) and its check of directories.
 */
export interface ReviewHost extends IntakeHost {
  /** The real path of a directory a reviewer may run in; throws, in the front end's words. */
  allowedDir(path: string, what: string): Promise<string>;
}

export interface ReviewRequest {
  /** Inside the repository to review; already allowed by the front end. */
  cwd: string;
  base?: string | undefined;
  focus?: string | undefined;
  model?: string | undefined;
  engine?: EngineName | undefined;
  agent?: string | undefined;
  /** A panel: one reviewer per model (as `agent`, or the reviewer) and per agent (on `model`). */
  models?: readonly string[] | undefined;
  agents?: readonly string[] | undefined;
  minAgreement?: number | undefined;
  /**
   * The diff, when the caller computed it already for this cwd and base (the review gate
   * does, for its fingerprint): the reviewers then see exactly the changes it looked at, and
   * git runs once (one command per untracked file, up to 200).
   */
  diff?: ReviewDiff | undefined;
}

export interface StartedReview {
  /** The reviewers' jobs in the panel's order; the first holds a panel's merged findings. */
  views: JobView[];
  record: ReviewRecord;
}

export const PANEL_MIN = 2;
export const PANEL_MAX = 5;

/** The only tools a reviewer gets, whatever its agent file says: a review changes nothing. */
const READ_ONLY_TOOLS = ["Read", "Grep", "Glob"];
/** The widest mode a review runs in: only pre-approved (read-only) tools run. */
const REVIEW_MODE: PermissionMode = "dontAsk";
/** Tokens kept for the system prompt, tool schemas, the instructions and the answer. */
const REVIEW_RESERVE_TOKENS = 12_288;

/** The agent's tools cut down to the read-only ones (in whatever form the agent allows them). */
function reviewTools(agent: Agent): string[] {
  if (agent.tools === undefined) return READ_ONLY_TOOLS;
  const names = agent.tools.map((t) => /^\s*([A-Za-z][\w-]*)/.exec(t)?.[1]);
  return READ_ONLY_TOOLS.filter((t) => names.includes(t));
}

/** The reviewers a request names, as (model, agent) pairs; one when it names no panel. */
export function panelMembers(req: ReviewRequest): Array<{ model?: string; agent: string }> {
  const models = req.models ?? [];
  const agents = req.agents ?? [];
  if (models.length === 0 && agents.length === 0) {
    if (req.minAgreement !== undefined && req.minAgreement > 1) {
      throw new DelegateError(
        `Cannot review: min_agreement ${req.minAgreement} needs a panel. Pass models or agents ` +
          `(${PANEL_MIN}-${PANEL_MAX} reviewers)`,
      );
    }
    return [{
      ...(req.model !== undefined ? { model: req.model } : {}),
      agent: req.agent ?? "reviewer",
    }];
  }
  if (req.model !== undefined && models.length > 0) {
    throw new DelegateError(
      "Cannot review: pass model (one reviewer, or the model of each of agents) or models, " +
        "not both",
    );
  }
  if (req.agent !== undefined && agents.length > 0) {
    throw new DelegateError(
      "Cannot review: pass agent (the agent of each of models) or agents, not both",
    );
  }
  const out = [
    ...models.map((m) => ({ model: m, agent: req.agent ?? "reviewer" })),
    ...agents.map((a) => ({ ...(req.model !== undefined ? { model: req.model } : {}), agent: a })),
  ];
  if (out.length < PANEL_MIN || out.length > PANEL_MAX) {
    throw new DelegateError(
      `Cannot review: a panel has ${PANEL_MIN}-${PANEL_MAX} reviewers, and models and agents ` +
        `name ${out.length}. For one reviewer pass model or agent instead`,
    );
  }
  const min = req.minAgreement ?? 1;
  if (min > out.length) {
    throw new DelegateError(
      `Cannot review: min_agreement ${min} is more than the panel's ${out.length} reviewers. ` +
        `Pass ${out.length} or less`,
    );
  }
  return out;
}

/** Tokens the diff may take for `model`: its context less a reserve, when Ollama reports it. */
async function diffBudget(runtime: Runtime, model: string): Promise<number> {
  const entry = await runtime.catalog.view().then(
    (v) => v.entries.find((e) => sameModel(e.name, model)),
    () => undefined,
  );
  if (!entry?.contextLength) return DEFAULT_FILES_BUDGET;
  return Math.min(DEFAULT_FILES_BUDGET, Math.max(0, entry.contextLength - REVIEW_RESERVE_TOKENS));
}

/** The review's limits on an agent: read-only tools, a mode no wider than REVIEW_MODE. */
function reviewLimits(agent: Agent) {
  const own = agent.permissionMode;
  return {
    allowedTools: reviewTools(agent),
    disallowedTools: ["Bash", "Write", "Edit"],
    permissionMode: own !== undefined && permissionRank(own) <= permissionRank(REVIEW_MODE)
      ? own
      : REVIEW_MODE,
  };
}

/** Starts the review a request asks for; throws a DelegateError (or JobError) when it cannot. */
export async function startReview(host: ReviewHost, req: ReviewRequest): Promise<StartedReview> {
  const s = host.resolved.settings;
  const members = panelMembers(req);
  const diff = req.diff ?? await computeDiff(req.cwd, req.base, s.allowSecretFiles);
  if (diff.files.length === 0) {
    throw new DelegateError(
      `Nothing to review: ${diff.label} in ${diff.root} ${
        req.base === undefined ? "are none (git diff HEAD is empty)" : "change nothing"
      }`,
    );
  }
  const root = await host.allowedDir(diff.root, "cwd");
  const reviewers = [];
  for (const m of members) {
    reviewers.push(
      await reviewerTurn(host, { ...m, engine: req.engine, cwd: root, limits: reviewLimits }),
    );
  }
  for (const [i, r] of reviewers.entries()) {
    const twin = reviewers.findIndex((o) =>
      o.agent.name === r.agent.name && sameModel(o.turn.model, r.turn.model) &&
      o.turn.backend === r.turn.backend
    );
    if (twin !== i) {
      throw new DelegateError(
        `Cannot review: the panel names model "${r.turn.model}" as agent "${r.agent.name}" ` +
          "twice. Name different models or agents",
      );
    }
  }
  const runtime = await host.runtime();
  let budget = Infinity;
  for (const r of reviewers) {
    budget = Math.min(budget, await diffBudget(runtime, r.turn.model));
  }
  const fit = fitDiff(diff.files, budget, s.allowSecretFiles);
  if (fit.sent.length === 0) {
    throw new DelegateError(
      `Cannot review: none of the changed files can be sent (${
        fit.notSent.slice(0, 10).map((n) => `${n.path}: ${n.reason}`).join("; ")
      }). Review fewer changes, or use a model with a longer context`,
    );
  }
  const prompt = reviewPrompt(diff, fit, req.focus);
  const { manager, store } = runtime;
  const views: JobView[] = [];
  try {
    for (const r of reviewers) views.push(await manager.start({ prompt, ...r.turn }));
  } catch (e) {
    // Half a panel is not what was asked for: the reviewers already started are stopped.
    await Promise.all(views.map((v) => manager.cancel(v.record.id).catch(() => {})));
    throw e;
  }
  const panel: PanelInfo | undefined = views.length > 1
    ? {
      members: views.map((v) => ({
        id: v.record.id,
        model: v.record.model,
        agent: v.record.agent ?? "reviewer",
      })),
      minAgreement: req.minAgreement ?? 1,
    }
    : undefined;
  const record = { ...reviewRecord(diff, fit, req.focus), ...(panel ? { panel } : {}) };
  for (const v of views) {
    const id = v.record.id;
    try {
      await writeReview(store.dirOf(id), record);
    } catch (e) {
      // The jobs run all the same; without the file a reply is the reviewer's raw text.
      throw new DelegateError(
        `Review job ${id} started, but its diff's line map could not be saved in ` +
          `${store.dirOf(id)} (${(e as Error).message}), so its findings cannot be checked. ` +
          `Read its raw reply with delegate_result({ job_id: "${id}" })`,
        { cause: e },
      );
    }
  }
  return { views, record };
}
