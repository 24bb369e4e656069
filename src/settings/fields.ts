/**
 * The settings table: for every setting its default, environment variables, validation, and
 * what a project file may do with it. The values' types are in types.ts and field_values.ts.
 */
import * as is from "../platform/shape.ts";
import {
  asJson,
  asList,
  asNumber,
  asPathList,
  asUrlList,
  backend,
  backendName,
  endpointList,
  identity,
  intIn,
  modelName,
  pathString,
  price,
  url,
} from "./field_values.ts";
import {
  narrowAllowedModels,
  narrowDelegationMode,
  narrowNumber,
  narrowPermissionMode,
  narrowResidency,
} from "./narrow.ts";
import {
  type BackendSpec,
  CLAUDE_HARNESSES,
  DEFAULT_CLAUDE_TOOLS,
  DELEGATION_MODES,
  ENGINES,
  type FieldSpec,
  ISOLATIONS,
  MAX_TIMER_MS,
  PERMISSION_MODES,
  RESIDENCIES,
  SANDBOX_SETTINGS,
  type SettingKey,
  type Settings,
} from "./types.ts";
import { GATE_FIELDS } from "./fields_gate.ts";
import { CLAUDE_CODE_FIELDS } from "./fields_claude_code.ts";

function field<K extends SettingKey>(spec: FieldSpec<K>): FieldSpec<K> {
  return spec;
}

/** The settings table, in the order `config` prints it. */
export const FIELDS = [
  field({
    key: "delegationMode",
    env: ["OLLAMA_MCP_DELEGATION_MODE"],
    default: "ondemand",
    schema: is.enumOf(DELEGATION_MODES),
    fromEnv: (t) => t.trim(),
    meaning: "How eagerly delegation is used: off, ondemand, auto",
    projectNarrow: narrowDelegationMode,
  }),
  field({
    key: "allowedModels",
    env: ["OLLAMA_MCP_ALLOWED_MODELS"],
    default: [],
    schema: is.array(modelName).max(500),
    fromEnv: asList,
    meaning: "Models delegation may use; empty means all",
    projectNarrow: narrowAllowedModels,
  }),
  field({
    key: "defaultModel",
    env: ["OLLAMA_MCP_DEFAULT_MODEL"],
    default: "",
    schema: is.union([is.literal(""), modelName]),
    fromEnv: (t) => t.trim(),
    meaning: "Model when a call names none; empty picks the first allowed cloud model " +
      "(a local one with residency local)",
  }),
  field({
    key: "residency",
    env: ["OLLAMA_MCP_RESIDENCY"],
    default: "any",
    schema: is.enumOf(RESIDENCIES),
    fromEnv: (t) => t.trim(),
    meaning: "Where work may run: any, or local (this machine or a private network: no " +
      "Ollama cloud model, no remote backend)",
    projectNarrow: narrowResidency,
  }),
  field({
    key: "defaultPermissionMode",
    env: ["OLLAMA_MCP_PERMISSION_MODE"],
    default: "acceptEdits",
    schema: is.enumOf(PERMISSION_MODES),
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
    key: "baseUrls",
    env: ["OLLAMA_MCP_BASE_URLS"],
    default: [],
    schema: endpointList,
    fromEnv: asUrlList,
    meaning: "The default Ollama as a pool of endpoints (one per GPU or machine), for both " +
      "engines; empty = baseUrl alone",
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
    meaning: "Delegates running at once per server, and on each endpoint of the default " +
      "Ollama without a limit of its own for all of the user's servers together; more are queued",
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
    schema: is.enumOf(ENGINES),
    fromEnv: (t) => t.trim(),
    meaning: "Engine when a call names none: claude (Claude Code) or native (built-in loop)",
  }),
  field({
    key: "defaultIsolation",
    env: ["OLLAMA_MCP_DEFAULT_ISOLATION"],
    default: "none",
    schema: is.enumOf(ISOLATIONS),
    fromEnv: (t) => t.trim(),
    meaning: "isolation when a call names none: none (work in cwd) or worktree (own git " +
      "worktree and branch)",
  }),
  field({
    key: "backends",
    env: ["OLLAMA_MCP_BACKENDS"],
    default: {},
    schema: is.record(backendName, backend) as unknown as is.Shape<Record<string, BackendSpec>>,
    fromEnv: asJson,
    meaning: "Named endpoints (or pools of them: urls) of kind ollama, openai or anthropic",
    userOnly: true,
  }),
  field({
    key: "defaultBackend",
    env: ["OLLAMA_MCP_DEFAULT_BACKEND"],
    default: "",
    schema: is.union([is.literal(""), backendName]),
    fromEnv: (t) => t.trim(),
    meaning: "Backend of a job that names none: one of backends; empty = the Ollama at baseUrl",
    // It sends every job's prompt and code somewhere: a delegate must not be able to choose it.
    userOnly: true,
  }),
  field({
    key: "sandbox",
    env: ["OLLAMA_MCP_SANDBOX"],
    default: "on",
    schema: is.enumOf(SANDBOX_SETTINGS),
    fromEnv: (t) => t.trim(),
    meaning: "Both engines' commands in bubblewrap: on (unconfined, and said so, where it " +
      "cannot be had), required (refused instead), off",
    userOnly: true,
  }),
  field({
    key: "pricing",
    env: ["OLLAMA_MCP_PRICING"],
    default: {},
    schema: is.record(is.string().min(1).max(256), price),
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
    schema: is.array(pathString).max(100),
    fromEnv: asPathList,
    meaning: "When set, cwd and add_dirs of every job must lie inside one of these directories",
    userOnly: true,
    isPathList: true,
  }),
  field({
    key: "toolchainPaths",
    env: ["OLLAMA_MCP_TOOLCHAIN_PATHS"],
    default: [],
    schema: is.array(pathString).max(32),
    fromEnv: asPathList,
    meaning: "Folders delegates' commands may read (read-only) besides the toolchains found on " +
      "PATH; credential files in them stay hidden",
    // A project file would let a delegate open the user's folders to the next delegate.
    userOnly: true,
    isPathList: true,
  }),
  field({
    key: "allowSecretFiles",
    env: ["OLLAMA_MCP_ALLOW_SECRET_FILES"],
    default: [],
    schema: is.array(is.string().trim().min(1).max(256)).max(100),
    fromEnv: asList,
    meaning: "Secret-looking file names (.env, *.pem...) delegates may read anyway (file tools, " +
      "sandboxed commands, review diffs) and worktrees may carry and commit",
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
    meaning:
      "Memory (MiB) a sandboxed command may use: its processes together where a memory cgroup can be made, else per process",
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
    meaning: "Largest context (tokens) the native engine asks Ollama for; 0 = the model's own, " +
      "believed up to 1,048,576",
    userOnly: true,
  }),
  field({
    key: "keepAlive",
    env: ["OLLAMA_MCP_KEEP_ALIVE"],
    default: "",
    schema: is.string().trim().regex(
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
    schema: is.array(is.string().regex(/^[A-Za-z][\w-]*$/, "is a tool name like Bash or Read"))
      .min(1).max(64),
    fromEnv: asList,
    meaning: "Tools a claude delegate gets (--tools); allowed_tools narrows, never widens",
    userOnly: true,
  }),
  field({
    key: "claudeHarness",
    env: ["OLLAMA_MCP_CLAUDE_HARNESS"],
    default: "lean",
    schema: is.enumOf(CLAUDE_HARNESSES),
    fromEnv: (t) => t.trim(),
    meaning:
      "claude delegates: lean (--bare, Bash/Read/Edit, ~1.2k tokens a request) or full (5-7k)",
    userOnly: true,
  }),
  ...GATE_FIELDS,
  ...CLAUDE_CODE_FIELDS,
  field({
    key: "dailyBudgetUsd",
    env: ["OLLAMA_MCP_DAILY_BUDGET_USD"],
    default: {},
    schema: is.record(backendName, is.number().positive("a budget is more than 0").max(1e9)),
    fromEnv: asJson,
    meaning: 'Cost per UTC day per backend ("ollama" is the default one), by the pricing table; ' +
      "a new job past it is refused",
    // A delegate could lift its own limits through the project file.
    userOnly: true,
  }),
  field({
    key: "dailyBudgetTokens",
    env: ["OLLAMA_MCP_DAILY_BUDGET_TOKENS"],
    default: {},
    schema: is.record(backendName, is.number().int().positive("a budget is more than 0")),
    fromEnv: asJson,
    meaning: "Tokens per UTC day per backend; a new job past it is refused",
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
