/**
 * Where agents are found, in this order: the user's `<config dir>/agents/<name>.md`, the
 * built-ins, the user's Claude Code subagents (`~/.claude/agents/<name>.md`), then the project's
 * `.ollama-delegate/agents/<name>.md` and its Claude Code subagents (`.claude/agents/<name>.md`;
 * the project is the server's working directory, where the user started Claude Code, as for the
 * project settings file). The first one of a name is in force: the user's files before the
 * project's, and at each level our own format before Claude Code's (issue 31, item 1). A project
 * can come from anyone, so its files only add agents: a cloned repository's `reviewer.md` or
 * `tester.md` cannot take the place of the user's own or a built-in one that the orchestrator
 * calls by that name, and what a project's agent may set is held to project_limits.ts.
 *
 * A project can come from anyone (a cloned repository), so its files are opened without
 * following symlinks at any step: an agent file cannot make the server read, and send to a
 * model as a system prompt, a file from elsewhere (`agents/x.md -> ~/.aws/credentials`).
 */
import { realpath } from "node:fs/promises";
import { join } from "node:path";
import { DelegateError } from "../errors.ts";
import { readCapped } from "../platform/bytes.ts";
import { type BeneathDir, openEntryBeneath } from "../platform/open_beneath/open_beneath.ts";
import {
  type Agent,
  AgentFileError,
  agentNameProblem,
  type AgentSource,
  BUILT_IN_AGENTS,
  MAX_AGENT_FILE_BYTES,
  parseAgent,
} from "./agent.ts";
import { parseClaudeCodeAgent } from "./claude_code_file.ts";

/** The two directories agent files are read from. */
export interface AgentPlaces {
  /** The project directory; its agents are in `.ollama-delegate/agents/`. */
  projectDir: string;
  /** The user's config directory (`~/.ollama-mcp`); its agents are in `agents/`. */
  userConfigDir: string;
  /**
   * The user's Claude Code config directory (`$CLAUDE_CONFIG_DIR`, else `~/.claude`): its
   * subagents in `agents/` are agents too. Absent: Claude Code's files are not read.
   */
  claudeUserDir?: string | undefined;
  /** The user's `claudeAgentModels`: the model a Claude Code subagent runs on. */
  claudeAgentModels?: Readonly<Record<string, string>>;
}

/** An agent file that could not be used, for listings. */
export interface AgentProblem {
  name: string;
  source: AgentSource;
  path: string;
  reason: string;
  /** A valid file not in force: an agent higher up has its name. */
  ignored?: true;
}

const PROJECT_PATH = [".ollama-delegate", "agents"];
const USER_PATH = ["agents"];
const CLAUDE_PROJECT_PATH = [".claude", "agents"];

function codeOf(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException | undefined)?.code;
}

/** Opens `base/parts...` without following a symlink; undefined when a part is missing. */
async function openDirs(base: string, parts: readonly string[]): Promise<BeneathDir | undefined> {
  let real: string;
  try {
    real = await realpath(base);
  } catch (e) {
    if (codeOf(e) === "ENOENT") return undefined;
    throw e;
  }
  const opened = await openEntryBeneath(real, { roots: [real] });
  if (!("dir" in opened)) {
    await opened.file.handle.close();
    return undefined;
  }
  let dir = opened.dir;
  for (const part of parts) {
    let next: BeneathDir;
    try {
      next = await dir.openDir(part);
    } catch (e) {
      await dir.close();
      const code = codeOf(e);
      if (code === "ENOENT") return undefined;
      if (code === "ELOOP" || code === "ENOTDIR") {
        throw new AgentFileError(
          join(dir.real, part),
          0,
          "is a symlink or not a directory; agent directories must be real directories",
        );
      }
      throw e;
    }
    await dir.close();
    dir = next;
  }
  return dir;
}

/** One folder of agent files: whose it is, where, and in which format its files are. */
interface Place {
  source: Extract<AgentSource, "user" | "project">;
  base: string;
  parts: readonly string[];
  /** Claude Code's subagent format (claude_code_file.ts) rather than ours. */
  claudeCode?: { models: Readonly<Record<string, string>> };
}

/**
 * The agent of `name` in `dir`: undefined when there is no such file, or when it is a Claude
 * Code file that says `disabled: true`.
 */
async function readAgentFile(
  dir: BeneathDir,
  name: string,
  place: Place,
): Promise<Agent | undefined> {
  const { source } = place;
  const file = `${name}.md`;
  const path = join(dir.real, file);
  let opened;
  try {
    opened = await dir.openFile(file);
  } catch (e) {
    const code = codeOf(e);
    if (code === "ENOENT") return undefined;
    const reason = code === "ELOOP"
      ? "is a symlink; agent files must be regular files"
      : `cannot be read (${(e as Error).message})`;
    throw new AgentFileError(path, 0, reason);
  }
  let bytes: Uint8Array;
  try {
    bytes = await readCapped(opened.handle, MAX_AGENT_FILE_BYTES);
  } finally {
    await opened.handle.close().catch(() => {});
  }
  if (bytes.length > MAX_AGENT_FILE_BYTES) {
    throw new AgentFileError(path, 0, `is over ${MAX_AGENT_FILE_BYTES} bytes`);
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new AgentFileError(path, 0, "is not UTF-8 text");
  }
  if (place.claudeCode) {
    return parseClaudeCodeAgent(text, { name, source, path, models: place.claudeCode.models });
  }
  return parseAgent(text, { name, source, path });
}

/** The folders of agent files, in order of precedence; the built-ins come after the first. */
function places(p: AgentPlaces): Place[] {
  const claudeCode = { models: p.claudeAgentModels ?? {} };
  return [
    { source: "user", base: p.userConfigDir, parts: USER_PATH },
    ...(p.claudeUserDir
      ? [{ source: "user" as const, base: p.claudeUserDir, parts: USER_PATH, claudeCode }]
      : []),
    { source: "project", base: p.projectDir, parts: PROJECT_PATH },
    // Only where Claude Code's own files are read at all (a user's dir is known).
    ...(p.claudeUserDir
      ? [{ source: "project" as const, base: p.projectDir, parts: CLAUDE_PROJECT_PATH, claudeCode }]
      : []),
  ];
}

/** Where a place's files are, for messages: `~/.claude/agents`, `.ollama-delegate/agents`. */
export function placeLabel(agent: Pick<Agent, "source" | "origin">): string {
  if (agent.source === "built-in") return "built-in";
  if (agent.origin === "claude-code") {
    return agent.source === "user" ? "~/.claude/agents" : ".claude/agents";
  }
  return agent.source === "user" ? "~/.ollama-mcp/agents" : ".ollama-delegate/agents";
}

const builtIn = (name: string) => BUILT_IN_AGENTS.find((a) => a.name === name);

/**
 * The agent called `name`: the user's file, else a built-in, else the project's file;
 * undefined when there is none. Throws AgentFileError for a file that exists and is not a
 * valid agent (a broken file never falls through to one further down: the user meant it).
 */
export async function findAgent(name: string, where: AgentPlaces): Promise<Agent | undefined> {
  const problem = agentNameProblem(name);
  if (problem) throw new RangeError(problem);
  const all = places(where);
  for (const [i, place] of all.entries()) {
    if (i === 1 && builtIn(name)) return builtIn(name);
    const dir = await openDirs(place.base, place.parts);
    if (!dir) continue;
    try {
      const agent = await readAgentFile(dir, name, place);
      if (agent) return agent;
    } finally {
      await dir.close();
    }
  }
  return builtIn(name);
}

/** Every agent in force (one per name) and the files that could not be used. */
export async function listAgents(
  where: AgentPlaces,
): Promise<{ agents: Agent[]; problems: AgentProblem[] }> {
  const byName = new Map<string, Agent>();
  const problems: AgentProblem[] = [];
  for (const [i, place] of places(where).entries()) {
    const { source, base, parts } = place;
    if (i === 1) {
      for (const agent of BUILT_IN_AGENTS) {
        if (!byName.has(agent.name)) byName.set(agent.name, agent);
      }
    }
    let dir: BeneathDir | undefined;
    try {
      dir = await openDirs(base, parts);
    } catch (e) {
      if (!(e instanceof AgentFileError)) throw e;
      problems.push({ name: "", source, path: e.path, reason: e.reason });
      continue;
    }
    if (!dir) continue;
    try {
      const entries = (await dir.list()).filter((e) => e.name.endsWith(".md"))
        .sort((a, b) => a.name.localeCompare(b.name)).slice(0, 200);
      for (const entry of entries) {
        const name = entry.name.slice(0, -3);
        const path = join(dir.real, entry.name);
        if (agentNameProblem(name)) {
          problems.push({ name, source, path, reason: agentNameProblem(name)! });
          continue;
        }
        if (byName.has(name)) {
          problems.push({
            name,
            source,
            path,
            ignored: true,
            reason: shadowedBy(byName.get(name)!, source),
          });
          continue;
        }
        try {
          const agent = await readAgentFile(dir, name, place);
          if (agent) byName.set(name, agent);
        } catch (e) {
          if (!(e instanceof AgentFileError)) throw e;
          problems.push({ name, source, path, reason: e.message });
          // A broken file still shadows the agents of that name further down.
          byName.set(name, { name, source, path, prompt: "" });
        }
      }
    } finally {
      await dir.close();
    }
  }
  const broken = new Set(problems.map((p) => p.path));
  const agents = [...byName.values()].filter((a) => !(a.path && broken.has(a.path)));
  return { agents: agents.sort((a, b) => a.name.localeCompare(b.name)), problems };
}

/** Why a file is not used: the agent of its name that comes first. */
function shadowedBy(first: Agent, source: AgentSource): string {
  const who = first.source === "built-in"
    ? "a built-in agent"
    : `${first.source === "user" ? "your own" : "the project's"} agent in ${placeLabel(first)}`;
  const rule = source === "project" && first.source !== "project"
    ? ", and a project's files only add agents"
    : ", which comes first";
  return `not used: ${who} has that name${rule}`;
}

/** The agent called `name`, or a DelegateError that says what is wrong and what to do. */
export async function requireAgent(name: string, where: AgentPlaces): Promise<Agent> {
  const problem = agentNameProblem(name);
  if (problem) throw new DelegateError(`Cannot use agent: ${problem}`);
  let agent: Agent | undefined;
  try {
    agent = await findAgent(name, where);
  } catch (e) {
    if (!(e instanceof AgentFileError)) throw e;
    throw new DelegateError(
      `Cannot use agent "${name}": ${e.message}. Ask the user to fix the file`,
      { cause: e },
    );
  }
  if (agent) return agent;
  const { agents } = await listAgents(where).catch(() => ({ agents: [] as Agent[] }));
  throw new DelegateError(
    `Cannot use agent "${name}": there is no such agent (known: ${
      agents.map((a) => a.name).join(", ") || "none"
    }). Agent files are ${join(where.projectDir, ...PROJECT_PATH, `${name}.md`)} or ` +
      `${join(where.userConfigDir, ...USER_PATH, `${name}.md`)}` +
      (where.claudeUserDir
        ? `, or Claude Code's ${join(where.claudeUserDir, ...USER_PATH, `${name}.md`)} or ` +
          join(where.projectDir, ...CLAUDE_PROJECT_PATH, `${name}.md`)
        : "") +
      "; see ollama_models",
  );
}
