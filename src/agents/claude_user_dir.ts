import { isAbsolute, join } from "node:path";

/**
 * The user's Claude Code config directory, where their own subagents are (`agents/`): Claude
 * Code's `CLAUDE_CONFIG_DIR` when it names one (Claude Code hands its environment to the servers
 * it starts), else `~/.claude`. Its own module: the server's start needs nothing more of agents.
 */
export function userClaudeDir(env: Record<string, string | undefined>, home: string): string {
  const dir = env.CLAUDE_CONFIG_DIR?.trim();
  return dir && isAbsolute(dir) ? dir : join(home, ".claude");
}
