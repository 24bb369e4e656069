/**
 * Claude Code's own subagent files (`~/.claude/agents/<name>.md`, a project's
 * `.claude/agents/<name>.md`) read as delegate agents (issue 31, item 1). Their front matter is
 * YAML as Claude Code writes it (`tools: Read, Grep` or a list, a long `description` with `\n`
 * escapes, block scalars, keys of features a delegate does not have), so this reader is
 * tolerant where our own agent format (front_matter.ts) is strict: it reads the keys that mean
 * something to a delegate and says which others it leaves aside.
 *
 * What each key becomes:
 * - the body: the delegate's system prompt, as for our own agents;
 * - `description`: the listing's description (cut to 200 characters);
 * - `tools`: the tools the delegate is SHOWN, mapped onto delegate tools (MultiEdit is Edit, LS
 *   is Glob); in Claude Code a subagent's `tools` says which tools it has, not which run
 *   without asking, so they never become `allowed_tools` (apply.ts `toolsShownOnly`);
 *   tools no delegate has (WebFetch, Task, mcp__...) are left out and said;
 * - `disallowedTools`: added to the call's `disallowed_tools`;
 * - `model`: an alias (`sonnet`, `opus`, `haiku`, `inherit`) or a model id, looked up in the
 *   user's `claudeAgentModels` setting by the agent's name first, then by this value; without
 *   an entry the job runs on the default model;
 * - `permissionMode`: as our `permission_mode`; `effort`: low, high and max as ours
 *   (`xhigh` as `max`, `medium` left to the default);
 * - `disabled: true`: the file is not used.
 */
import { type Effort, PERMISSION_MODES, type PermissionMode } from "../settings/types.ts";
import { type Agent, AgentFileError, type AgentSource, MAX_AGENT_PROMPT_CHARS } from "./agent.ts";

/** Claude Code's tool names that a delegate has under another name. */
const SAME_AS: Readonly<Record<string, string>> = {
  MultiEdit: "Edit",
  NotebookEdit: "Edit",
  NotebookRead: "Read",
  LS: "Glob",
};

/** The tools a delegate of either engine can be shown (settings DEFAULT_CLAUDE_TOOLS). */
const DELEGATE_TOOLS = new Set(["Bash", "Read", "Edit", "Write", "Glob", "Grep"]);

/** Keys read; every other key is left aside, and named when it changes what an agent does. */
const KNOWN = new Set([
  "name",
  "description",
  "tools",
  "disallowedTools",
  "model",
  "permissionMode",
  "effort",
  "disabled",
  "color",
]);
/** Keys whose features a delegate does not have: said in the listing, so nobody counts on them. */
const NOT_FOR_DELEGATES = ["hooks", "mcpServers", "skills", "memory", "isolation"];

const EFFORT_OF: Readonly<Record<string, Effort | undefined>> = {
  low: "low",
  high: "high",
  xhigh: "max",
  max: "max",
};

/** One front matter value: text, or a list of texts. */
type Value = string | string[];

/**
 * The front matter of a Claude Code agent file, as far as it is flat: `key: value` at the left
 * margin, quoted strings (JSON-style escapes in double quotes), `[a, b]` lists, `- item` lists
 * and `|`/`>` block scalars below a key, and indented continuation lines. Nested mappings
 * (`hooks:`) are taken as text and left aside by the caller.
 */
export function readYamlFrontMatter(
  text: string,
  path: string,
): { values: Map<string, { value: Value; line: number }>; body: string; bodyLine: number } {
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  if (lines[0]?.trim() !== "---") {
    throw new AgentFileError(path, 1, 'a Claude Code agent file starts with a "---" line');
  }
  const end = lines.findIndex((l, i) => i > 0 && l.trim() === "---");
  if (end === -1) throw new AgentFileError(path, 0, 'the front matter has no closing "---" line');
  const values = new Map<string, { value: Value; line: number }>();
  let i = 1;
  while (i < end) {
    const raw = lines[i]!;
    if (raw.trim() === "" || raw.trimStart().startsWith("#")) {
      i++;
      continue;
    }
    const m = /^([A-Za-z_][\w-]*)\s*:(?:\s+(.*)|\s*)$/.exec(raw);
    if (!m) {
      throw new AgentFileError(path, i + 1, `"${cut(raw)}" is not a "key: value" line`);
    }
    const key = m[1]!;
    const first = (m[2] ?? "").trim();
    const line = i + 1;
    // The lines below the key that belong to it: indented ones, and blank ones between them.
    let j = i + 1;
    while (j < end && (/^\s/.test(lines[j]!) || lines[j]!.trim() === "")) j++;
    const below = lines.slice(i + 1, j);
    i = j;
    values.set(key, { value: valueOf(first, below, path, line), line });
  }
  return { values, body: lines.slice(end + 1).join("\n").trim(), bodyLine: end + 2 };
}

function valueOf(first: string, below: string[], path: string, line: number): Value {
  const filled = below.filter((l) => l.trim() !== "" && !l.trimStart().startsWith("#"));
  if (/^[|>][+-]?\d*$/.test(first)) {
    const indent = Math.min(...filled.map((l) => l.length - l.trimStart().length));
    const kept = below.map((l) => l.slice(Number.isFinite(indent) ? indent : 0).trimEnd());
    return first.startsWith("|")
      ? kept.join("\n").trim()
      : kept.join(" ").replace(/\s+/g, " ").trim();
  }
  if (first === "" && filled.length > 0 && filled.every((l) => /^\s*-(\s|$)/.test(l))) {
    return filled.map((l) => unquote(l.trim().slice(1).trim(), path, line));
  }
  if (first.startsWith("[") && first.endsWith("]")) {
    return splitList(first.slice(1, -1)).map((s) => unquote(s, path, line));
  }
  const whole = [first, ...filled.map((l) => l.trim())].filter((s) => s !== "").join(" ");
  return unquote(whole, path, line);
}

/** A comma-separated list, commas inside parentheses kept (`Bash(git diff, git log)`). */
function splitList(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let k = 0; k <= text.length; k++) {
    const c = text[k];
    if (c === "(") depth++;
    else if (c === ")") depth = Math.max(0, depth - 1);
    else if (k === text.length || (c === "," && depth === 0)) {
      const item = text.slice(start, k).trim();
      if (item !== "") out.push(item);
      start = k + 1;
    }
  }
  return out;
}

function unquote(text: string, path: string, line: number): string {
  if (text.length >= 2 && text[0] === '"' && text.at(-1) === '"') {
    try {
      return String(JSON.parse(text));
    } catch {
      throw new AgentFileError(path, line, `${cut(text)} is not a valid double-quoted string`);
    }
  }
  if (text.length >= 2 && text[0] === "'" && text.at(-1) === "'") {
    return text.slice(1, -1).replaceAll("''", "'");
  }
  return text;
}

const asList = (value: Value): string[] =>
  Array.isArray(value) ? value.filter((s) => s !== "") : splitList(value);
const asText = (value: Value): string => Array.isArray(value) ? value.join(", ") : value;

/** Where a Claude Code file is read, and the user's map from names and aliases to models. */
export interface ClaudeCodeContext {
  name: string;
  source: Extract<AgentSource, "user" | "project">;
  path: string;
  /** The `claudeAgentModels` setting: agent names and `model:` values to allowed models. */
  models: Readonly<Record<string, string>>;
}

/**
 * A Claude Code agent file's text as one of our agents, or undefined when the file says
 * `disabled: true`; throws AgentFileError for a file that cannot be read as an agent.
 */
export function parseClaudeCodeAgent(text: string, at: ClaudeCodeContext): Agent | undefined {
  const { values, body, bodyLine } = readYamlFrontMatter(text, at.path);
  const get = (key: string) => values.get(key)?.value;
  if (/^true$/i.test(asText(get("disabled") ?? ""))) return undefined;
  const agent: Agent = {
    name: at.name,
    source: at.source,
    path: at.path,
    origin: "claude-code",
    prompt: "",
    notes: [],
  };
  const notes = agent.notes!;
  const description = get("description");
  if (description !== undefined) {
    const flat = asText(description).replace(/\s+/g, " ").trim();
    agent.description = flat.length > 200 ? `${flat.slice(0, 199)}…` : flat;
  }
  const tools = get("tools");
  if (tools !== undefined) {
    const { kept, dropped } = delegateTools(asList(tools));
    agent.tools = kept;
    agent.toolsShownOnly = true;
    if (dropped.length > 0) {
      notes.push(`its tools ${dropped.join(", ")} are not a delegate's and are left out`);
    }
  }
  const denied = get("disallowedTools");
  if (denied !== undefined) {
    agent.disallowedTools = asList(denied).map((t) => SAME_AS[t] ?? t)
      .filter((t) => DELEGATE_TOOLS.has(ruleHead(t)));
  }
  const model = get("model");
  const alias = model === undefined ? undefined : asText(model).trim();
  if (alias) agent.claudeModel = alias;
  const mapped = at.models[at.name] ?? (alias ? at.models[alias] : undefined);
  if (mapped !== undefined) {
    agent.model = mapped;
    agent.modelFromUserMap = true;
  } else if (alias && alias !== "inherit") {
    notes.push(
      `its model "${alias}" has no entry in claudeAgentModels; it runs on the default model`,
    );
  }
  const mode = get("permissionMode");
  if (mode !== undefined) {
    const m = asText(mode).trim();
    if (!(PERMISSION_MODES as readonly string[]).includes(m)) {
      throw new AgentFileError(
        at.path,
        values.get("permissionMode")!.line,
        `permissionMode "${m}" is not one of ${PERMISSION_MODES.join(", ")}`,
      );
    }
    agent.permissionMode = m as PermissionMode;
  }
  const effort = get("effort");
  if (effort !== undefined) {
    const e = EFFORT_OF[asText(effort).trim().toLowerCase()];
    if (e) agent.effort = e;
  }
  const unused = NOT_FOR_DELEGATES.filter((k) => values.has(k));
  if (unused.length > 0) notes.push(`${unused.join(", ")} do not apply to a delegate`);
  const unknown = [...values.keys()].filter((k) => !KNOWN.has(k) && !unused.includes(k));
  if (unknown.length > 0) notes.push(`left aside: ${unknown.join(", ")}`);
  if (body === "") {
    throw new AgentFileError(at.path, bodyLine, "the body (the agent's system prompt) is empty");
  }
  if (body.length > MAX_AGENT_PROMPT_CHARS) {
    throw new AgentFileError(
      at.path,
      bodyLine,
      `the body is ${body.length} characters, over the ${MAX_AGENT_PROMPT_CHARS} a system ` +
        "prompt may have here",
    );
  }
  agent.prompt = body;
  if (notes.length === 0) delete agent.notes;
  return agent;
}

const ruleHead = (rule: string) => /^\s*([A-Za-z][\w-]*)/.exec(rule)?.[1] ?? rule.trim();

/** Claude Code's tool list as delegate tools: the names kept (mapped) and those left out. */
export function delegateTools(tools: readonly string[]): { kept: string[]; dropped: string[] } {
  const kept: string[] = [];
  const dropped: string[] = [];
  for (const tool of tools) {
    const head = ruleHead(tool);
    const name = SAME_AS[head] ?? head;
    if (!DELEGATE_TOOLS.has(name)) {
      if (!dropped.includes(head)) dropped.push(head);
      continue;
    }
    // A pattern stays only on a tool of the same name (`Bash(git *)`); a mapped tool is whole.
    const rule = name === head ? tool.trim() : name;
    if (!kept.includes(rule)) kept.push(rule);
  }
  return { kept, dropped };
}

function cut(text: string): string {
  const flat = text.trim();
  return flat.length > 60 ? `${flat.slice(0, 59)}…` : flat;
}
