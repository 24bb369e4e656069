import type { TurnSpec } from "../types.ts";

/**
 * The `claude -p` command line for one turn. Values go in `--flag=value` form so that a
 * value beginning with `-` can never be read as another flag; the prompt is not here at
 * all (it travels on stdin). `--model` is always given: without it Claude Code asks the
 * endpoint for one of Anthropic's model names (weakness 5).
 */
export function claudeArgs(spec: TurnSpec, pinnedSettings: string): string[] {
  const o = spec.options;
  const args = [
    "-p",
    "--output-format=stream-json",
    "--verbose",
    "--strict-mcp-config",
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
