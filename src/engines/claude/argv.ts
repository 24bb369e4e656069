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
 */
export function claudeArgs(spec: TurnSpec, pinnedSettings: string): string[] {
  const o = spec.options;
  const args = [
    "-p",
    "--output-format=stream-json",
    "--verbose",
    "--strict-mcp-config",
    "--setting-sources=",
    `--model=${spec.model}`,
    `--permission-mode=${o.permissionMode}`,
    `--settings=${pinnedSettings}`,
    spec.resume ? `--resume=${spec.sessionId}` : `--session-id=${spec.sessionId}`,
  ];
  for (const rule of o.allowedTools ?? []) args.push(`--allowed-tools=${rule}`);
  for (const rule of o.disallowedTools ?? []) args.push(`--disallowed-tools=${rule}`);
  if (o.appendSystemPrompt !== undefined && o.appendSystemPrompt !== "") {
    args.push(`--append-system-prompt=${o.appendSystemPrompt}`);
  }
  if (o.maxTurns !== undefined) args.push(`--max-turns=${o.maxTurns}`);
  for (const dir of o.addDirs) args.push(`--add-dir=${dir}`);
  return args;
}
