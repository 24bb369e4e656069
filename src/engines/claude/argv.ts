import type { TurnSpec } from "../types.ts";

/**
 * The `claude -p` command line for one turn. Values go in `--flag=value` form so that a
 * value beginning with `-` can never be read as another flag; the prompt is not here at
 * all (it travels on stdin). `--model` is always given: without it Claude Code asks the
 * endpoint for one of Anthropic's model names.
 *
 * `--setting-sources=` (empty) loads no settings file at all: not the project's
 * `.claude/settings*.json` in the working directory, which an earlier delegate can write and
 * whose hooks (SessionStart, UserPromptSubmit, PreToolUse...) Claude Code would run outside
 * any sandbox, and not the user file in our CLAUDE_CONFIG_DIR either. The pinned
 * `--settings` are the only settings a delegate runs with. This also leaves out the
 * project's CLAUDE.md, skills and agents, which Claude Code loads with the project source.
 *
 * `--tools` names the built-in tools the model is shown (see `delegateTools`). Without it
 * Claude Code sends its whole set (Agent, Skill, Workflow, ScheduleWakeup...), which a delegate
 * does not need and which more than doubles every request: a local model reads all of it on
 * every turn.
 */
export function claudeArgs(
  spec: TurnSpec,
  pinnedSettings: string,
  tools: readonly string[],
  lean = false,
  /** Where the permission questions go (ask_relay.ts): its MCP config and tool name. */
  askRelay?: { config: string; tool: string },
): string[] {
  const o = spec.options;
  const args = [
    "-p",
    // Claude Code's minimal mode and our own short system prompt: about 1k tokens a request
    // instead of 5-7k, so a local model loaded with Ollama's default 4,096 tokens has room.
    ...(lean ? ["--bare", `--system-prompt=${leanSystemPrompt(spec.cwd)}`] : []),
    "--output-format=stream-json",
    "--verbose",
    "--strict-mcp-config",
    "--setting-sources=",
    `--model=${spec.model}`,
    `--permission-mode=${o.permissionMode}`,
    `--settings=${pinnedSettings}`,
    // An empty value is Claude Code's "no built-in tools"; "default" would mean all of them.
    `--tools=${tools.join(",")}`,
    spec.resume ? `--resume=${spec.sessionId}` : `--session-id=${spec.sessionId}`,
  ];
  for (const rule of o.allowedTools ?? []) args.push(`--allowed-tools=${rule}`);
  for (const rule of o.disallowedTools ?? []) args.push(`--disallowed-tools=${rule}`);
  if (o.appendSystemPrompt !== undefined && o.appendSystemPrompt !== "") {
    args.push(`--append-system-prompt=${o.appendSystemPrompt}`);
  }
  if (o.maxTurns !== undefined) args.push(`--max-turns=${o.maxTurns}`);
  for (const dir of o.addDirs) args.push(`--add-dir=${dir}`);
  if (askRelay) {
    // Claude Code calls the tool where it would prompt; the model is never shown it (denied by
    // name, which Claude Code 2.1.332 does not apply to its own prompt calls: measured).
    args.push(
      `--mcp-config=${askRelay.config}`,
      `--permission-prompt-tool=${askRelay.tool}`,
      `--disallowed-tools=${askRelay.tool}`,
    );
  }
  return args;
}

/**
 * The system prompt of a lean delegate (`claudeHarness` "lean"): who it is working for, what
 * its tools are for, and what its report must say. Written for small local models: short,
 * concrete, no policy they cannot act on.
 */
export function leanSystemPrompt(cwd: string): string {
  return "You are a delegate: another coding agent gave you the task in the user message. " +
    `Your working directory is ${cwd}. Use your tools: Bash runs shell commands (also to ` +
    "create files, search and list), Read reads a file, Edit changes part of a file you have " +
    "read (both take absolute paths). Do the task, then check it by running it. End with a " +
    "short report: what you changed, the commands you ran to check it and what they showed. " +
    "Never claim what you did not check.";
}

/**
 * The tool names of permission rules as Claude Code reads them: a rule is `Name` or
 * `Name(specifier)`, and one argument may hold several rules separated by commas or spaces
 * outside parentheses (`"Bash(git *) Edit"`).
 */
export function ruleToolNames(rules: readonly string[]): { name: string; whole: boolean }[] {
  const out: { name: string; whole: boolean }[] = [];
  for (const rule of rules) {
    let depth = 0;
    let start = 0;
    const pieces: string[] = [];
    for (let i = 0; i <= rule.length; i++) {
      const c = rule[i];
      if (c === "(") depth++;
      else if (c === ")") depth = Math.max(0, depth - 1);
      else if (i === rule.length || (depth === 0 && (c === "," || /\s/.test(c!)))) {
        pieces.push(rule.slice(start, i));
        start = i + 1;
      }
    }
    for (const piece of pieces.map((p) => p.trim()).filter((p) => p !== "")) {
      const paren = piece.indexOf("(");
      const name = (paren === -1 ? piece : piece.slice(0, paren)).trim();
      if (name !== "") out.push({ name, whole: paren === -1 });
    }
  }
  return out;
}

/**
 * The built-in tools a delegate is shown (`--tools`): the configured set (`claudeTools`), kept
 * to the tools a call's `allowed_tools` names when it gives that list (the names of its rules:
 * `Bash(git *)` keeps Bash), and without tools that `disallowed_tools` denies as a whole. A call
 * can only narrow the set: a name that is not configured is never added, because the user
 * chose which tools delegates may have at all. Rules with a specifier stay permission rules
 * (`--allowed-tools`/`--disallowed-tools`); Claude Code itself also leaves a wholly denied
 * tool out of its requests.
 */
export function delegateTools(
  configured: readonly string[],
  allowedTools: readonly string[] | undefined,
  disallowedTools: readonly string[] | undefined,
): string[] {
  const allowed = allowedTools === undefined
    ? undefined
    : new Set(ruleToolNames(allowedTools).map((r) => r.name));
  const denied = new Set(
    ruleToolNames(disallowedTools ?? []).filter((r) => r.whole).map((r) => r.name),
  );
  const out: string[] = [];
  for (const name of configured) {
    if (out.includes(name) || denied.has(name)) continue;
    if (allowed !== undefined && !allowed.has(name)) continue;
    out.push(name);
  }
  return out;
}
