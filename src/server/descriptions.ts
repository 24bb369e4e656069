import type { DelegationMode } from "../settings/types.ts";

/** What the descriptions need to know about the user's policy. */
export interface DescriptionContext {
  mode: DelegationMode;
  allowedModels: readonly string[];
  defaultModel: string;
  permissionMode: string;
  /** The default engine, when it is not Claude Code. */
  engine?: string;
  /** The model a call without one gets, once the server has asked Ollama. */
  resolvedDefault?: string;
}

// Installed descriptions cost the user context on every turn: all tools together, schemas
// included, stay under 2,500 tokens in every mode (measured by
// tests/in_process/description_budget_test.ts). Say each thing once, where it matters.

const POLICY =
  "Delegation mode, allowed models and defaults are the user's (set from a terminal): never " +
  "change or work around them.";

function whenToUse(mode: DelegationMode): string {
  if (mode === "auto") {
    return "WHEN TO USE — PROACTIVELY, YOUR CALL: self-contained, cheaply verified, " +
      "context-hungry work (summaries, first-pass searches, mechanical refactors, " +
      "boilerplate, test scaffolding, log triage). Keep architecture, security-sensitive " +
      "changes, unclear requirements and final review yourself. Trust the server's evidence, " +
      "not the prose.";
  }
  return "WHEN TO USE — ON EXPLICIT REQUEST ONLY: only when the user asks for delegation " +
    '("delegate this", "use ollama", "ask qwen", or names a model); otherwise do the work ' +
    "yourself and do not mention these tools.";
}

function models(ctx: DescriptionContext): string {
  const allowed = ctx.allowedModels.length > 0
    ? `Allowed models: ${ctx.allowedModels.join(", ")}.`
    : "Allowed models: any Ollama serves.";
  const def = `Default: ${defaultText(ctx)}.`;
  const engine = ctx.engine && ctx.engine !== "claude" ? ` Default engine: ${ctx.engine}.` : "";
  return `${allowed} ${def} Default permission mode: ${ctx.permissionMode}.${engine}`;
}

/**
 * The model a call without one gets. Without a configured default it depends on what Ollama
 * serves (the first allowed cloud model, else the first allowed model it has), which the
 * server learns after start; until then the rule is stated.
 */
function defaultText(ctx: DescriptionContext): string {
  if (ctx.defaultModel) return ctx.defaultModel;
  if (ctx.resolvedDefault) return ctx.resolvedDefault;
  const cloud = ctx.allowedModels.find((m) => /[:-]cloud$/i.test(m));
  if (cloud) return cloud;
  return ctx.allowedModels.length > 0
    ? `the first of the allowed models that Ollama has`
    : "a cloud model Ollama serves, else its first model";
}

/**
 * Tool descriptions, rewritten per delegation mode: they are all the orchestrator reads about
 * when to delegate, so each mode's rule is written into them.
 */
export function descriptions(ctx: DescriptionContext): Record<string, string> {
  return {
    ollama_models:
      "Models Ollama serves and this server's settings (endpoint, delegation mode, allowed and " +
      "default model, permission mode, delegate environment, invalid settings). Read-only.",
    delegate_start:
      "Start a task in a separate agent session (Claude Code by default) on an Ollama model. " +
      "Returns a job_id at once (or after wait_seconds); then delegate_status, " +
      "delegate_result, delegate_followup. With verify the server checks the work itself. " +
      `${whenToUse(ctx.mode)} ${models(ctx)} ${POLICY}`,
    delegate_followup:
      "Send another message to a delegated session (job_id or session_id). It remembers " +
      "earlier turns and keeps their settings unless overridden; queued while one runs. " +
      (ctx.mode === "auto" ? "Verify what it claims." : "Only when the user asked for it."),
    delegate_review:
      "Read-only review of uncommitted changes or base...HEAD: findings in the diff, by " +
      "severity. models/agents (2-5): a blind panel, findings merged.",
    delegate_status:
      "State and recent activity of delegated jobs: job_id, or up to 20 job_ids (wait any/all).",
    delegate_result:
      "Final output of a delegated job with the server's evidence. Long output is cut; " +
      "delegate_transcript shows what it did.",
    delegate_cancel: "Stop a delegated job and every process it started.",
    delegate_list: "Delegated jobs, newest first, grouped by session.",
    delegate_transcript:
      "Page through what a delegated job did: tool calls with inputs, results, text.",
    delegate_usage: "Tokens and cost of delegated jobs, per model and per day.",
  };
}
