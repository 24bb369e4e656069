/**
 * What an engine says about itself on this machine, without running a turn: the program it
 * runs, the environment its delegates get, how their commands are confined, what one request
 * carries, and what `doctor --probe` needs of it. The doctor, the probe and `ollama_models`
 * ask each engine through the engine table (registry.ts `engineFacts`), never its folder.
 */
import type { FailureParts } from "../errors.ts";
import type { Settings } from "../settings/types.ts";

/** What an engine's facts are worked out from. */
export interface FactsSetup {
  settings: Settings;
  /** The environment a server would start in: the source of a delegate's variables. */
  env: Record<string, string | undefined>;
  /** Where a configured binary path is resolved. */
  serverCwd: string;
  /** The OS the answer is for; this one's when absent. */
  platform?: string;
}

/** How an engine's delegates are confined here under the sandbox setting. */
export type SandboxPlan =
  /** Confined as the engine means to be; `tools`: the programs that do it, by name. */
  | { kind: "on"; tools: Readonly<Record<string, string>> }
  /** Less confined or not at all, and the delegates still run: `why` is what replies say. */
  | { kind: "off"; why: string }
  /**
   * The sandbox setting is "required" and cannot be met here: the engine refuses to run, in
   * parts (what is missing, what to do) that a reply words whole and `doctor` apart.
   */
  | { kind: "refused"; problem: FailureParts };

/** What a sandboxed trivial command showed: the sandbox works here, or why not. */
export interface SandboxTrial {
  ok: boolean;
  /** What was found, without advice. */
  detail: string;
  /** It ran, but unconfined (the sandbox cannot be had here and is not required). */
  unconfined?: true;
  /** What the user can do: when it did not run, or ran unconfined. */
  advice?: string;
}

/** What every request of an engine carries before the task. */
export interface RequestSize {
  /** Prompt tokens of every request before the task: system prompt, tools, reminders. */
  promptTokens: number;
  /** The context under which its requests are cut (or refused). */
  requiredContext: number;
  /** What the size depends on in the settings in force ("lean harness, ..."); none if nothing. */
  depends?: string;
  /**
   * The engine asks the backend for the context each request needs, so the context a model
   * is loaded with does not cut its requests (the model's maximum and maxContext still do).
   * Absent: its requests get the context the model runs with, and the engine refuses a model
   * loaded with less than requiredContext.
   */
  contextPerRequest?: true;
}

/** A tool as `doctor --probe` offers it: a name and the JSON Schema of its input. */
export interface ProbeTool {
  name: string;
  parameters: {
    type: "object";
    properties: Record<string, Record<string, unknown>>;
    required?: string[];
  };
}

/** A tool call a model wrote as text, as an engine that runs such calls reads it. */
export interface TextCallFound {
  name: string;
  /** The text format it was written in (hermes, qwen3-coder...). */
  format: string;
  /** Why its arguments cannot be used. */
  error?: string;
}

export interface EngineFacts {
  /** The program each turn runs, for engines that run one (the claude engine's Claude Code). */
  binary?: {
    /** The setting that names it, and what it says. */
    setting: string;
    configured: string;
    /** Where it resolves for a delegate; undefined when it is not there. */
    path: string | undefined;
  };
  /**
   * The environment the program of a delegate of `model` starts with (nothing else of the
   * server's passes), for engines that start one.
   */
  childEnv?(model: string): Record<string, string>;
  /** How delegates' commands are confined here. */
  sandbox: SandboxPlan;
  /** Runs a trivial command confined as a delegate's are: proof that the sandbox works here. */
  trySandbox?(): Promise<SandboxTrial>;
  /**
   * How delegates' commands are held to the sandbox limits here, in words, for engines whose
   * trySandbox does not say it; undefined when nothing holds them.
   */
  limitsText?(): Promise<string>;
  /** One request's size with the settings in force. */
  request: RequestSize;
  /** Calls written as text that the engine would recover and run; undefined when none. */
  textCalls?(text: string, tools: readonly ProbeTool[]): TextCallFound[] | undefined;
  /** Why a call's arguments cannot be used by the tool offered; undefined when they can. */
  checkArguments?(tool: ProbeTool, args: unknown): string | undefined;
}
