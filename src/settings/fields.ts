import { isWindows } from "../platform/runtime.ts";
import { z } from "zod";
import { normalizeBaseUrl } from "./base_url.ts";
import {
  narrowAllowedModels,
  narrowDelegationMode,
  type Narrowed,
  narrowNumber,
  narrowPermissionMode,
} from "./narrow.ts";

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

/** Which engine runs a delegated task. */
export const ENGINES = ["claude", "native"] as const;

/** How hard a model may think: `reasoning_effort` (OpenAI-compatible) or `think` (Ollama). */
export const EFFORTS = ["off", "low", "high", "max"] as const;
export type Effort = typeof EFFORTS[number];

/** The tools a claude delegate is given by default (`--tools`); the rest is prompt weight. */
export const DEFAULT_CLAUDE_TOOLS = ["Bash", "Read", "Edit", "Write", "Glob", "Grep"];
export type EngineName = typeof ENGINES[number];

/** How a native backend is spoken to: Ollama (`/api/*` as well) or any OpenAI-compatible server. */
export const BACKEND_KINDS = ["ollama", "openai"] as const;
export type BackendKind = typeof BACKEND_KINDS[number];

/** A named endpoint for the native engine. */
export interface BackendSpec {
  url: string;
  kind: BackendKind;
  /** The server's environment variable that holds the API key; the key itself is never stored. */
  apiKeyEnv?: string;
  maxConcurrent?: number;
}

/** Prices per million tokens, in the user's own currency unit. */
export interface Price {
  inputPerMillion: number;
  outputPerMillion: number;
}

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
  defaultEngine: EngineName;
  backends: Record<string, BackendSpec>;
  sandbox: "on" | "off";
  pricing: Record<string, Price>;
  retainDays: number;
  workspaceRoots: string[];
  allowSecretFiles: string[];
  sandboxMaxProcesses: number;
  sandboxMaxMemoryMb: number;
  sandboxMaxFileMb: number;
  sandboxTmpMb: number;
  maxContext: number;
  keepAlive: string;
  claudeTools: string[];
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
  /** A list of paths, each `~`-expanded and made absolute after validation. */
  isPathList?: boolean;
  /**
   * Not honoured from the project file, which lives in the directory delegates work in and
   * so can be written by a delegate: a model must not be able to loosen its own sandbox or
   * send API keys elsewhere.
   */
  userOnly?: boolean;
  /** Values the project file may not set: it may tighten a setting, not loosen it. */
  projectRefuses?: readonly unknown[];
  /**
   * A project file may narrow this setting, never widen it: given its valid value and the
   * value in force from the layers below (default, user file), what is honoured (narrow.ts).
   */
  projectNarrow?(project: Settings[K], below: Settings[K]): Narrowed<Settings[K]>;
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

/** A list of paths: a JSON array, or entries separated like PATH (`:`; `;` on Windows). */
const asPathList = (text: string): unknown => {
  if (text.trimStart().startsWith("[")) return asJson(text);
  return text.split(isWindows ? ";" : ":").map((s) => s.trim())
    .filter((s) => s !== "");
};

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

const asJson = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
};

const backendName = z.string().regex(
  /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/,
  "a backend name is letters, digits, '.', '_' or '-' (at most 64)",
);

const backend = z.object({
  url,
  kind: z.enum(BACKEND_KINDS).default("openai"),
  apiKeyEnv: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be an environment variable name")
    .optional(),
  maxConcurrent: intIn(1, 64).optional(),
}).strict();

const price = z.object({
  inputPerMillion: z.number().min(0, "a price cannot be negative"),
  outputPerMillion: z.number().min(0, "a price cannot be negative"),
}).strict();

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
    projectNarrow: narrowDelegationMode,
  }),
  field({
    key: "allowedModels",
    env: ["OLLAMA_MCP_ALLOWED_MODELS"],
    default: [],
    schema: z.array(modelName).max(500),
    fromEnv: asList,
    meaning: "Models delegation may use; empty means all",
    projectNarrow: narrowAllowedModels,
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
    // A delegate can write the project file: it must not be able to give the next delegates
    // an unconfined, unprompted shell.
    projectRefuses: ["auto", "bypassPermissions"],
    projectNarrow: narrowPermissionMode,
  }),
  field({
    key: "baseUrl",
    env: ["OLLAMA_MCP_BASE_URL", "OLLAMA_HOST"],
    default: "http://127.0.0.1:11434",
    schema: url,
    fromEnv: identity,
    meaning: "Ollama endpoint",
    userOnly: true,
  }),
  field({
    key: "claudeBin",
    env: ["OLLAMA_MCP_CLAUDE_BIN"],
    default: "claude",
    schema: pathString,
    fromEnv: identity,
    meaning: "Claude Code CLI: a name looked up on PATH, or a path",
    userOnly: true,
    isPath: true,
  }),
  field({
    key: "claudeConfigDir",
    env: ["OLLAMA_MCP_CLAUDE_CONFIG_DIR"],
    default: "~/.ollama-mcp/claude",
    schema: pathString,
    fromEnv: identity,
    meaning: "CLAUDE_CONFIG_DIR of delegates, kept apart from your own ~/.claude",
    userOnly: true,
    isPath: true,
  }),
  field({
    key: "stateDir",
    env: ["OLLAMA_MCP_STATE_DIR"],
    default: "~/.ollama-mcp/jobs",
    schema: pathString,
    fromEnv: identity,
    meaning: "Job records: prompts, transcripts, results",
    userOnly: true,
    isPath: true,
  }),
  field({
    key: "jobTimeoutMs",
    env: ["OLLAMA_MCP_JOB_TIMEOUT_MS"],
    default: 1_800_000,
    schema: intIn(1000, MAX_TIMER_MS),
    fromEnv: asNumber,
    meaning: "Hard limit for one turn, in milliseconds",
    projectNarrow: narrowNumber,
  }),
  field({
    key: "maxInlineChars",
    env: ["OLLAMA_MCP_MAX_INLINE_CHARS"],
    default: 60_000,
    schema: intIn(200, 10_000_000),
    fromEnv: asNumber,
    meaning: "Output above this is cut in replies; the full text stays on disk",
    // Longer replies fill the orchestrator's context, which the user pays for.
    projectNarrow: narrowNumber,
  }),
  field({
    key: "maxConcurrent",
    env: ["OLLAMA_MCP_MAX_CONCURRENT"],
    default: 4,
    schema: intIn(1, 64),
    fromEnv: asNumber,
    meaning: "Delegates running at once; more are queued",
    projectNarrow: narrowNumber,
  }),
  field({
    key: "defaultWaitSeconds",
    env: ["OLLAMA_MCP_DEFAULT_WAIT"],
    default: 0,
    schema: intIn(0, 600),
    fromEnv: asNumber,
    meaning: "wait_seconds when a call gives none",
  }),
  field({
    key: "defaultEngine",
    env: ["OLLAMA_MCP_DEFAULT_ENGINE"],
    default: "claude",
    schema: z.enum(ENGINES),
    fromEnv: (t) => t.trim(),
    meaning: "Engine when a call names none: claude (Claude Code) or native (built-in loop)",
  }),
  field({
    key: "backends",
    env: ["OLLAMA_MCP_BACKENDS"],
    default: {},
    schema: z.record(backendName, backend) as unknown as z.ZodType<Record<string, BackendSpec>>,
    fromEnv: asJson,
    meaning: "Named OpenAI-compatible endpoints for the native engine",
    userOnly: true,
  }),
  field({
    key: "sandbox",
    env: ["OLLAMA_MCP_SANDBOX"],
    default: "on",
    schema: z.enum(["on", "off"]),
    fromEnv: (t) => t.trim(),
    meaning: "Native engine Bash in bubblewrap (on); off runs it unconfined",
    userOnly: true,
  }),
  field({
    key: "pricing",
    env: ["OLLAMA_MCP_PRICING"],
    default: {},
    schema: z.record(z.string().min(1).max(256), price),
    fromEnv: asJson,
    meaning: "Cost per million input/output tokens by model; others show unknown",
    // Zero prices from a file a delegate can write would hide what delegation costs.
    userOnly: true,
  }),
  field({
    key: "retainDays",
    env: ["OLLAMA_MCP_RETAIN_DAYS"],
    default: 30,
    schema: intIn(0, 36_500),
    fromEnv: asNumber,
    meaning: "Finished jobs older than this are pruned at start; 0 keeps them forever",
    userOnly: true,
  }),
  field({
    key: "workspaceRoots",
    env: ["OLLAMA_MCP_WORKSPACE_ROOTS"],
    default: [],
    schema: z.array(pathString).max(100),
    fromEnv: asPathList,
    meaning: "When set, cwd and add_dirs of every job must lie inside one of these directories",
    userOnly: true,
    isPathList: true,
  }),
  field({
    key: "allowSecretFiles",
    env: ["OLLAMA_MCP_ALLOW_SECRET_FILES"],
    default: [],
    schema: z.array(z.string().trim().min(1).max(256)).max(100),
    fromEnv: asList,
    meaning: "Secret-looking file names (.env, *.pem...) the native file tools may read anyway",
    userOnly: true,
  }),
  field({
    key: "sandboxMaxProcesses",
    env: ["OLLAMA_MCP_SANDBOX_MAX_PROCESSES"],
    default: 512,
    schema: intIn(16, 65_536),
    fromEnv: asNumber,
    meaning: "Processes one sandboxed command may run at once",
    userOnly: true,
  }),
  field({
    key: "sandboxMaxMemoryMb",
    env: ["OLLAMA_MCP_SANDBOX_MAX_MEMORY_MB"],
    default: 2048,
    schema: intIn(64, 1_048_576),
    fromEnv: asNumber,
    meaning: "Memory (MiB) each process of a sandboxed command may allocate",
    userOnly: true,
  }),
  field({
    key: "sandboxMaxFileMb",
    env: ["OLLAMA_MCP_SANDBOX_MAX_FILE_MB"],
    default: 1024,
    schema: intIn(1, 1_048_576),
    fromEnv: asNumber,
    meaning: "Largest file (MiB) a sandboxed command may write",
    userOnly: true,
  }),
  field({
    key: "sandboxTmpMb",
    env: ["OLLAMA_MCP_SANDBOX_TMP_MB"],
    default: 512,
    schema: intIn(1, 1_048_576),
    fromEnv: asNumber,
    meaning: "Size (MiB) of the sandbox's private /tmp (also its HOME)",
    userOnly: true,
  }),
  field({
    key: "maxContext",
    env: ["OLLAMA_MCP_MAX_CONTEXT"],
    default: 0,
    schema: intIn(0, 10_000_000),
    fromEnv: asNumber,
    meaning: "Largest context (tokens) the native engine asks Ollama for; 0 = the model's own",
    userOnly: true,
  }),
  field({
    key: "keepAlive",
    env: ["OLLAMA_MCP_KEEP_ALIVE"],
    default: "",
    schema: z.string().trim().regex(
      /^$|^-?\d+(\.\d+)?(ms|s|m|h)?$/,
      "is a duration like 30m, 1h, 0 (unload at once) or -1 (keep loaded)",
    ),
    fromEnv: identity,
    meaning: "How long Ollama keeps a native job's model loaded (keep_alive); empty = Ollama's",
    userOnly: true,
  }),
  field({
    key: "claudeTools",
    env: ["OLLAMA_MCP_CLAUDE_TOOLS"],
    default: DEFAULT_CLAUDE_TOOLS,
    schema: z.array(z.string().regex(/^[A-Za-z][\w-]*$/, "is a tool name like Bash or Read"))
      .min(1).max(64),
    fromEnv: asList,
    meaning: "Tools a claude delegate gets (--tools); allowed_tools narrows, never widens",
    userOnly: true,
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
