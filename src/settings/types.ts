import type * as is from "../platform/shape.ts";

/**
 * The settings' vocabulary: every setting with its type, and the closed sets of values some
 * take. fields.ts holds the table of their defaults, variables and validation.
 */

/**
 * How eagerly the orchestrator is told to delegate: not at all (ollama_models alone), when the
 * user asks, or on its own judgement. The names are those settings files written for
 * claude-ollama-delegate-mcp already hold.
 */
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

/**
 * The modes in which a delegate changes things: file edits in its directories, and commands
 * without an approval where they are fully confined (the native engine's sandbox, or the jail
 * with Claude Code's sandbox nested in it). Nobody answers a permission prompt in a headless
 * run, so the other modes (`plan`, `manual`/`default`, `dontAsk`) are read-only, but for tools
 * a call's `allowed_tools` names (not in `plan`). One rule on both engines (issue 29).
 */
export const EDITING_MODES: readonly PermissionMode[] = [
  "acceptEdits",
  "auto",
  "bypassPermissions",
];

/** Whether `mode` is one of the EDITING_MODES. */
export function isEditingMode(mode: PermissionMode): boolean {
  return EDITING_MODES.includes(mode);
}

/** Which engine runs a delegated task. */
export const ENGINES = ["claude", "native"] as const;
/** Where a job works: in the given directory, or in its own git worktree and branch. */
export const ISOLATIONS = ["none", "worktree"] as const;
export type Isolation = typeof ISOLATIONS[number];

/** How hard a model may think: `reasoning_effort` (OpenAI-compatible) or `think` (Ollama). */
export const EFFORTS = ["off", "low", "high", "max"] as const;
export type Effort = typeof EFFORTS[number];

/** The tools a claude delegate is given by default (`--tools`); the rest is prompt weight. */
export const DEFAULT_CLAUDE_TOOLS = ["Bash", "Read", "Edit", "Write", "Glob", "Grep"];

/**
 * How a claude delegate's Claude Code runs: `lean` is its minimal mode (`--bare`: no hooks,
 * plugins, memory or CLAUDE.md discovery, a short system prompt of ours, the tools Bash, Read
 * and Edit), small enough for a local model loaded with 4,096 tokens of context; `full` is the
 * whole harness (its own system prompt, every tool in `claudeTools`).
 */
export const CLAUDE_HARNESSES = ["lean", "full"] as const;
export type ClaudeHarness = typeof CLAUDE_HARNESSES[number];
/** The tools Claude Code offers in its minimal mode (`--bare`); `--tools` can only narrow them. */
export const LEAN_CLAUDE_TOOLS = ["Bash", "Read", "Edit"];
export type EngineName = typeof ENGINES[number];

/**
 * How both engines confine a delegate's commands: `on` where this machine can (Linux with
 * bubblewrap, and socat for Claude Code's own sandbox), running them unconfined elsewhere and
 * saying so on every reply; `required` refuses instead; `off` never confines.
 */
export const SANDBOX_SETTINGS = ["on", "required", "off"] as const;
export type SandboxSetting = typeof SANDBOX_SETTINGS[number];

/**
 * Where delegated work may run: `any` place the user's settings reach, or only `local`: this
 * machine or a private network, never a model on Ollama's cloud (settings/residency.ts says
 * exactly what counts). Issue 29, item 4.
 */
export const RESIDENCIES = ["any", "local"] as const;
export type Residency = typeof RESIDENCIES[number];

/** A review finding's severity, most severe first. */
export const SEVERITIES = ["critical", "high", "medium", "low", "info"] as const;
export type Severity = typeof SEVERITIES[number];

/** The longest a review gate may take: under the Stop hook's own timeout in the plugin (900 s). */
export const MAX_GATE_SECONDS = 840;

/**
 * How a backend is spoken to: Ollama (`/api/*` as well), any OpenAI-compatible server
 * (`/v1/chat/completions`), or any Anthropic-compatible one (`/v1/messages`: vLLM,
 * llama-server, LiteLLM), which the claude engine runs on too.
 */
export const BACKEND_KINDS = ["ollama", "openai", "anthropic"] as const;
export type BackendKind = typeof BACKEND_KINDS[number];

/** One endpoint of a pool: its URL, and its own limit when it differs from the backend's. */
export interface EndpointSpec {
  url: string;
  maxConcurrent?: number;
}

/**
 * A named backend: one endpoint (`url`), or a pool of endpoints of the
 * same kind (`urls`), such as one Ollama per GPU. A loaded spec always has `url` (the first
 * endpoint) and, from a file that gave `urls`, every endpoint (endpointsOf).
 */
export interface BackendSpec {
  url: string;
  /** Every endpoint of a pool, in the order given; absent = `url` alone. */
  urls?: EndpointSpec[];
  kind: BackendKind;
  /** The server's environment variable that holds the API key; the key itself is never stored. */
  apiKeyEnv?: string;
  /** Jobs at once on each endpoint, for every server of the user together. */
  maxConcurrent?: number;
}

/** The endpoints of a backend: its pool, or its one URL. */
export function endpointsOf(spec: BackendSpec): EndpointSpec[] {
  return spec.urls && spec.urls.length > 0 ? spec.urls : [{ url: spec.url }];
}

/** Prices per million tokens, in the user's own currency unit. */
export interface Price {
  inputPerMillion: number;
  outputPerMillion: number;
}

/**
 * setTimeout fires at once above this (Node.js's timers documentation: a larger delay becomes
 * 1 ms), so a longer timeout cannot work.
 */
export const MAX_TIMER_MS = 2_147_483_647;

/**
 * Every setting, with its type. The field names are kept as settings files already spell them
 * (those of claude-ollama-delegate-mcp too), so no user's file stops working.
 */
export interface Settings {
  baseUrl: string;
  /** The default Ollama as a pool; empty = baseUrl alone. */
  baseUrls: EndpointSpec[];
  defaultModel: string;
  allowedModels: string[];
  residency: Residency;
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
  defaultIsolation: Isolation;
  backends: Record<string, BackendSpec>;
  /** The backend of a job that names none: one of `backends`; "" = the Ollama at baseUrl. */
  defaultBackend: string;
  sandbox: SandboxSetting;
  pricing: Record<string, Price>;
  retainDays: number;
  workspaceRoots: string[];
  /** Folders delegates' commands may read besides the toolchains on PATH (user scope only). */
  toolchainPaths: string[];
  allowSecretFiles: string[];
  sandboxMaxProcesses: number;
  sandboxMaxMemoryMb: number;
  sandboxMaxFileMb: number;
  sandboxTmpMb: number;
  maxContext: number;
  keepAlive: string;
  claudeTools: string[];
  claudeHarness: ClaudeHarness;
  /** The Claude Code Stop hook's review (`ollama-delegate review --gate`): off unless turned on. */
  reviewGate: "on" | "off";
  reviewGateSeverity: Severity;
  reviewGateAgreement: number;
  reviewGateRounds: number;
  reviewGateModels: string[];
  reviewGateSeconds: number;
  dailyBudgetUsd: Record<string, number>;
  dailyBudgetTokens: Record<string, number>;
  /** Claude Code subagents' models as delegates, by agent name or `model:` alias (issue 31). */
  claudeAgentModels: Record<string, string>;
  /** The orchestrator's price for the savings estimate: an alias or `in/out` (issue 31). */
  orchestratorPrice: string;
  /** Seconds the person has to answer a delegate's permission question; 0 = never ask. */
  permissionAskSeconds: number;
}
export type SettingKey = keyof Settings;

/** What a project value becomes: honoured (perhaps in part), or refused with a reason. */
export type Narrowed<T> =
  | { value: T; leftOut?: string }
  | { refused: string };

/** One setting's contract: its default, environment names, file schema and env parser. */
export interface FieldSpec<K extends SettingKey = SettingKey> {
  key: K;
  /** Environment variables, first match wins. */
  env: readonly string[];
  default: Settings[K];
  /** Validates (and normalises) a value from a file or from `fromEnv`. */
  schema: is.Shape<Settings[K]>;
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
