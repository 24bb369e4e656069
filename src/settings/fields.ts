import { z } from "zod";
import { normalizeBaseUrl } from "./base_url.ts";

/** How eagerly the orchestrator is told to delegate (seed 002, "Delegation modes"). */
export const DELEGATION_MODES = ["off", "ondemand", "auto"] as const;
export type DelegationMode = typeof DELEGATION_MODES[number];

/** Claude Code's `--permission-mode` choices; `default` is the pre-2.1.200 name of `manual`. */
export const PERMISSION_MODES = [
  "auto",
  "acceptEdits",
  "bypassPermissions",
  "manual",
  "default",
  "dontAsk",
  "plan",
] as const;
export type PermissionMode = typeof PERMISSION_MODES[number];

/** setTimeout fires at once above this (weakness 8), so a longer timeout cannot work. */
export const MAX_TIMER_MS = 2_147_483_647;

/** Every setting, with its type. Field names are the seed's, so config files carry over. */
export interface Settings {
  baseUrl: string;
  defaultModel: string;
  allowedModels: string[];
  delegationMode: DelegationMode;
  defaultPermissionMode: PermissionMode;
  claudeBin: string;
  claudeConfigDir: string;
  stateDir: string;
  jobTimeoutMs: number;
  maxInlineChars: number;
  maxConcurrent: number;
  defaultWaitSeconds: number;
}
export type SettingKey = keyof Settings;

/** One setting's contract: its default, environment names, file schema and env parser. */
export interface FieldSpec<K extends SettingKey = SettingKey> {
  key: K;
  /** Environment variables, first match wins. */
  env: readonly string[];
  default: Settings[K];
  /** Validates (and normalises) a value from a file or from `fromEnv`. */
  schema: z.ZodType<Settings[K]>;
  /** Turns an environment string into the value `schema` expects. */
  fromEnv: (text: string) => unknown;
  /** One line for `--help`, the README table and `ollama_models`. */
  meaning: string;
  /** Paths get `~` expanded after validation. */
  isPath?: boolean;
}

const modelName = z.string().trim().min(1, "a model name cannot be empty").max(256)
  .refine((s) => !/[\s,]/.test(s), "a model name cannot contain spaces or commas");

const intIn = (min: number, max: number) =>
  z.number().int(`must be a whole number from ${min} to ${max}`).min(
    min,
    `must be at least ${min}`,
  ).max(max, `must be at most ${max}`);

const asNumber = (text: string): unknown => {
  const t = text.trim();
  return /^-?\d+(\.\d+)?$/.test(t) ? Number(t) : t;
};

const asList = (text: string): unknown =>
  text.split(",").map((s) => s.trim()).filter((s) => s !== "");

const identity = (text: string): unknown => text;

const pathString = z.string().trim().min(1, "a path cannot be empty");

const url = z.string().transform((s, ctx) => {
  try {
    return normalizeBaseUrl(s);
  } catch (e) {
    ctx.addIssue({ code: "custom", message: (e as Error).message });
    return z.NEVER;
  }
});

function field<K extends SettingKey>(spec: FieldSpec<K>): FieldSpec<K> {
  return spec;
}

/** The settings table, in the order `config` prints it. */
export const FIELDS = [
  field({
    key: "delegationMode",
    env: ["OLLAMA_MCP_DELEGATION_MODE"],
    default: "ondemand",
    schema: z.enum(DELEGATION_MODES),
    fromEnv: (t) => t.trim(),
    meaning: "How eagerly delegation is used: off, ondemand, auto",
  }),
  field({
    key: "allowedModels",
    env: ["OLLAMA_MCP_ALLOWED_MODELS"],
    default: [],
    schema: z.array(modelName).max(500),
    fromEnv: asList,
    meaning: "Models delegation may use; empty means all",
  }),
  field({
    key: "defaultModel",
    env: ["OLLAMA_MCP_DEFAULT_MODEL"],
    default: "",
    schema: z.union([z.literal(""), modelName]),
    fromEnv: (t) => t.trim(),
    meaning: "Model when a call names none; empty picks the first allowed cloud model",
  }),
  field({
    key: "defaultPermissionMode",
    env: ["OLLAMA_MCP_PERMISSION_MODE"],
    default: "acceptEdits",
    schema: z.enum(PERMISSION_MODES),
    fromEnv: (t) => t.trim(),
    meaning: "Permission mode for delegates when a call names none",
  }),
  field({
    key: "baseUrl",
    env: ["OLLAMA_MCP_BASE_URL", "OLLAMA_HOST"],
    default: "http://127.0.0.1:11434",
    schema: url,
    fromEnv: identity,
    meaning: "Ollama endpoint",
  }),
  field({
    key: "claudeBin",
    env: ["OLLAMA_MCP_CLAUDE_BIN"],
    default: "claude",
    schema: pathString,
    fromEnv: identity,
    meaning: "Claude Code CLI: a name looked up on PATH, or a path",
    isPath: true,
  }),
  field({
    key: "claudeConfigDir",
    env: ["OLLAMA_MCP_CLAUDE_CONFIG_DIR"],
    default: "~/.ollama-mcp/claude",
    schema: pathString,
    fromEnv: identity,
    meaning: "CLAUDE_CONFIG_DIR of delegates, kept apart from your own ~/.claude",
    isPath: true,
  }),
  field({
    key: "stateDir",
    env: ["OLLAMA_MCP_STATE_DIR"],
    default: "~/.ollama-mcp/jobs",
    schema: pathString,
    fromEnv: identity,
    meaning: "Job records: prompts, transcripts, results",
    isPath: true,
  }),
  field({
    key: "jobTimeoutMs",
    env: ["OLLAMA_MCP_JOB_TIMEOUT_MS"],
    default: 1_800_000,
    schema: intIn(1000, MAX_TIMER_MS),
    fromEnv: asNumber,
    meaning: "Hard limit for one turn, in milliseconds",
  }),
  field({
    key: "maxInlineChars",
    env: ["OLLAMA_MCP_MAX_INLINE_CHARS"],
    default: 60_000,
    schema: intIn(200, 10_000_000),
    fromEnv: asNumber,
    meaning: "Output above this is cut in replies; the full text stays on disk",
  }),
  field({
    key: "maxConcurrent",
    env: ["OLLAMA_MCP_MAX_CONCURRENT"],
    default: 4,
    schema: intIn(1, 64),
    fromEnv: asNumber,
    meaning: "Delegates running at once; more are queued",
  }),
  field({
    key: "defaultWaitSeconds",
    env: ["OLLAMA_MCP_DEFAULT_WAIT"],
    default: 0,
    schema: intIn(0, 600),
    fromEnv: asNumber,
    meaning: "wait_seconds when a call gives none",
  }),
] as const satisfies readonly FieldSpec[];

/** Looks a field up by key. */
export function fieldOf<K extends SettingKey>(key: K): FieldSpec<K> {
  const spec = FIELDS.find((f) => f.key === key);
  if (!spec) throw new TypeError(`Unknown setting "${key}"`);
  return spec as unknown as FieldSpec<K>;
}

/** The built-in defaults, before `~` expansion. */
export function defaultSettings(): Settings {
  const out: Record<string, unknown> = {};
  for (const f of FIELDS) out[f.key] = structuredClone(f.default);
  return out as unknown as Settings;
}
