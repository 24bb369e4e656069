/**
 * delegate_review: the server computes the diff (uncommitted changes, or base...HEAD), fits it
 * to the model's context, and starts a read-only job as the `reviewer` agent (built in, or the
 * user's or project's file of that name) that must answer in findings JSON. The reply of the
 * finished job (here or from delegate_result) lists the findings that point into the diff.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { z } from "zod";
import type { Agent } from "../agents/agent.ts";
import { DEFAULT_FILES_BUDGET } from "../engines/native/one_shot.ts";
import { DelegateError } from "../errors.ts";
import { sameModel } from "../models/names.ts";
import { computeDiff, fitDiff } from "../review/diff.ts";
import { reviewPrompt, reviewRecord, writeReview } from "../review/review_file.ts";
import { permissionRank } from "../settings/narrow.ts";
import type { PermissionMode } from "../settings/types.ts";
import { callAgent } from "./agent_args.ts";
import { allowedDir } from "./inputs.ts";
import { replyAfterWait, startJob } from "./job_replies.ts";
import type { shapes } from "./shapes.ts";
import type { ToolDeps, ToolExtra } from "./tool_deps.ts";

export type ReviewArgs = z.infer<z.ZodObject<typeof shapes.review>>;

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

/** Tokens the diff may take: the model's context less a reserve, when Ollama reports it. */
async function diffBudget(deps: ToolDeps, model: string | undefined): Promise<number> {
  const { catalog } = await deps.runtime();
  const name = model ?? (await catalog.defaultModel());
  if (name === undefined) return DEFAULT_FILES_BUDGET;
  const entry = await catalog.view().then(
    (v) => v.entries.find((e) => sameModel(e.name, name)),
    () => undefined,
  );
  if (!entry?.contextLength) return DEFAULT_FILES_BUDGET;
  return Math.min(DEFAULT_FILES_BUDGET, Math.max(0, entry.contextLength - REVIEW_RESERVE_TOKENS));
}

export function reviewHandler(deps: ToolDeps) {
  return async (args: ReviewArgs, extra: ToolExtra): Promise<CallToolResult> => {
    const cwd = await allowedDir(
      args.cwd ?? deps.serverCwd,
      deps.serverCwd,
      args.cwd === undefined ? "cwd (the server's own, used when a call names none)" : "cwd",
      deps.workdirs,
    );
    const agent = await callAgent(deps, args.agent ?? "reviewer");
    const diff = await computeDiff(cwd, args.base, deps.resolved.settings.allowSecretFiles);
    if (diff.files.length === 0) {
      throw new DelegateError(
        `Nothing to review: ${diff.label} in ${diff.root} ${
          args.base === undefined ? "are none (git diff HEAD is empty)" : "change nothing"
        }`,
      );
    }
    const fit = fitDiff(
      diff.files,
      await diffBudget(deps, args.model ?? agent.model),
      deps.resolved.settings.allowSecretFiles,
    );
    if (fit.sent.length === 0) {
      throw new DelegateError(
        `Cannot review: none of the changed files can be sent (${
          fit.notSent.slice(0, 10).map((n) => `${n.path}: ${n.reason}`).join("; ")
        }). Review fewer changes, or use a model with a longer context`,
      );
    }
    const own = agent.permissionMode;
    const view = await startJob(deps, {
      prompt: reviewPrompt(diff, fit, args.focus),
      cwd: diff.root,
      agent: agent.name,
      ...(args.model !== undefined ? { model: args.model } : {}),
      ...(args.engine !== undefined ? { engine: args.engine } : {}),
      allowed_tools: reviewTools(agent),
      disallowed_tools: ["Bash", "Write", "Edit"],
      permission_mode: own !== undefined && permissionRank(own) <= permissionRank(REVIEW_MODE)
        ? own
        : REVIEW_MODE,
    });
    const { store } = await deps.runtime();
    const id = view.record.id;
    try {
      await writeReview(store.dirOf(id), reviewRecord(diff, fit, args.focus));
    } catch (e) {
      // The job runs all the same; without the file its reply is the reviewer's raw text.
      throw new DelegateError(
        `Review job ${id} started, but its diff's line map could not be saved in ` +
          `${store.dirOf(id)} (${(e as Error).message}), so its findings cannot be checked. ` +
          `Read its raw reply with delegate_result({ job_id: "${id}" })`,
        { cause: e },
      );
    }
    return await replyAfterWait(deps, view, args.wait_seconds, extra, "Review started.\n");
  };
}
