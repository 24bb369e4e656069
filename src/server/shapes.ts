/**
 * zod shapes of the tool inputs: the single source of truth for names and ranges.
 */
import { z } from "zod";
import { EFFORTS, ENGINES, ISOLATIONS, PERMISSION_MODES } from "../settings/types.ts";

import { MAX_PROMPT_BYTES } from "../intake/inputs.ts";

export { MAX_PROMPT_BYTES };

// Limits are checked in refinements rather than as JSON Schema keywords: every keyword is
// sent to the orchestrator with the tool list on each turn (all tools stay under 2,500
// tokens), and the limits are only there to refuse abuse, not to guide the model.

/** A list of strings, each non-empty and at most `maxChars`, at most `maxItems` of them. */
function stringList(
  what: string,
  maxItems: number,
  maxChars: number,
  check?: (s: string) => string | undefined,
) {
  return z.array(z.string()).superRefine((list, ctx) => {
    if (list.length > maxItems) {
      ctx.addIssue({ code: "custom", message: `${what}: at most ${maxItems} entries` });
    }
    for (const item of list) {
      const problem = item === ""
        ? "entries cannot be empty"
        : item.length > maxChars
        ? `entries are at most ${maxChars} characters`
        : check?.(item);
      if (problem) {
        ctx.addIssue({ code: "custom", message: `${what}: ${problem}` });
        return;
      }
    }
  });
}

const toolRules = () =>
  stringList(
    "tool rules",
    100,
    500,
    (s) =>
      /[\r\n]/.test(s) || s.startsWith("-")
        ? "a tool rule is a name like Read or Bash(git *), without line breaks or a leading '-'"
        : undefined,
  );

const maxChars = (what: string, max: number) =>
  z.string().refine((s) => s.length <= max, `${what} is at most ${max} characters`);

/** `verify`: one shell command or a list; each one line of at most 4,000 characters. */
const verifyCommands = z.union([z.string(), z.array(z.string())]).superRefine((value, ctx) => {
  const list = typeof value === "string" ? [value] : value;
  const problem = list.length === 0 || list.length > 10
    ? "verify: give 1 to 10 commands"
    : list.some((c) => c.trim() === "")
    ? "verify: a command cannot be empty"
    : list.some((c) => c.length > 4000 || c.includes("\0"))
    ? "verify: a command is at most 4000 characters, without NUL"
    : undefined;
  if (problem) ctx.addIssue({ code: "custom", message: problem });
});

const verifyRounds = z.number().refine(
  (n) => Number.isInteger(n) && n >= 0 && n <= 5,
  "verify_rounds must be a whole number from 0 to 5",
);

const waitSeconds = z.number().min(0, "wait_seconds must be 0 or more")
  .max(600, "wait_seconds must be at most 600; poll with delegate_status for longer waits")
  .optional().describe("Wait up to N s for the end (0-600)");

/** zod shapes of the tool inputs: the single source of truth for names and ranges. */
export const shapes = {
  start: {
    prompt: z.string().optional().describe("The task. Use this or prompt_file"),
    prompt_file: maxChars("prompt_file", 4096).optional().describe(
      "File holding the prompt",
    ),
    model: maxChars("model", 256).optional().describe("Ollama model, or auto"),
    cwd: maxChars("cwd", 4096).optional().describe(
      "Working directory",
    ),
    // What a delegate may run (issue 29); a reply's `sandbox:` line says when it is less.
    permission_mode: z.enum(PERMISSION_MODES).optional().describe(
      "acceptEdits: edits, runs commands in its sandbox; plan: read-only",
    ),
    allowed_tools: toolRules().optional().describe(
      'e.g. ["Read","Grep","Bash(git *)"]',
    ),
    disallowed_tools: toolRules().optional().describe('e.g. ["Write","Edit"]'),
    append_system_prompt: maxChars("append_system_prompt", 100_000).optional(),
    max_turns: z.number().int("max_turns must be a whole number").min(
      1,
      "max_turns must be at least 1",
    )
      .max(1000, "max_turns must be at most 1000").optional(),
    add_dirs: stringList("add_dirs", 50, 4096).optional().describe(
      "Extra writable directories",
    ),
    engine: z.enum(ENGINES).optional().describe(
      "claude or native (own lean loop)",
    ),
    backend: maxChars("backend", 64).optional().describe(
      "a configured backend (claude: one of kind ollama or anthropic)",
    ),
    effort: z.enum(EFFORTS).optional().describe("native: thinking off, low, high or max"),
    files: stringList("files", 200, 4096).optional().describe(
      "native: files put into the prompt (a one-shot with allowed_tools [])",
    ),
    // Few words each: every description costs the orchestrator's context on each turn.
    isolation: z.enum(ISOLATIONS).optional().describe("worktree: own git branch"),
    include_uncommitted: z.boolean().optional(),
    agent: maxChars("agent", 64).optional().describe("named agent, see ollama_models"),
    verify: verifyCommands.optional().describe("command(s) the server runs after; must pass"),
    verify_rounds: verifyRounds.optional(),
    budget_tokens: z.number().refine(
      (n) => Number.isInteger(n) && n >= 1 && n <= 1e9,
      "budget_tokens must be a whole number from 1 to 1000000000",
    ).optional(),
    budget_usd: z.number().refine(
      (n) => n > 0 && n <= 10_000,
      "budget_usd must be more than 0 and at most 10000",
    ).optional(),
    wait_seconds: waitSeconds,
  },
  review: {
    base: maxChars("base", 256).refine(
      (s) => /^[A-Za-z0-9_][A-Za-z0-9._/@{}~^+-]*$/.test(s) && !s.includes(".."),
      "base is a git ref (a branch, tag or commit), without a leading '-' or '..'",
    ).optional().describe("else uncommitted changes"),
    focus: maxChars("focus", 200).optional(),
    cwd: maxChars("cwd", 4096).optional(),
    model: maxChars("model", 256).optional(),
    engine: z.enum(ENGINES).optional(),
    agent: maxChars("agent", 64).optional(),
    // A panel's size (2-5) is checked with the agents it adds (src/review/start.ts).
    models: stringList("models", 5, 256).optional(),
    agents: stringList("agents", 5, 64).optional(),
    min_agreement: z.number().int().refine(
      (n) => n >= 1 && n <= 5,
      "min_agreement is 1-5: how many reviewers must have found a finding",
    ).optional(),
    // Checked in a refinement: delegate_start's wait_seconds already tells what it means.
    wait_seconds: z.number().refine(
      (n) => n >= 0 && n <= 600,
      "wait_seconds must be 0-600; poll with delegate_status for longer waits",
    ).optional(),
  },
  followup: {
    job_id: maxChars("job_id", 256).optional().describe("A job of the session"),
    session_id: maxChars("session_id", 256).optional().describe("Or the session itself"),
    prompt: z.string().optional(),
    prompt_file: maxChars("prompt_file", 4096).optional(),
    permission_mode: z.enum(PERMISSION_MODES).optional(),
    allowed_tools: toolRules().optional(),
    disallowed_tools: toolRules().optional(),
    append_system_prompt: maxChars("append_system_prompt", 100_000).optional(),
    max_turns: z.number().int().min(1).max(1000).optional(),
    effort: z.enum(EFFORTS).optional(),
    add_dirs: stringList("add_dirs", 50, 4096).optional(),
    verify: verifyCommands.optional(),
    verify_rounds: verifyRounds.optional(),
    wait_seconds: waitSeconds,
  },
  status: {
    job_id: z.string().optional(),
    // Described in delegate_status's description: each description here costs every turn.
    job_ids: stringList("job_ids", 20, 256).optional(),
    wait: z.enum(["any", "all"]).optional(),
    wait_seconds: waitSeconds,
    progress_limit: z.number().int().min(1, "progress_limit must be at least 1")
      .max(100, "progress_limit must be at most 100").optional()
      .describe("Activity lines (default 15)"),
  },
  result: { job_id: z.string(), wait_seconds: waitSeconds },
  cancel: { job_id: z.string() },
  usage: {
    days: z.number().int().min(0).max(3650).optional().describe(
      "Last N days (default 30; 0 = all)",
    ),
  },
  list: {
    state: z.enum(["queued", "running", "completed", "failed", "cancelled", "interrupted"])
      .optional(),
    limit: z.number().int().min(1, "limit must be at least 1").max(100, "limit must be at most 100")
      .optional(),
  },
};

/** delegate_transcript's paging: entries per page and a page's size in bytes. */
export const TRANSCRIPT_PAGE = {
  defaultLimit: 20,
  maxLimit: 200,
  defaultMaxBytes: 16 * 1024,
  minMaxBytes: 1024,
  maxMaxBytes: 256 * 1024,
} as const;

const { defaultLimit, maxLimit, defaultMaxBytes, minMaxBytes, maxMaxBytes } = TRANSCRIPT_PAGE;

/** delegate_transcript's input. */
export const transcriptShape = {
  job_id: z.string(),
  offset: z.number().int("offset must be a whole number").min(0, "offset must be 0 or more")
    .optional().describe("0-based"),
  limit: z.number().int("limit must be a whole number").min(1, "limit must be at least 1")
    .max(maxLimit, `limit must be at most ${maxLimit}`).optional()
    .describe(`default ${defaultLimit}`),
  max_bytes: z.number().int("max_bytes must be a whole number")
    .min(minMaxBytes, `max_bytes must be at least ${minMaxBytes}`)
    .max(maxMaxBytes, `max_bytes must be at most ${maxMaxBytes}`).optional()
    .describe(`page size, default ${defaultMaxBytes}`),
};
