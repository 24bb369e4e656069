import type { DelegationMode } from "../settings/fields.ts";

/** What the descriptions need to know about the user's policy. */
export interface DescriptionContext {
  mode: DelegationMode;
  allowedModels: readonly string[];
  defaultModel: string;
  permissionMode: string;
}

const POLICY =
  "The delegation mode, allowed models and defaults are the user's settings, changed only by " +
  "the user from a terminal; they are not yours to change or work around.";

function whenToUse(mode: DelegationMode): string {
  if (mode === "auto") {
    return "WHEN TO USE — PROACTIVELY, YOUR CALL: delegate work that is self-contained, cheap to " +
      "verify and hungry for context: bulk summaries of files, first-pass searches, mechanical " +
      "refactors, boilerplate and test scaffolding, log or diff triage. Keep architecture " +
      "decisions, security-sensitive changes, unclear requirements and final review yourself. " +
      "Check what a delegate claims before relying on it: its tool-call count and activity are " +
      "the evidence.";
  }
  return "WHEN TO USE — ON EXPLICIT REQUEST ONLY: use this only when the user asks for delegation " +
    '("delegate this", "use ollama", "ask qwen", or names a model). Otherwise do the work ' +
    "yourself and do not mention these tools.";
}

function models(ctx: DescriptionContext): string {
  const allowed = ctx.allowedModels.length > 0
    ? `Allowed models: ${ctx.allowedModels.join(", ")}.`
    : "Allowed models: any model Ollama serves (see ollama_models).";
  const def = ctx.defaultModel
    ? `Default model: ${ctx.defaultModel}.`
    : "Default model: chosen automatically (first allowed cloud model).";
  return `${allowed} ${def} Default permission mode: ${ctx.permissionMode}.`;
}

/** Tool descriptions, rewritten per delegation mode as in seed 002. */
export function descriptions(ctx: DescriptionContext): Record<string, string> {
  const use = whenToUse(ctx.mode);
  return {
    ollama_models:
      "List the models Ollama serves and report this server's settings: endpoint, delegation " +
      "mode, allowed and default model, permission mode, the environment given to delegates, " +
      `and any invalid setting. Read-only. ${POLICY}`,
    delegate_start:
      "Start a task in a separate Claude Code session that runs on an Ollama model, with its own " +
      "clean environment. Returns a job_id at once (or waits up to wait_seconds, max 600); the " +
      "delegate keeps working in the background. Poll with delegate_status, collect with " +
      `delegate_result, continue with delegate_followup. ${use} ${models(ctx)} ${POLICY}`,
    delegate_followup:
      "Send another message to a delegated session (by job_id or session_id); it remembers " +
      "earlier turns and keeps their restrictions (tools, permission mode, directories) unless " +
      "you override them. Refused while a turn of that session is still running. " + use,
    delegate_status:
      "State of a delegated job plus its recent activity (tool calls, text, errors). " +
      "wait_seconds blocks until it finishes or the time passes (max 600).",
    delegate_result:
      "Final output of a delegated job, with its tool-call count and permission denials; a " +
      "result with zero tool calls is unverified. wait_seconds blocks for up to 600 s.",
    delegate_cancel: "Stop a delegated job and every process it started, and record how it ended.",
    delegate_list:
      "List delegated jobs, newest first, grouped by conversation (session), with state, turn, " +
      "elapsed time and the start of each prompt.",
  };
}
