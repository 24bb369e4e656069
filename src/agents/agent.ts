/**
 * Named agents: a delegate's preset (engine, model, tools, permission mode, effort) and its
 * system prompt, kept in a Markdown file whose front matter holds the preset and whose body is
 * the prompt. This file defines what a valid agent is; lookup.ts finds the files.
 */
import {
  type Effort,
  EFFORTS,
  type EngineName,
  ENGINES,
  PERMISSION_MODES,
  type PermissionMode,
} from "../settings/types.ts";
import { FrontMatterError, listValue, parseFrontMatter } from "./front_matter.ts";

/**
 * Where an agent came from: the user's own folders, a built-in, or the project's folders
 * (lookup.ts says which is in force when several have one name).
 */
export type AgentSource = "project" | "user" | "built-in";

export interface Agent {
  name: string;
  source: AgentSource;
  /** The file it was read from; absent for a built-in. */
  path?: string;
  description?: string;
  engine?: EngineName;
  model?: string;
  /** Tool rules, as allowed_tools takes them (`Read`, `Bash(git *)`). */
  tools?: string[];
  permissionMode?: PermissionMode;
  effort?: Effort;
  /** Commands the server runs after each turn (`verify`), when the call gives none. */
  verify?: string[];
  /** Repair rounds after a failed verification (`verify_rounds`), when the call gives none. */
  verifyRounds?: number;
  /** Models a job moves to, in order, when its model's backend fails (429, 5xx, unreachable). */
  fallback?: string[];
  /** The body: added to the delegate's system prompt. */
  prompt: string;
  /** Set for a Claude Code subagent file (claude_code_file.ts); absent for our own format. */
  origin?: "claude-code";
  /**
   * `tools` choose the tools the delegate is shown and approve nothing (a Claude Code
   * subagent's `tools` says which tools it has; apply.ts).
   */
  toolsShownOnly?: true;
  /** Tool rules the delegate may never use (a Claude Code file's `disallowedTools`). */
  disallowedTools?: string[];
  /** The `model:` a Claude Code file names (`sonnet`, `inherit`, a model id). */
  claudeModel?: string;
  /** `model` came from the user's `claudeAgentModels`: a model the user chose for it. */
  modelFromUserMap?: true;
  /** What of the file is not used, for listings. */
  notes?: string[];
}

/** Agent names are file names too: no path can be built from one. */
export const AGENT_NAME = /^[a-z0-9_-]{1,64}$/;
/** An agent file is read up to this size; a longer one is refused. */
export const MAX_AGENT_FILE_BYTES = 64 * 1024;
/** The body is a system prompt the delegate reads on every request: kept short. */
export const MAX_AGENT_PROMPT_CHARS = 32_000;

/** Why `name` cannot name an agent, or undefined. */
export function agentNameProblem(name: string): string | undefined {
  if (AGENT_NAME.test(name)) return undefined;
  return `"${name.length > 80 ? `${name.slice(0, 80)}…` : name}" is not an agent name ` +
    "(1-64 characters: a-z, 0-9, '-' and '_'; never a path)";
}

/** A problem with an agent file, naming the file and the line. */
export class AgentFileError extends Error {
  override name = "AgentFileError";
  constructor(readonly path: string, readonly line: number, readonly reason: string) {
    super(`${path}${line > 0 ? `:${line}` : ""}: ${reason}`);
  }
}

/**
 * Whether `text` is a single rule, `Name` or `Name(pattern)` with the pattern's parenthesis
 * closing at the end. Claude Code splits one `--allowed-tools` value at spaces and commas
 * outside parentheses, so `Bash(git *) Edit` would be two rules where we saw one, and a call's
 * narrowing would pass the second one on unseen.
 */
function isOneRule(text: string): boolean {
  const m = /^([A-Za-z][\w-]*)(.*)$/s.exec(text);
  if (!m) return false;
  const rest = m[2]!;
  if (rest === "") return true;
  if (!rest.startsWith("(")) return false;
  let depth = 0;
  for (let i = 0; i < rest.length; i++) {
    if (rest[i] === "(") depth++;
    else if (rest[i] === ")" && --depth === 0) return i === rest.length - 1;
  }
  return false;
}

const KEYS = [
  "name",
  "description",
  "engine",
  "model",
  "tools",
  "permission_mode",
  "effort",
  "verify",
  "verify_rounds",
  "fallback",
];

/**
 * `verify`: one command as written, or `[a, b]`: commands separated by commas outside quotes
 * (a command holding a comma is quoted: `["jq '.a, .b' x.json", npm test]`).
 */
export function commandList(value: string): string[] {
  if (!(value.startsWith("[") && value.endsWith("]"))) return [value];
  const inner = value.slice(1, -1);
  const out: string[] = [];
  let quote: string | undefined;
  let start = 0;
  for (let i = 0; i <= inner.length; i++) {
    const c = inner[i];
    if (quote !== undefined) {
      if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") quote = c;
    else if (i === inner.length || c === ",") {
      let item = inner.slice(start, i).trim();
      if (item.length >= 2 && (item[0] === '"' || item[0] === "'") && item.at(-1) === item[0]) {
        item = item.slice(1, -1);
      }
      if (item !== "") out.push(item);
      start = i + 1;
    }
  }
  return out;
}

/** Parses an agent file's text; throws AgentFileError naming `path` and the line. */
export function parseAgent(
  text: string,
  expected: { name: string; source: AgentSource; path: string },
): Agent {
  const { path } = expected;
  let parsed;
  try {
    parsed = parseFrontMatter(text);
  } catch (e) {
    if (e instanceof FrontMatterError) throw new AgentFileError(path, e.line, e.message);
    throw e;
  }
  const agent: Agent = { name: expected.name, source: expected.source, path, prompt: "" };
  for (const { key, value, line } of parsed.entries) {
    const fail = (reason: string): never => {
      throw new AgentFileError(path, line, reason);
    };
    const oneOf = <T extends string>(values: readonly T[]): T =>
      (values as readonly string[]).includes(value)
        ? value as T
        : fail(`${key} "${value}" is not one of ${values.join(", ")}`);
    if (value === "") fail(`${key} has no value`);
    switch (key) {
      case "name":
        if (value !== expected.name) {
          fail(`name "${value}" differs from the file's name "${expected.name}"`);
        }
        break;
      case "description":
        if (value.length > 200) fail("description is over 200 characters");
        agent.description = value;
        break;
      case "engine":
        agent.engine = oneOf(ENGINES);
        break;
      case "model":
        if (value.length > 256 || /\s/.test(value)) fail(`model "${value}" is not a model name`);
        agent.model = value;
        break;
      case "tools": {
        const tools = listValue(value);
        if (tools.length > 100) fail("tools lists over 100 rules");
        for (const t of tools) {
          if (t.length > 500 || !isOneRule(t)) {
            fail(
              `tools: "${t}" is not one tool rule (Name or Name(pattern); separate rules ` +
                "with commas)",
            );
          }
        }
        agent.tools = tools;
        break;
      }
      case "permission_mode":
        agent.permissionMode = oneOf(PERMISSION_MODES);
        break;
      case "effort":
        agent.effort = oneOf(EFFORTS);
        break;
      case "verify": {
        const commands = commandList(value);
        if (commands.length === 0 || commands.length > 10) fail("verify gives 1 to 10 commands");
        if (commands.some((c) => c.length > 4000)) fail("a verify command is over 4000 characters");
        agent.verify = commands;
        break;
      }
      case "fallback": {
        const models = listValue(value);
        if (models.length === 0 || models.length > 5) fail("fallback lists 1 to 5 models");
        const bad = models.find((m) => m.length > 256 || /\s/.test(m) || m === "auto");
        if (bad !== undefined) fail(`fallback: "${bad}" is not a model name`);
        agent.fallback = models;
        break;
      }
      case "verify_rounds":
        if (!/^[0-5]$/.test(value)) {
          fail(`verify_rounds "${value}" is not a whole number from 0 to 5`);
        }
        agent.verifyRounds = Number(value);
        break;
      default:
        fail(`unknown key "${key}" (known: ${KEYS.join(", ")})`);
    }
  }
  if (parsed.body === "") {
    throw new AgentFileError(
      path,
      parsed.bodyLine,
      "the body (the agent's system prompt) is empty",
    );
  }
  if (parsed.body.length > MAX_AGENT_PROMPT_CHARS) {
    throw new AgentFileError(
      path,
      parsed.bodyLine,
      `the body is ${parsed.body.length} characters, over the ${MAX_AGENT_PROMPT_CHARS} a ` +
        "system prompt may have here",
    );
  }
  agent.prompt = parsed.body;
  return agent;
}

/**
 * The reviewer `delegate_review` uses unless a user or project file named `reviewer.md`
 * replaces it. Read-only tools; `dontAsk` rather than `plan`, because Claude Code's plan mode
 * has the model write a plan and ask to leave plan mode, while dontAsk simply refuses whatever
 * was not pre-approved.
 */
export const BUILT_IN_AGENTS: readonly Agent[] = [{
  name: "reviewer",
  source: "built-in",
  description: "Reviews a diff for defects; answers in findings JSON",
  tools: ["Read", "Grep", "Glob"],
  permissionMode: "dontAsk",
  prompt: "You are a careful code reviewer. You review a diff for real defects: bugs, security " +
    "holes, data loss, races, wrong error handling, missing or wrong tests. You report only " +
    "what you can support with evidence from the diff or from the files you read; you never " +
    "invent line numbers. Style preferences are not findings. You change nothing.",
}];
